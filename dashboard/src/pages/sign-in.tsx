/** Sign in with e-mail and password (the session's login: 401 is a wrong password, 403 a disabled account). */
import { useState } from "preact/hooks";

import { useAction } from "../action";
import { ErrorNotice } from "../components/status";

export function SignIn({ onSignIn }: { onSignIn: (email: string, password: string) => Promise<void> }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const action = useAction();
  return (
    <main class="sign-in" id="main">
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
    </main>
  );
}
