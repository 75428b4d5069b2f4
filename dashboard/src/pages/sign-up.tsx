/**
 * Create an account: name, e-mail and password (the API's rule shown before it is broken), sent to
 * the API's registration, then a sign-in with the same address and password, landing on the
 * Overview. The API's field errors stand next to their fields; any other error is shown with its
 * request id. An address that already has an account, with another password, is told neutrally
 * what to do (sign-up.ts says why).
 */
import { useEffect, useState } from "preact/hooks";

import { useAction } from "../action";
import { type Brand, titleOf } from "../brand";
import { BrandMark } from "../components/brand-mark";
import { ForgotPasswordLink } from "../components/forgot-password";
import { ErrorNotice } from "../components/status";
import { FORGOT_PASSWORD_PATH, SIGNED_OUT } from "../places";
import {
  PASSWORD_MAX, PASSWORD_MIN, PASSWORD_RULE, passwordProgress, type SignUpField, type SignUpOutcome, signUp, splitFieldErrors,
} from "../sign-up";

export interface Registration {
  name: string;
  email: string;
  password: string;
}

export function SignUp({ brand, email, setEmail, register, signIn, forgotPasswordPath = FORGOT_PASSWORD_PATH }: {
  brand: Brand;
  /** The address, kept with the sign-in page's (following "Sign in" keeps it typed). */
  email: string;
  setEmail: (email: string) => void;
  register: (body: Registration) => Promise<unknown>;
  /** Sign in and open the signed-in app (on the Overview). */
  signIn: (email: string, password: string) => Promise<void>;
  /** The password reset's page (places.ts), offered when the address may have an account. */
  forgotPasswordPath?: string | null;
}) {
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const [fields, setFields] = useState<Partial<Record<SignUpField, string>>>({});
  const [outcome, setOutcome] = useState<SignUpOutcome | null>(null);
  const action = useAction();
  useEffect(() => { document.title = titleOf(brand, SIGNED_OUT.signUp.title); }, [brand]);
  const progress = passwordProgress(password);
  const edited = (field: SignUpField) => {
    if (fields[field]) setFields({ ...fields, [field]: undefined });
    setOutcome(null);
  };
  const rest = outcome?.kind === "failed" ? splitFieldErrors(outcome.error).rest : null;
  const field = (id: SignUpField) => ({
    id: `sign-up-${id}`,
    "aria-invalid": fields[id] ? true : undefined,
  });
  return (
    <main class="sign-in" id="main">
      <p class="brand"><BrandMark brand={brand} /></p>
      <h1>Create an account</h1>
      <p class="muted">Your account comes with a workspace of its own, which you own, on the free plan.</p>
      <form onSubmit={(event) => {
        event.preventDefault();
        setOutcome(null);
        void action.run(async () => {
          const result = await signUp(() => register({ name, email, password }), () => signIn(email, password));
          if (result.kind === "signed-in") return;   // the app shows the Overview
          if (result.kind === "failed") setFields(splitFieldErrors(result.error).fields);
          setOutcome(result);
        });
      }}>
        <label for="sign-up-name">Name</label>
        <input {...field("name")} autocomplete="name" required maxLength={200} value={name}
               aria-describedby="sign-up-name-error"
               onInput={(e) => { setName(e.currentTarget.value); edited("name"); }} />
        <p id="sign-up-name-error" class="field-error">{fields.name}</p>

        <label for="sign-up-email">E-mail</label>
        <input {...field("email")} type="email" autocomplete="email" required maxLength={254} value={email}
               aria-describedby="sign-up-email-error"
               onInput={(e) => { setEmail(e.currentTarget.value); edited("email"); }} />
        <p id="sign-up-email-error" class="field-error">{fields.email}</p>

        <label for="sign-up-password">Password</label>
        <p id="sign-up-password-rule" class="muted">{PASSWORD_RULE}</p>
        <input {...field("password")} type="password" autocomplete="new-password" required minLength={PASSWORD_MIN}
               maxLength={PASSWORD_MAX} value={password}
               aria-describedby="sign-up-password-rule sign-up-password-progress sign-up-password-error"
               onInput={(e) => { setPassword(e.currentTarget.value); edited("password"); }} />
        <p id="sign-up-password-progress" class={progress.met ? "success" : "muted"}>
          {progress.text}</p>
        <p id="sign-up-password-error" class="field-error">{fields.password}</p>

        <button type="submit" class="primary" disabled={action.busy}>
          {action.busy ? "Creating the account…" : "Create account"}</button>
      </form>
      {outcome?.kind === "may-have-account" && <MayHaveAccount email={email} forgotPasswordPath={forgotPasswordPath} />}
      {rest != null && <ErrorNotice error={rest} />}
      <p>Already have an account? <a href={`#${SIGNED_OUT.signIn.path}`}>Sign in</a></p>
    </main>
  );
}

/** The address may already have an account (the API does not say, nor does this): what to do. */
function MayHaveAccount({ email, forgotPasswordPath }: { email: string; forgotPasswordPath: string | null }) {
  return (
    <div class="warning" role="alert" data-testid="may-have-account">
      <p><strong>You could not be signed in with this address and password.</strong></p>
      <p>If you already have an account with {email}, <a href={`#${SIGNED_OUT.signIn.path}`}>sign in</a> with its
        password{forgotPasswordPath
          ? <>, or <ForgotPasswordLink path={forgotPasswordPath}>reset the password</ForgotPasswordLink> if you have
            forgotten it</> : ""}.
        If not, check the address and the password, and try again.</p>
    </div>
  );
}
