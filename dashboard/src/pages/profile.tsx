/**
 * Profile: the signed-in person's own account, whichever tenant is open. Their name (PATCH /auth/me,
 * shown in the header), their password (the current one and the new one; every other session ends),
 * and their sessions (when each began and was last used, which one is this one), each signed out by
 * itself, or all but this one at once.
 */
import type { SignInSession } from "@svc/client";
import { useState } from "preact/hooks";

import { newPasswordState, passwordChangeProblem, sessionsEnded, sessionsInOrder } from "../account";
import { useAction } from "../action";
import { useClient, useSigned } from "../api";
import { ShortId, Time } from "../components/readable";
import { ErrorNotice, Show } from "../components/status";
import { TableWrap } from "../components/table-wrap";
import { collect, useLoad } from "../load";
import { PASSWORD_MAX, PASSWORD_MIN, PASSWORD_RULE, passwordProgress, splitFieldErrors } from "../sign-up";
import { toast } from "../toast";

export function ProfilePage() {
  const client = useClient();
  const sessions = useLoad(() => collect(client.account.iterateSessions()));
  return (
    <>
      <h1>Profile</h1>
      <p class="lead">Your own account, the same in every tenant you belong to: your name, your password and where
        you are signed in.</p>
      <NameCard />
      <PasswordCard changed={sessions.reload} />
      <section class="card" aria-labelledby="sessions-title">
        <h2 id="sessions-title">Sessions</h2>
        <p class="muted">Each sign-in is a session until it is signed out or unused for 30 days; an open page renews it
          every 15 minutes.</p>
        <Show loaded={sessions} what="the sessions">
          {(items) => <Sessions items={sessionsInOrder(items)} changed={sessions.reload} />}
        </Show>
      </section>
    </>
  );
}

function NameCard() {
  const client = useClient();
  const { me, reload } = useSigned();
  const [name, setName] = useState(me.user?.name ?? "");
  const action = useAction();
  const { fields, rest } = splitFieldErrors(action.error);
  return (
    <section class="card" aria-labelledby="name-title">
      <h2 id="name-title">Name</h2>
      <form onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          const updated = await client.account.updateProfile({ name });
          await reload();
          toast(`Your name is now ${updated.user?.name ?? name}.`);
        });
      }}>
        <label for="profile-name">Name</label>
        <input id="profile-name" autocomplete="name" required maxLength={200} value={name}
               aria-invalid={fields.name ? true : undefined} aria-describedby="profile-name-help profile-name-error"
               onInput={(e) => { setName(e.currentTarget.value); action.clear(); }} />
        <p id="profile-name-help" class="muted">Shown to the members of your tenants and in their logs.</p>
        <p id="profile-name-error" class="field-error">{fields.name}</p>
        <button type="submit" class="primary" disabled={action.busy || name === (me.user?.name ?? "")}>Save name</button>
      </form>
      {rest != null && <ErrorNotice error={rest} />}
    </section>
  );
}

function PasswordCard({ changed }: { changed: () => void }) {
  const client = useClient();
  const [current, setCurrent] = useState("");
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  const action = useAction();
  const progress = passwordProgress(password);
  const state = newPasswordState(password, again);
  const problem = passwordChangeProblem(action.error);
  const { fields, rest } = splitFieldErrors(problem === null ? action.error : null);
  const edited = () => action.clear();
  return (
    <section class="card" aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      <form onSubmit={(event) => {
        event.preventDefault();
        if (!state.ready) return;
        void action.run(async () => {
          const answer = await client.account.changePassword(current, password);
          setCurrent(""); setPassword(""); setAgain("");
          toast(`Your password is changed. ${sessionsEnded(answer.sessionsEnded)}`);
          changed();
        });
      }}>
        <label for="profile-current-password">Current password</label>
        <input id="profile-current-password" type="password" autocomplete="current-password" required value={current}
               aria-invalid={problem ? true : undefined} aria-describedby="profile-current-password-error"
               onInput={(e) => { setCurrent(e.currentTarget.value); edited(); }} />
        <p id="profile-current-password-error" class="field-error" role={problem ? "alert" : undefined}>{problem}</p>
        <label for="profile-new-password">New password</label>
        <p id="profile-new-password-rule" class="muted">{PASSWORD_RULE} Changing it signs out every other session.</p>
        <input id="profile-new-password" type="password" autocomplete="new-password" required minLength={PASSWORD_MIN}
               maxLength={PASSWORD_MAX} value={password} aria-invalid={fields.password ? true : undefined}
               aria-describedby="profile-new-password-rule profile-new-password-progress profile-new-password-error"
               onInput={(e) => { setPassword(e.currentTarget.value); edited(); }} />
        <p id="profile-new-password-progress" class={progress.met ? "success" : "muted"}>{progress.text}</p>
        <p id="profile-new-password-error" class="field-error">{fields.password}</p>
        <label for="profile-new-password-again">New password again</label>
        <input id="profile-new-password-again" type="password" autocomplete="new-password" required value={again}
               aria-invalid={state.mismatch ? true : undefined} aria-describedby="profile-new-password-again-error"
               onInput={(e) => { setAgain(e.currentTarget.value); edited(); }} />
        <p id="profile-new-password-again-error" class="field-error">{state.mismatch}</p>
        <button type="submit" class="primary" disabled={action.busy || !state.ready || current === ""}>
          {action.busy ? "Changing the password…" : "Change password"}</button>
      </form>
      {rest != null && <ErrorNotice error={rest} />}
    </section>
  );
}

function Sessions({ items, changed }: { items: SignInSession[]; changed: () => void }) {
  const client = useClient();
  const { me, signOut } = useSigned();
  const action = useAction();
  const others = items.filter((s) => !s.current).length;
  const tenantName = (id: string) => me.tenants.find((t) => t.id === id)?.name ?? id;
  const end = (session: SignInSession) => {
    if (session.current) { void signOut(); return; }
    void action.run(async () => {
      await client.account.endSession(session.id);
      toast("The session is signed out.");
      changed();
    });
  };
  return (
    <>
      <TableWrap label="Your sessions">
        <table class="stack">
          <thead><tr><th scope="col">Session</th><th scope="col">Tenant</th><th scope="col">Began</th>
            <th scope="col">Last used</th><th scope="col">Actions</th></tr></thead>
          <tbody>
            {items.map((session) => (
              <tr key={session.id} data-testid="session-row">
                <th scope="row"><ShortId id={session.id} />{session.current && <span class="badge">This session</span>}</th>
                <td data-label="Tenant">{tenantName(session.currentTenantId)}</td>
                <td data-label="Began"><Time iso={session.created_at} /></td>
                <td data-label="Last used"><Time iso={session.last_refreshed_at} /></td>
                <td><div class="row-actions">
                  <button type="button" disabled={action.busy} onClick={() => end(session)}
                          aria-label={session.current ? "Sign out of this session" : `Sign out session ${session.id}`}>
                    Sign out</button>
                </div></td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      <button type="button" disabled={action.busy || others === 0} onClick={() => void action.run(async () => {
        const answer = await client.account.endOtherSessions();
        toast(sessionsEnded(answer.sessionsEnded));
        changed();
      })}>Sign out everywhere else</button>
      {action.error !== null && <ErrorNotice error={action.error} />}
    </>
  );
}
