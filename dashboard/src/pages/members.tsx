/**
 * Settings → Members: the tenant's members and its invitations, each list first. Invite someone (owners
 * and admins) opens a dialog (e-mail, role); a member's actions menu changes the role (in a small
 * dialog), hands over the ownership, removes them or leaves the tenant; an invitation's resends or
 * revokes it. Each asks first where it cannot be undone. The page offers what the caller's role
 * allows (team.ts); the service's refusals (the last owner, a race) are shown as it words them.
 */
import type { components } from "@svc/client";
import { useState } from "preact/hooks";

import { useAction } from "../action";
import { useClient, useSigned } from "../api";
import { Confirm } from "../components/confirm";
import { Dialog, DialogButton } from "../components/dialog";
import { ActionsMenu, type MenuItem } from "../components/menu";
import { EmptyState } from "../components/empty-state";
import { ErrorNotice, Show } from "../components/status";
import { Time } from "../components/readable";
import { forgetNames } from "../people";
import { collect, useLoad } from "../load";
import { grantableRoles, invitationActions, memberActions, type Role, type Viewer } from "../team";
import { TableWrap } from "../components/table-wrap";
import { toast } from "../toast";

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
  const membersChanged = () => { forgetNames(); members.reload(); };   // other pages name them anew
  const mayInvite = grantableRoles(viewer).length > 0;
  const invitations = useLoad(() => collect(client.invitations.iterate()));
  return (
    <>
      <div class="page-head">
        <h1>Members</h1>
        {mayInvite && (
          <DialogButton label="Invite someone" title="Invite someone">
            {(close) => <Invite close={close} invited={invitations.reload} />}
          </DialogButton>
        )}
      </div>
      <h2>People</h2>
      <Show loaded={members} what="the members">
        {(items) => items.length === 0 ? (
          <EmptyState title="No members" level={3} tag="Members">
            <p>The people of the tenant and their roles; a tenant's first member is its owner.</p>
          </EmptyState>
        ) : (
          <TableWrap label={"Members"}>
            <table class="stack">
              <thead><tr><th scope="col">Name</th><th scope="col">E-mail</th><th scope="col">Role</th>
                <th scope="col">Joined</th><th scope="col">Actions</th></tr></thead>
              <tbody>
                {items.map((member) => <MemberRow key={member.userId} member={member} changed={membersChanged} />)}
              </tbody>
            </table>
          </TableWrap>
        )}
      </Show>
      <h2>Invitations</h2>
      <Show loaded={invitations} what="the invitations">
        {(items) => items.length === 0 ? (
          <EmptyState title="No invitations yet" level={3} tag="Invitations">
            <p>An invitation asks someone to join the tenant with a role: they get an e-mail whose link works 7 days.</p>
            <p>{mayInvite ? <>Press <strong>Invite someone</strong> above to send the first.</>
              : "Owners and admins invite people."}</p>
          </EmptyState>
        ) : (
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
      <p class="lead">The people of this tenant and their roles. Owners hold every permission; admins run the tenant
        but its billing; members work in it. A tenant always keeps at least one owner.</p>
    </>
  );
}

type Asking = "role" | "transfer" | "remove" | "leave";

function MemberRow({ member, changed }: { member: Member; changed: () => void }) {
  const client = useClient();
  const signed = useSigned();
  const viewer = useViewer();
  const action = useAction();
  const [asking, setAsking] = useState<Asking | null>(null);
  const allowed = memberActions(viewer, member);
  const who = member.name || member.email || member.userId;
  const stopAsking = () => setAsking(null);
  // A change that takes scopes from the caller ends their sign-ins into the tenant: reading `me`
  // again then finds the session over and the app asks to sign in again.
  const afterOwnChange = () => signed.reload().catch(() => undefined);
  const items: MenuItem[] = [
    ...(allowed.roles.length > 0 ? [{ label: "Change role…", onSelect: () => setAsking("role") }] : []),
    ...(allowed.transfer ? [{ label: "Make owner…", onSelect: () => setAsking("transfer") }] : []),
    ...(allowed.remove ? [{ label: "Remove…", danger: true, onSelect: () => setAsking("remove") }] : []),
    ...(allowed.leave ? [{ label: "Leave tenant…", danger: true, onSelect: () => setAsking("leave") }] : []),
  ];
  return (
    <tr>
      <th scope="row">{member.name || "—"}{member.userId === viewer.userId && <span class="muted"> (you)</span>}</th>
      <td data-label="E-mail">{member.email ?? "—"}</td>
      <td data-label="Role"><span class="badge">{member.role}</span></td>
      <td data-label="Joined"><Time iso={member.joined_at} /></td>
      <td><div class="row-actions">
        {items.length > 0 && <ActionsMenu name={who} disabled={action.busy} items={items} />}
        <Dialog open={asking === "role"} title={`Change the role of ${who}`} onClose={stopAsking}>
          <ChangeRole member={member} who={who} roles={allowed.roles} close={stopAsking} changed={changed} />
        </Dialog>
        <Confirm open={asking === "transfer"} label="Make owner" onClose={stopAsking}
                 question={`Transfer the ownership to ${who}? They become an owner and you an admin; your sign-ins into this tenant end and you sign in again.`}
                 onConfirm={() => void action.run(async () => {
                   await client.call("transfer_ownership", { body: { userId: member.userId } });
                   toast(`${who} is now an owner, and you an admin.`);
                   changed();
                   await afterOwnChange();
                 })} />
        <Confirm open={asking === "remove"} label="Remove" onClose={stopAsking}
                 question={`Remove ${who} from the tenant? Their sign-ins into it and their command-line keys end at once; keys they made for the tenant keep working.`}
                 onConfirm={() => void action.run(async () => {
                   await client.members.remove(member.userId);
                   toast(`${who} was removed from the tenant.`);
                   changed();
                 })} />
        <Confirm open={asking === "leave"} label="Leave tenant" onClose={stopAsking}
                 question="Leave this tenant? You lose access to it at once and are signed out; only a new invitation brings you back."
                 onConfirm={() => void action.run(async () => {
                   await client.members.leave();
                   await signed.signOut();
                 })} />
        {action.error !== null && <ErrorNotice error={action.error} />}
      </div></td>
    </tr>
  );
}

/** The role select of one member, in its dialog; a refusal is shown there. */
function ChangeRole({ member, who, roles, close, changed }: { member: Member; who: string; roles: Role[];
                                                             close: () => void; changed: () => void }) {
  const client = useClient();
  const action = useAction();
  const [role, setRole] = useState<Role>(member.role);
  return (
    <form onSubmit={(event) => {
      event.preventDefault();
      void action.run(async () => {
        await client.members.changeRole(member.userId, { role });
        toast(`${who} is now ${/^[aeiou]/.test(role) ? "an" : "a"} ${role}.`);
        changed();
        close();
      });
    }}>
      <label>Role<select value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
        {roles.map((r) => <option key={r} value={r}>{r}</option>)}
      </select></label>
      <div class="actions">
        <button type="button" onClick={close}>Cancel</button>
        <button type="submit" class="primary" disabled={action.busy || role === member.role}>Change role</button>
      </div>
      {action.error !== null && <ErrorNotice error={action.error} />}
    </form>
  );
}

function Invite({ close, invited }: { close: () => void; invited: () => void }) {
  const client = useClient();
  const viewer = useViewer();
  const action = useAction();
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("member");
  return (
    <>
      <p class="muted">They get an e-mail with a link that works for 7 days, for that address only. An invitation takes a
        seat of the plan until it is accepted, revoked or expires.</p>
      <form onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          const made = await client.invitations.create({ email, role });
          toast(`Invitation sent to ${made.email}.`);
          invited();
          close();
        }).then((ok) => { if (!ok) invited(); });   // a 503 (e-mail not sent) keeps the invitation: show it
      }}>
        <div class="fields">
          <label>E-mail<input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} /></label>
          <label>Role<select value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
            {grantableRoles(viewer).map((r) => <option key={r} value={r}>{r}</option>)}</select></label>
        </div>
        <div class="actions">
          <button type="button" onClick={close}>Cancel</button>
          <button type="submit" class="primary" disabled={action.busy}>{action.busy ? "Inviting…" : "Invite"}</button>
        </div>
      </form>
      {action.error !== null && <ErrorNotice error={action.error} />}
    </>
  );
}

