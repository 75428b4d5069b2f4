/**
 * Settings → Security → API keys: the tenant's keys with their last use and values (after a rotation,
 * the new one and each earlier one still working, with its end); Create key opens a dialog (name,
 * type, environment, scopes) that shows the value once with Copy; each key's actions menu rotates it
 * (the overlap asked in a dialog, the new value shown there once) or revokes it (asked first).
 */
import type { ApiKey, components } from "@svc/client";
import { useState } from "preact/hooks";

import { useAction } from "../action";
import { useClient, useSigned } from "../api";
import { Confirm } from "../components/confirm";
import { Dialog, DialogButton } from "../components/dialog";
import { ActionsMenu } from "../components/menu";
import { NewValue, OverlapForm } from "../components/rotate";
import { EmptyState } from "../components/empty-state";
import { ErrorNotice, Show } from "../components/status";
import { Person, Time } from "../components/readable";
import { utc, when } from "../format";
import { collect, useLoad } from "../load";
import { TableWrap } from "../components/table-wrap";
import { toast } from "../toast";

type KeyCreate = components["schemas"]["ApiKeyCreate"];
const TYPES: { value: KeyCreate["type"]; label: string }[] = [
  { value: "sdk", label: "SDK (a backend)" }, { value: "ci", label: "CI" }, { value: "cli", label: "CLI" },
  { value: "int", label: "Integration" }, { value: "mkt", label: "Marketplace" },
];
const ENVIRONMENTS: KeyCreate["environment"][] = ["Development", "Staging", "Production"];
const OVERLAPS = [
  { seconds: 0, label: "none: the old value stops now" }, { seconds: 3600, label: "1 hour" },
  { seconds: 86400, label: "24 hours" }, { seconds: 604800, label: "7 days" },
];

export function ApiKeysPage() {
  const client = useClient();
  const keys = useLoad(() => collect(client.apiKeys.iterate()));
  return (
    <>
      <div class="page-head">
        <h1>API keys</h1>
        <DialogButton label="Create key" title="Create a key" wide>
          {(close) => <CreateKey close={close} created={keys.reload} />}
        </DialogButton>
      </div>
      <Show loaded={keys} what="the keys">
        {(items) => items.length === 0 ? (
          <EmptyState title="No keys yet" tag="API keys">
            <p>A key lets a backend, CI or a script call the API as this tenant, with the scopes you choose.</p>
            <p>Press <strong>Create key</strong> above to make the first: its value is shown once, so copy it then.</p>
          </EmptyState>
        ) : (
          <TableWrap label={"Keys"}>
            <table class="stack">
              <thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Environment</th>
                <th scope="col">Value</th><th scope="col">Status</th><th scope="col">Last used</th>
                <th scope="col">Actions</th></tr></thead>
              <tbody>
                {items.map((key) => <KeyRow key={key.id} apiKey={key} changed={keys.reload} />)}
              </tbody>
            </table>
          </TableWrap>
        )}
      </Show>
      <p class="lead">Keys let your backends, CI and tools call the API. A key's value is shown once, when it is
        created or rotated; the service keeps only its hash.</p>
    </>
  );
}

/** A key's values: the current one, then each earlier one still working, with its end. */
function Values({ apiKey }: { apiKey: ApiKey }) {
  const earlier = apiKey.earlierValues ?? [];
  if (earlier.length === 0) return <code>{apiKey.hint}</code>;
  return (
    <ul class="plain values">
      <li><code>{apiKey.hint}</code> <span class="muted">new</span></li>
      {earlier.map((value) => (
        <li key={value.worksUntil + (value.hint ?? "")}>
          <code>{value.hint ?? "an earlier value"}</code>{" "}
          <span class="muted">old, works until <time dateTime={value.worksUntil} title={utc(value.worksUntil)}>
            {when(value.worksUntil)}</time> (<Time iso={value.worksUntil} />)</span>
        </li>
      ))}
    </ul>
  );
}

