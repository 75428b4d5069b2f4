/**
 * Set a new password with the e-mailed link (#/reset-password?token=…): the new password twice, the
 * API's rule shown (sign-up.ts), sent to the reset, which ends every session of the account and answers
 * its address; then a sign-in with that address and the new password, landing on the Overview. A link
 * that no longer works (dead, used, expired) is explained, with the way to ask for a new one.
 */
import { useEffect, useState } from "preact/hooks";

import { newPasswordState, RESET_PROBLEMS, resetProblem } from "../account";
import { useAction } from "../action";
import { type Brand, titleOf } from "../brand";
import { BrandMark } from "../components/brand-mark";
import { ErrorNotice } from "../components/status";
import { FORGOT_PASSWORD_PATH, SIGNED_OUT } from "../places";
import { PASSWORD_MAX, PASSWORD_MIN, PASSWORD_RULE, passwordProgress, splitFieldErrors } from "../sign-up";
import { toast } from "../toast";

export function ResetPassword({ brand, token, reset, signIn }: {
  brand: Brand;
  /** The link's token, or null when the address has none. */
  token: string | null;
  /** Session.resetPassword: answers the account's address. */
  reset: (token: string, password: string) => Promise<{ email: string }>;
  /** Sign in and open the Overview. */
  signIn: (email: string, password: string) => Promise<void>;
}) {
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  const action = useAction();
  useEffect(() => { document.title = titleOf(brand, SIGNED_OUT.resetPassword.title); }, [brand]);
  const progress = passwordProgress(password);
  const state = newPasswordState(password, again);
  const problem = token === null ? "missing" : resetProblem(action.error);
  const { fields, rest } = splitFieldErrors(problem === null ? action.error : null);
  return (
    <main class="sign-in" id="main">
      <p class="brand"><BrandMark brand={brand} /></p>
      <h1>Set a new password</h1>
      {problem !== null ? (
        <div class="warning" role="alert" data-testid="reset-link-problem">
          <p><strong>{problem === "missing" ? "This address carries no reset link: open the link of the e-mail."
            : RESET_PROBLEMS[problem]}</strong></p>
          {problem !== "disabled" && FORGOT_PASSWORD_PATH
            && <p><a href={`#${FORGOT_PASSWORD_PATH}`}>Ask for a new link</a>: only the latest one works.</p>}
        </div>
      ) : (
        <form onSubmit={(event) => {
          event.preventDefault();
          if (!state.ready || token === null) return;
          void action.run(async () => {
            const { email } = await reset(token, password);
            await signIn(email, password);
            toast("Your password is set. Every other session of your account was signed out.");
          });
        }}>
          <p class="muted">Setting it signs you out everywhere, then signs you in here with it.</p>
          <label for="reset-password">New password</label>
          <p id="reset-password-rule" class="muted">{PASSWORD_RULE}</p>
          <input id="reset-password" type="password" autocomplete="new-password" required minLength={PASSWORD_MIN}
                 maxLength={PASSWORD_MAX} value={password} aria-invalid={fields.password ? true : undefined}
                 aria-describedby="reset-password-rule reset-password-progress reset-password-error"
                 onInput={(e) => { setPassword(e.currentTarget.value); action.clear(); }} />
          <p id="reset-password-progress" class={progress.met ? "success" : "muted"}>{progress.text}</p>
          <p id="reset-password-error" class="field-error">{fields.password}</p>
          <label for="reset-password-again">New password again</label>
          <input id="reset-password-again" type="password" autocomplete="new-password" required value={again}
                 aria-invalid={state.mismatch ? true : undefined} aria-describedby="reset-password-again-error"
                 onInput={(e) => { setAgain(e.currentTarget.value); action.clear(); }} />
          <p id="reset-password-again-error" class="field-error">{state.mismatch}</p>
          <button type="submit" class="primary" disabled={action.busy || !state.ready}>
            {action.busy ? "Setting the password…" : "Set the password"}</button>
        </form>
      )}
      {rest != null && <ErrorNotice error={rest} />}
      <p><a href={`#${SIGNED_OUT.signIn.path}`}>Back to sign in</a></p>
    </main>
  );
}
