/**
 * Settings → Members: the tenant's members (change a role, remove, leave, transfer the ownership)
 * and its invitations (invite by e-mail with a role, resend, revoke). The page offers what the
 * caller's role allows (team.ts); the service's refusals (the last owner, a race) are shown as it
 * words them.
 */
import type { components } from "@svc/client";
import { useState } from "preact/hooks";

import { useAction } from "../action";
import { useClient, useSigned } from "../api";
import { ConfirmButton } from "../components/confirm";
import { Empty, ErrorNotice, Show } from "../components/status";
import { when } from "../format";
import { collect, useLoad } from "../load";
import { grantableRoles, invitationActions, memberActions, type Role, type Viewer } from "../team";
import { TableWrap } from "../components/table-wrap";

type Member = components["schemas"]["Member"];
type Invitation = components["schemas"]["Invitation"];

function useViewer(): Viewer {
  const { me } = useSigned();
  return { userId: me.user?.id, role: me.tenant.role, scopes: me.scopes };
}

export function MembersPage() {
  const client = useClient();
  const viewer = useViewer();
  const members = useLoad(() => collect(client.members.iterate()));
  const mayInvite = grantableRoles(viewer).length > 0;
  const invitations = useLoad(() => collect(client.invitations.iterate()));
  return (
    <>
      <h1>Members</h1>
      <p class="lead">The people of this tenant and their roles. Owners hold every permission; admins run the tenant
        but its billing; members work in it. A tenant always keeps at least one owner.</p>
      <h2>People</h2>
      <Show loaded={members} what="the members">
        {(items) => items.length === 0 ? <Empty>No members.</Empty> : (
          <TableWrap label={"Members"}>
            <table class="stack">
              <thead><tr><th scope="col">Name</th><th scope="col">E-mail</th><th scope="col">Role</th>
                <th scope="col">Joined</th><th scope="col">Actions</th></tr></thead>
              <tbody>
                {items.map((member) => <MemberRow key={member.userId} member={member} changed={members.reload} />)}
              </tbody>
            </table>
          </TableWrap>
        )}
      </Show>
      {mayInvite && <Invite invited={invitations.reload} />}
      <h2>Invitations</h2>
      <Show loaded={invitations} what="the invitations">
        {(items) => items.length === 0 ? <Empty>No invitations yet.</Empty> : (
          <TableWrap label={"Invitations"}>
            <table class="stack">
              <thead><tr><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Status</th>
                <th scope="col">Sent</th><th scope="col">Expires</th><th scope="col">Actions</th></tr></thead>
              <tbody>
                {items.map((invitation) => <InvitationRow key={invitation.id} invitation={invitation} mayInvite={mayInvite}
                                                          changed={invitations.reload} />)}
              </tbody>
            </table>
          </TableWrap>
        )}
      </Show>
    </>
  );
}

function MemberRow({ member, changed }: { member: Member; changed: () => void }) {
  const client = useClient();
  const signed = useSigned();
  const viewer = useViewer();
  const action = useAction();
  const [role, setRole] = useState<Role>(member.role);
  const allowed = memberActions(viewer, member);
  const who = member.name || member.email || member.userId;
  // A change that takes scopes from the caller ends their sign-ins into the tenant: reading `me`
  // again then finds the session over and the app asks to sign in again.
  const afterOwnChange = () => signed.reload().catch(() => undefined);
  return (
    <tr>
      <th scope="row">{member.name || "—"}{member.userId === viewer.userId && <span class="muted"> (you)</span>}</th>
      <td data-label="E-mail">{member.email ?? "—"}</td>
      <td data-label="Role"><span class="badge">{member.role}</span></td>
      <td data-label="Joined">{when(member.joined_at)}</td>
      <td><div class="row-actions">
        {allowed.roles.length > 0 && (
          <form class="row-actions" onSubmit={(event) => {
            event.preventDefault();
            void action.run(async () => { await client.members.changeRole(member.userId, { role }); changed(); });
          }}>
            <label class="visually-hidden" for={`role-${member.userId}`}>Role of {who}</label>
            <select id={`role-${member.userId}`} value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
              {allowed.roles.map((r) => <option key={r} value={r}>{r}</option>)}
            </select>
            <button type="submit" disabled={action.busy || role === member.role}>Change role</button>
          </form>
        )}
        {allowed.transfer && (
          <ConfirmButton label="Make owner" disabled={action.busy}
                         question={`Transfer the ownership to ${who}? They become an owner and you an admin; your sign-ins into this tenant end and you sign in again.`}
                         onConfirm={() => void action.run(async () => {
                           await client.call("transfer_ownership", { body: { userId: member.userId } });
                           changed();
                           await afterOwnChange();
                         })} />
        )}
        {allowed.remove && (
          <ConfirmButton label="Remove" disabled={action.busy}
                         question={`Remove ${who} from the tenant? Their sign-ins into it and their command-line keys end at once; keys they made for the tenant keep working.`}
                         onConfirm={() => void action.run(async () => { await client.members.remove(member.userId); changed(); })} />
        )}
        {allowed.leave && (
          <ConfirmButton label="Leave tenant" disabled={action.busy}
                         question="Leave this tenant? You lose access to it at once and are signed out; only a new invitation brings you back."
                         onConfirm={() => void action.run(async () => {
                           await client.members.leave();
                           await signed.signOut();
                         })} />
        )}
        {action.error !== null && <ErrorNotice error={action.error} />}
      </div></td>
    </tr>
  );
}