function KeyRow({ apiKey, changed }: { apiKey: ApiKey; changed: () => void }) {
  const client = useClient();
  const action = useAction();
  const [asking, setAsking] = useState<"rotate" | "revoke" | null>(null);
  const active = apiKey.status === "active";
  return (
    <tr>
      <th scope="row">{apiKey.name}<div class="muted">{apiKey.scopes.length} {apiKey.scopes.length === 1 ? "scope" : "scopes"}, made by <Person id={apiKey.createdBy} /></div></th>
      <td data-label="Type">{apiKey.type}</td>
      <td data-label="Environment">{apiKey.environment}</td>
      <td data-label="Value"><Values apiKey={apiKey} /></td>
      <td data-label="Status"><span class={`badge ${apiKey.status}`}>{apiKey.status}</span></td>
      <td data-label="Last used"><Time iso={apiKey.last_used_at} />
        {apiKey.lastUsedIp && <div class="muted">from {apiKey.lastUsedIp}</div>}</td>
      <td><div class="row-actions">
        {active && (
          <>
            <ActionsMenu name={apiKey.name} disabled={action.busy} items={[
              { label: "Rotate…", onSelect: () => setAsking("rotate") },
              { label: "Revoke…", danger: true, onSelect: () => setAsking("revoke") },
            ]} />
            <Dialog open={asking === "rotate"} title={`Rotate ${apiKey.name}`} onClose={() => setAsking(null)}>
              <RotateKey apiKey={apiKey} rotated={changed} close={() => setAsking(null)} />
            </Dialog>
            <Confirm open={asking === "revoke"} label="Revoke" onClose={() => setAsking(null)}
                     question={`Revoke ${apiKey.name}? Every value of it stops working at once; this cannot be undone.`}
                     onConfirm={() => void action.run(async () => {
                       await client.apiKeys.revoke(apiKey.id);
                       toast(`Key ${apiKey.name} revoked.`);
                       changed();
                     })} />
          </>
        )}
        {action.error !== null && <ErrorNotice error={action.error} />}
      </div></td>
    </tr>
  );
}

/** The rotation's question (how long the current value keeps working), then its new value, once. */
function RotateKey({ apiKey, rotated, close }: { apiKey: ApiKey; rotated: () => void; close: () => void }) {
  const client = useClient();
  const [made, setMade] = useState<{ value: string; earlierUntil: string | null } | null>(null);
  if (made) {
    return (
      <NewValue value={made.value} label={`The new value of ${apiKey.name}`} close={close}>
        The key was rotated. {made.earlierUntil
          ? <>The earlier value works until {when(made.earlierUntil)}; move your callers to the new one before then.</>
          : <>The earlier value no longer works.</>} Copy the new value now: it is not shown again.
      </NewValue>
    );
  }
  return (
    <OverlapForm question="Overlap (how long the current value keeps working)" options={OVERLAPS} submit="Rotate"
                 close={close} rotate={async (overlapSeconds) => {
                   const answer = await client.call("rotate_key", { path: { id: apiKey.id }, body: { overlapSeconds } });
                   const ends = (answer.earlierValues ?? []).map((v) => v.worksUntil).sort();
                   setMade({ value: answer.key, earlierUntil: ends.length ? ends[ends.length - 1]! : null });
                   rotated();
                 }}
                 explain={<>A new value is made; the current one keeps working for the overlap chosen, so your callers
                   can move to the new one. After a leak, choose none.</>} />
  );
}

function CreateKey({ close, created }: { close: () => void; created: () => void }) {
  const client = useClient();
  const { me } = useSigned();
  const action = useAction();
  const [name, setName] = useState("");
  const [type, setType] = useState<KeyCreate["type"]>("sdk");
  const [environment, setEnvironment] = useState<KeyCreate["environment"]>("Development");
  const [scopes, setScopes] = useState<string[]>([]);
  const [expires, setExpires] = useState("");
  const [made, setMade] = useState<{ name: string; value: string } | null>(null);
  if (made) {
    return (
      <NewValue value={made.value} label={`The value of ${made.name}`} close={close}>
        The key {made.name} is ready. Copy its value now: it is not shown again.
      </NewValue>
    );
  }
  return (
    <>
      <form onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          const body: KeyCreate = { name, type, environment };
          if (scopes.length) body.scopes = scopes as NonNullable<KeyCreate["scopes"]>;
          if (expires) body.expiresInDays = Number(expires);
          const key = await client.apiKeys.create(body);
          setMade({ name: key.name, value: key.key });
          created();
        });
      }}>
        <div class="fields">
          <label>Name<input required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
          <label>Type<select value={type} onChange={(e) => setType(e.currentTarget.value as KeyCreate["type"])}>
            {TYPES.map((t) => <option key={t.value} value={t.value}>{t.label}</option>)}</select></label>
          <label>Environment<select value={environment}
                                    onChange={(e) => setEnvironment(e.currentTarget.value as KeyCreate["environment"])}>
            {ENVIRONMENTS.map((env) => <option key={env}>{env}</option>)}</select></label>
          <label>Expires after (days, empty: never)<input type="number" min={1} max={730} value={expires}
                                                         onInput={(e) => setExpires(e.currentTarget.value)} /></label>
        </div>
        <fieldset>
          <legend>Scopes (none chosen: every scope you hold)</legend>
          <div class="scopes">
            {me.scopes.map((scope) => (
              <label key={scope} class="check"><input type="checkbox" checked={scopes.includes(scope)}
                onChange={(e) => setScopes(e.currentTarget.checked ? [...scopes, scope] : scopes.filter((s) => s !== scope))} />
                {scope}</label>
            ))}
          </div>
        </fieldset>
        <div class="actions">
          <button type="button" onClick={close}>Cancel</button>
          <button type="submit" class="primary" disabled={action.busy}>{action.busy ? "Creating…" : "Create key"}</button>
        </div>
      </form>
      {action.error !== null && <ErrorNotice error={action.error} />}
    </>
  );
}
