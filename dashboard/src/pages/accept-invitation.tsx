/**
 * #/invitations/accept?token=ivt_…: an invitation for the signed-in user. The token (from the
 * invitation's e-mail) is looked up (tenant, role, the invited address masked, expiry); accepting
 * joins the signed-in account to the tenant (its address must be the invited one) and switches to it.
 * The route is in the fragment, so the token never reaches a server's log as part of an address.
 */
import { useAction } from "../action";
import { useClient, useSigned } from "../api";
import { ErrorNotice, Show } from "../components/status";
import { Time } from "../components/readable";
import { useLoad } from "../load";
import { navigate } from "../router";

export function AcceptInvitationPage({ query }: { query: URLSearchParams }) {
  const client = useClient();
  const { me, switchTenant } = useSigned();
  const token = query.get("token") ?? "";
  const invitation = useLoad(async () => {
    if (!token) throw new Error("This address has no invitation token: open the link of the invitation's e-mail.");
    return client.call("lookup_invitation", { query: { token } });
  }, [token]);
  const action = useAction();
  return (
    <>
      <h1>Invitation</h1>
      <Show loaded={invitation} what="the invitation">
        {(found) => (
          <section class="card" aria-labelledby="invitation-title">
            <h2 id="invitation-title">Join {found.tenantName}</h2>
            <dl class="facts">
              <dt>Tenant</dt><dd>{found.tenantName}</dd>
              <dt>Role</dt><dd>{found.role}</dd>
              <dt>For</dt><dd>{found.email}</dd>
              <dt>Expires</dt><dd><Time iso={found.expires_at} /></dd>
            </dl>
            <p>You are signed in as <strong>{me.user?.email}</strong>. The invitation joins that account only if it
              is the invited address{found.accountExists ? "" : "; the invited address has no account yet: open the e-mail's link to create it"}.</p>
            <button type="button" class="primary" disabled={action.busy} onClick={() => void action.run(async () => {
              const joined = await client.call("accept_invitation", { body: { token } });
              await switchTenant(joined.tenant.id);
              navigate("/settings/members");
            })}>{action.busy ? "Accepting…" : `Accept and open ${found.tenantName}`}</button>
            {action.error !== null && <ErrorNotice error={action.error} />}
          </section>
        )}
      </Show>
    </>
  );
}
