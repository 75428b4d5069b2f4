/**
 * Settings → Security → Network security: the tenant's IP allowlist (where its API keys may be used
 * from; people's sign-ins are not bound by it). Before saving, the keys last used from an address the
 * new list leaves out are named, and the change waits for a second "save anyway".
 */
import type { ApiKey, components } from "@svc/client";
import { useState } from "preact/hooks";

import { useAction } from "../action";
import { useClient, useSigned } from "../api";
import { ErrorNotice, Show } from "../components/status";
import { allows, parseList } from "../cidr";
import { Time } from "../components/readable";
import { collect, useLoad } from "../load";
import { toast } from "../toast";

type Tenant = components["schemas"]["Tenant"];

/** The active keys that were last used from an address outside the list. */
export function keysShutOut(list: string, keys: ApiKey[]): ApiKey[] {
  const { cidrs } = parseList(list);
  return keys.filter((key) => key.status === "active" && key.lastUsedIp && !allows(cidrs, key.lastUsedIp));
}

export function NetworkSecurityPage() {
  const client = useClient();
  const { me } = useSigned();
  const loaded = useLoad(async () => {
    const [tenant, keys] = await Promise.all([client.tenants.get(me.tenant.id), collect(client.apiKeys.iterate())]);
    return { tenant: tenant as Tenant, keys };
  });
  return (
    <>
      <h1>Network security</h1>
      <p class="lead">With an IP allowlist, the tenant's API keys work only from the addresses in it. People signing
        in are not bound by it, so an owner can always change it back.</p>
      <Show loaded={loaded} what="the allowlist">
        {({ tenant, keys }) => <AllowlistEditor tenant={tenant} keys={keys} saved={loaded.reload} />}
      </Show>
    </>
  );
}

function AllowlistEditor({ tenant, keys, saved }: { tenant: Tenant; keys: ApiKey[]; saved: () => void }) {
  const client = useClient();
  const action = useAction();
  const current = tenant.settings.ipAllowlist.join("\n");
  const [text, setText] = useState(current);
  const [warned, setWarned] = useState<ApiKey[] | null>(null);
  const { cidrs, invalid } = parseList(text);
  const featured = tenant.planDetails.features.includes("ip_allowlist");

  const save = (force: boolean) => {
    const shut = keysShutOut(text, keys);
    if (shut.length && !force) { setWarned(shut); return; }
    setWarned(null);
    void action.run(async () => {
      await client.tenants.updateSettings(tenant.id, { ipAllowlist: cidrs.map((c) => c.text) });
      toast("The allowlist is saved. Every server applies it within a minute.");
      saved();
    });
  };
  return (
    <section class="card" aria-labelledby="allowlist-title">
      <h2 id="allowlist-title">IP allowlist</h2>
      {!featured && <p class="notice" role="note">The {tenant.plan} plan has no IP allowlist: it comes with the starter plan
        and above (<a href="#/settings/billing">Billing</a>).</p>}
      <p>Currently: {tenant.settings.ipAllowlist.length ? tenant.settings.ipAllowlist.join(", ") : "every address (no list)"}.</p>
      <form onSubmit={(event) => { event.preventDefault(); save(false); }}>
        <label for="allowlist">Addresses and ranges (CIDR), one a line; empty: every address</label>
        <textarea id="allowlist" rows={6} value={text} aria-describedby="allowlist-help allowlist-invalid"
                  onInput={(e) => { setText(e.currentTarget.value); setWarned(null); }} />
        <p id="allowlist-help" class="muted">For example 203.0.113.0/24 or 2001:db8::/32. At most 100.</p>
        <p id="allowlist-invalid" class="field-error" aria-live="polite">
          {invalid.length ? `Not an address or range: ${invalid.join(", ")}` : ""}</p>
        <button type="submit" class="primary" disabled={action.busy || invalid.length > 0 || !featured}>Save allowlist</button>
      </form>
      {warned && (
        <div class="warning" role="alert">
          <p>This list would shut out {warned.length === 1 ? "a key" : `${warned.length} keys`} last used from outside it:</p>
          <ul>{warned.map((key) => <li key={key.id}><strong>{key.name}</strong> (<code>{key.hint}</code>), last used
            from {key.lastUsedIp} <Time iso={key.last_used_at} /></li>)}</ul>
          <button type="button" class="danger" onClick={() => save(true)}>Save anyway</button>
          <button type="button" onClick={() => setWarned(null)}>Keep editing</button>
        </div>
      )}
      {action.error !== null && <ErrorNotice error={action.error} />}
    </section>
  );
}
