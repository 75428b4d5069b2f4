/**
 * #/device?loginId=…&state=…: the approval of a command-line login (`svc login`), the route the
 * login's authUrl names when the service knows the dashboard. It shows what the terminal showed (the
 * verification code) and what it said of itself (client version, platform), and the signed-in user
 * approves it for the tenant chosen in the switcher, or denies it. The state, the proof that this
 * browser opened the authUrl, stays in the fragment: no server sees it but in the approval's body.
 */
import type { components } from "@svc/client";
import { useState } from "preact/hooks";

import { useAction } from "../action";
import { useClient, useSigned } from "../api";
import { ConfirmButton } from "../components/confirm";
import { ErrorNotice, Show } from "../components/status";
import { Time } from "../components/readable";
import { useLoad } from "../load";
import { loginOutcome } from "../team";

type LoginInfo = components["schemas"]["LoginInfo"];

export function DeviceLoginPage({ query }: { query: URLSearchParams }) {
  const client = useClient();
  const loginId = query.get("loginId") ?? "";
  const state = query.get("state") ?? "";
  const info = useLoad(async () => {
    if (!loginId || !state) throw new Error("This address is not a whole login link: open the link the terminal printed.");
    return client.call("cli_info", { query: { loginId } });
  }, [loginId]);
  return (
    <>
      <h1>Command-line login</h1>
      <p class="lead">A terminal asks to sign in as you. Approve it only if you started it and the code below is the one
        the terminal shows.</p>
      <Show loaded={info} what="the login">
        {(login) => <Decision login={login} state={state} decided={info.reload} />}
      </Show>
    </>
  );
}

function Decision({ login, state, decided }: { login: LoginInfo; state: string; decided: () => void }) {
  const client = useClient();
  const { me } = useSigned();
  const action = useAction();
  const [decision, setDecision] = useState<"approved" | "denied" | null>(null);
  const outcome = loginOutcome(login.status, login.reason);
  const body = { loginId: login.loginId, state };
  return (
    <section class="card" aria-labelledby="login-title">
      <h2 id="login-title">Verification code</h2>
      <p class="code">{login.verificationCode}</p>
      <dl class="facts">
        <dt>Client version</dt><dd>{login.cliVersion}</dd>
        <dt>Platform</dt><dd>{login.platform}</dd>
        <dt>Started</dt><dd><Time iso={login.created_at} /></dd>
        <dt>Expires</dt><dd><Time iso={login.expires_at} /></dd>
      </dl>
      {outcome ? <p role="status" class={decision === "approved" || login.status !== "expired" ? "success" : "warning"}>{outcome}</p> : (
        <>
          <p>Approving gives the terminal a key of its own for <strong>{me.user?.email}</strong> in
            {" "}<strong>{me.tenant.name}</strong> ({me.tenant.role}), with your role's permissions; it is listed under
            {" "}API keys and can be revoked there. {me.tenants.length > 1 && "Choose another tenant with the switcher above."}</p>
          <div class="row-actions">
            <button type="button" class="primary" disabled={action.busy} onClick={() => void action.run(async () => {
              await client.call("cli_complete", { body });
              setDecision("approved");
              decided();
            })}>Approve</button>
            <ConfirmButton label="Deny" disabled={action.busy}
                           question="Deny this login? The terminal gets no key, and this code can never be approved."
                           onConfirm={() => void action.run(async () => {
                             await client.call("cli_deny", { body });
                             setDecision("denied");
                             decided();
                           })} />
          </div>
        </>
      )}
      {action.error !== null && <ErrorNotice error={action.error} />}
    </section>
  );
}
