/**
 * Forgot password: the address, sent to the API's forgot-password route, which answers every address
 * alike (it never tells whether an account has it); so does this page, whatever the address: a link
 * was sent if an account has it, and it works for 30 minutes.
 */
import { useEffect, useState } from "preact/hooks";

import { useAction } from "../action";
import { type Brand, titleOf } from "../brand";
import { BrandMark } from "../components/brand-mark";
import { ErrorNotice } from "../components/status";
import { SIGNED_OUT } from "../places";
import { splitFieldErrors } from "../sign-up";

export function ForgotPassword({ brand, email, setEmail, forgot }: {
  brand: Brand;
  /** The address, kept with the sign-in page's. */
  email: string;
  setEmail: (email: string) => void;
  /** Ask for the e-mailed link (Session.forgotPassword). */
  forgot: (email: string) => Promise<unknown>;
}) {
  const [sentTo, setSentTo] = useState<string | null>(null);
  const action = useAction();
  useEffect(() => { document.title = titleOf(brand, SIGNED_OUT.forgotPassword.title); }, [brand]);
  const { fields, rest } = splitFieldErrors(action.error);
  return (
    <main class="sign-in" id="main">
      <p class="brand"><BrandMark brand={brand} /></p>
      <h1>Forgot password</h1>
      {sentTo === null ? (
        <>
          <p class="muted">Give the address you sign in with: we e-mail it a link that sets a new password.</p>
          <form onSubmit={(event) => {
            event.preventDefault();
            void action.run(async () => { await forgot(email); setSentTo(email); });
          }}>
            <label for="forgot-email">E-mail</label>
            <input id="forgot-email" type="email" autocomplete="username" required maxLength={254} value={email}
                   aria-invalid={fields.email ? true : undefined} aria-describedby="forgot-email-error"
                   onInput={(e) => { setEmail(e.currentTarget.value); action.clear(); }} />
            <p id="forgot-email-error" class="field-error">{fields.email}</p>
            <button type="submit" class="primary" disabled={action.busy}>
              {action.busy ? "Sending…" : "Send the link"}</button>
          </form>
          {rest != null && <ErrorNotice error={rest} />}
        </>
      ) : (
        <div class="notice" role="status" data-testid="reset-link-sent">
          <p>If an account has the address {sentTo}, we sent it a link that sets a new password; it works for 30
            minutes.</p>
          <p>Nothing came? Check the address and your spam folder, then ask again.</p>
          <button type="button" onClick={() => setSentTo(null)}>Ask again</button>
        </div>
      )}
      <p><a href={`#${SIGNED_OUT.signIn.path}`}>Back to sign in</a></p>
    </main>
  );
}