function Invite({ invited }: { invited: () => void }) {
  const client = useClient();
  const viewer = useViewer();
  const action = useAction();
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("member");
  const [sent, setSent] = useState("");
  return (
    <section class="card" aria-labelledby="invite-title">
      <h2 id="invite-title">Invite someone</h2>
      <p class="muted">They get an e-mail with a link that works for 7 days, for that address only. An invitation takes a
        seat of the plan until it is accepted, revoked or expires.</p>
      <form onSubmit={(event) => {
        event.preventDefault();
        setSent("");
        void action.run(async () => {
          const made = await client.invitations.create({ email, role });
          setEmail("");
          setSent(`Invitation sent to ${made.email}.`);
          invited();
        }).then((ok) => { if (!ok) invited(); });   // a 503 (e-mail not sent) keeps the invitation: show it
      }}>
        <div class="fields">
          <label>E-mail<input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} /></label>
          <label>Role<select value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
            {grantableRoles(viewer).map((r) => <option key={r} value={r}>{r}</option>)}</select></label>
        </div>
        <button type="submit" class="primary" disabled={action.busy}>{action.busy ? "Inviting…" : "Invite"}</button>
      </form>
      <p role="status" class="success">{sent}</p>
      {action.error !== null && <ErrorNotice error={action.error} />}
    </section>
  );
}

function InvitationRow({ invitation, mayInvite, changed }: { invitation: Invitation; mayInvite: boolean;
                                                             changed: () => void }) {
  const client = useClient();
  const action = useAction();
  const [note, setNote] = useState("");
  const allowed = invitationActions(invitation.status, mayInvite);
  return (
    <tr>
      <th scope="row">{invitation.email}</th>
      <td data-label="Role">{invitation.role}</td>
      <td data-label="Status"><span class={`badge ${invitation.status}`}>{invitation.status}</span></td>
      <td data-label="Sent">{when(invitation.created_at)}</td>
      <td data-label="Expires">{invitation.status === "pending" ? when(invitation.expires_at) : "—"}</td>
      <td><div class="row-actions">
        {allowed.resend && (
          <button type="button" disabled={action.busy} onClick={() => {
            setNote("");
            void action.run(async () => {
              await client.invitations.resend(invitation.id);
              setNote("Sent again: the earlier link no longer works.");
              changed();
            });
          }}>Resend</button>
        )}
        {allowed.revoke && (
          <ConfirmButton label="Revoke" disabled={action.busy}
                         question={`Revoke the invitation of ${invitation.email}? Its link stops working and its seat is free again.`}
                         onConfirm={() => void action.run(async () => { await client.invitations.revoke(invitation.id); changed(); })} />
        )}
        {note && <span role="status" class="success">{note}</span>}
        {action.error !== null && <ErrorNotice error={action.error} />}
      </div></td>
    </tr>
  );
}