function InvitationRow({ invitation, mayInvite, changed }: { invitation: Invitation; mayInvite: boolean;
                                                             changed: () => void }) {
  const client = useClient();
  const action = useAction();
  const [revoking, setRevoking] = useState(false);
  const allowed = invitationActions(invitation.status, mayInvite);
  const items: MenuItem[] = [
    ...(allowed.resend ? [{ label: "Resend", onSelect: () => void action.run(async () => {
      await client.invitations.resend(invitation.id);
      toast(`Invitation to ${invitation.email} sent again: the earlier link no longer works.`);
      changed();
    }) }] : []),
    ...(allowed.revoke ? [{ label: "Revoke…", danger: true, onSelect: () => setRevoking(true) }] : []),
  ];
  return (
    <tr>
      <th scope="row">{invitation.email}</th>
      <td data-label="Role">{invitation.role}</td>
      <td data-label="Status"><span class={`badge ${invitation.status}`}>{invitation.status}</span></td>
      <td data-label="Sent"><Time iso={invitation.created_at} /></td>
      <td data-label="Expires">{invitation.status === "pending" ? <Time iso={invitation.expires_at} /> : "—"}</td>
      <td><div class="row-actions">
        {items.length > 0 && <ActionsMenu name={invitation.email} disabled={action.busy} items={items} />}
        <Confirm open={revoking} label="Revoke" onClose={() => setRevoking(false)}
                 question={`Revoke the invitation of ${invitation.email}? Its link stops working and its seat is free again.`}
                 onConfirm={() => void action.run(async () => {
                   await client.invitations.revoke(invitation.id);
                   toast(`Invitation to ${invitation.email} revoked.`);
                   changed();
                 })} />
        {action.error !== null && <ErrorNotice error={action.error} />}
      </div></td>
    </tr>
  );
}
