/**
 * Settings → Security → API keys: the tenant's keys with their last use; create one (name, type,
 * environment, scopes), its value shown once with Copy; rotate with an overlap; revoke.
 */
import type { ApiKey, components } from "@svc/client";
import { useState } from "preact/hooks";

import { useAction } from "../action";
import { useClient, useSigned } from "../api";
import { ConfirmButton } from "../components/confirm";
import { CopyValue } from "../components/copy";
import { Empty, ErrorNotice, Show } from "../components/status";
import { when } from "../format";
import { collect, useLoad } from "../load";
import { TableWrap } from "../components/table-wrap";

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
  const [shown, setShown] = useState<{ name: string; value: string; note: string } | null>(null);
  return (
    <>
      <h1>API keys</h1>
      <p class="lead">Keys let your backends, CI and tools call the API. A key's value is shown once, when it is
        created or rotated; the service keeps only its hash.</p>
      {shown && (
        <section class="card reveal" aria-labelledby="reveal-title">
          <h2 id="reveal-title">The value of {shown.name}</h2>
          <p>{shown.note} Copy it now: it is not shown again.</p>
          <CopyValue value={shown.value} label={`The value of ${shown.name}`} />
          <button type="button" onClick={() => setShown(null)}>Done</button>
        </section>
      )}
      <CreateKey onCreated={(name, value) => { setShown({ name, value, note: "The key is ready." }); keys.reload(); }} />
      <h2>Keys</h2>
      <Show loaded={keys} what="the keys">
        {(items) => items.length === 0 ? <Empty>No keys yet: create one above.</Empty> : (
          <TableWrap label={"Keys"}>
            <table class="stack">
              <thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Environment</th>
                <th scope="col">Value</th><th scope="col">Status</th><th scope="col">Last used</th>
                <th scope="col">Actions</th></tr></thead>
              <tbody>
                {items.map((key) => <KeyRow key={key.id} apiKey={key} changed={keys.reload}
                                            revealed={(value) => setShown({ name: key.name, value,
                                              note: "The key was rotated; the earlier value works until its overlap ends." })} />)}
              </tbody>
            </table>
          </TableWrap>
        )}
      </Show>
    </>
  );
}

function KeyRow({ apiKey, changed, revealed }: { apiKey: ApiKey; changed: () => void; revealed: (value: string) => void }) {
  const client = useClient();
  const action = useAction();
  const [overlap, setOverlap] = useState(86400);
  const active = apiKey.status === "active";
  return (
    <tr>
      <th scope="row">{apiKey.name}<div class="muted">{apiKey.scopes.length} scopes</div></th>
      <td data-label="Type">{apiKey.type}</td>
      <td data-label="Environment">{apiKey.environment}</td>
      <td data-label="Value"><code>{apiKey.hint}</code></td>
      <td data-label="Status"><span class={`badge ${apiKey.status}`}>{apiKey.status}</span></td>
      <td data-label="Last used">{when(apiKey.last_used_at)}
        {apiKey.lastUsedIp && <div class="muted">from {apiKey.lastUsedIp}</div>}</td>
      <td><div class="row-actions">
        {active && (
          <>
            <label class="visually-hidden" for={`overlap-${apiKey.id}`}>Overlap for {apiKey.name}</label>
            <select id={`overlap-${apiKey.id}`} value={overlap} onChange={(e) => setOverlap(Number(e.currentTarget.value))}>
              {OVERLAPS.map((o) => <option key={o.seconds} value={o.seconds}>{o.label}</option>)}
            </select>
            <ConfirmButton label="Rotate" danger={false} disabled={action.busy}
                           question={`Rotate ${apiKey.name}? A new value is made; the current one keeps working for the overlap chosen.`}
                           onConfirm={() => void action.run(async () => {
                             const rotated = await client.call("rotate_key", { path: { id: apiKey.id }, body: { overlapSeconds: overlap } });
                             revealed(rotated.key);
                             changed();
                           })} />
            <ConfirmButton label="Revoke" disabled={action.busy}
                           question={`Revoke ${apiKey.name}? Every value of it stops working at once; this cannot be undone.`}
                           onConfirm={() => void action.run(async () => { await client.apiKeys.revoke(apiKey.id); changed(); })} />
          </>
        )}
        {action.error !== null && <ErrorNotice error={action.error} />}
      </div></td>
    </tr>
  );
}

function CreateKey({ onCreated }: { onCreated: (name: string, value: string) => void }) {
  const client = useClient();
  const { me } = useSigned();
  const action = useAction();
  const [name, setName] = useState("");
  const [type, setType] = useState<KeyCreate["type"]>("sdk");
  const [environment, setEnvironment] = useState<KeyCreate["environment"]>("Development");
  const [scopes, setScopes] = useState<string[]>([]);
  const [expires, setExpires] = useState("");
  return (
    <section class="card" aria-labelledby="create-key-title">
      <h2 id="create-key-title">Create a key</h2>
      <form onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          const body: KeyCreate = { name, type, environment };
          if (scopes.length) body.scopes = scopes as NonNullable<KeyCreate["scopes"]>;
          if (expires) body.expiresInDays = Number(expires);
          const created = await client.apiKeys.create(body);
          setName(""); setScopes([]); setExpires("");
          onCreated(created.name, created.key);
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
        <button type="submit" class="primary" disabled={action.busy}>{action.busy ? "Creating…" : "Create key"}</button>
      </form>
      {action.error !== null && <ErrorNotice error={action.error} />}
    </section>
  );
}
