/** Sign in with e-mail and password (the session's login: 401 is a wrong password, 403 a disabled account). */
import { useEffect, useState } from "preact/hooks";

import { useAction } from "../action";
import { type Brand, titleOf } from "../brand";
import { BrandMark } from "../components/brand-mark";
import { ForgotPasswordLink } from "../components/forgot-password";
import { ErrorNotice } from "../components/status";
import { FORGOT_PASSWORD_PATH, SIGNED_OUT } from "../places";

export function SignIn({ brand, email, setEmail, onSignIn }: {
  brand: Brand;
  /** The address, kept with the sign-up page's. */
  email: string;
  setEmail: (email: string) => void;
  onSignIn: (email: string, password: string) => Promise<void> }) {
  const [password, setPassword] = useState("");
  const action = useAction();
  useEffect(() => { document.title = titleOf(brand, SIGNED_OUT.signIn.title); }, [brand]);
  return (
    <main class="sign-in" id="main">
      <p class="brand"><BrandMark brand={brand} /></p>
      <h1>Sign in</h1>
      <form onSubmit={(event) => { event.preventDefault(); void action.run(() => onSignIn(email, password)); }}>
        <label for="email">E-mail</label>
        <input id="email" type="email" autocomplete="username" required value={email}
               onInput={(e) => setEmail(e.currentTarget.value)} />
        <label for="password">Password</label>
        <input id="password" type="password" autocomplete="current-password" required value={password}
               onInput={(e) => setPassword(e.currentTarget.value)} />
        <button type="submit" class="primary" disabled={action.busy}>{action.busy ? "Signing in…" : "Sign in"}</button>
      </form>
      {action.error !== null && <ErrorNotice error={action.error} />}
      {FORGOT_PASSWORD_PATH && <p><ForgotPasswordLink /></p>}
      <p>New here? <a href={`#${SIGNED_OUT.signUp.path}`}>Create an account</a></p>
    </main>
  );
}
