/**
 * The audit log: who did what to which object of the tenant, from where, and what changed, newest
 * first a page at a time, filtered by action; the export for the plans that include it (else the
 * plan it needs, as the service says).
 */
import type { components, operations } from "@svc/client";
import { useState } from "preact/hooks";

import { useAction } from "../action";
import { useClient } from "../api";
import { PagedTable } from "../components/paged-table";
import { ErrorNotice } from "../components/status";
import { when } from "../format";
import { collect, useLoad } from "../load";
import { describeChanges, planNeeded } from "../observe";
import { usePaged } from "../paged";

type Action = NonNullable<NonNullable<operations["list_audit_log"]["parameters"]["query"]>["action"]>;
type Export = components["schemas"]["AuditExport"];
const ACTIONS = [
  "api_key.created", "api_key.rotated", "api_key.revoked", "invitation.created", "invitation.resent",
  "invitation.revoked", "invitation.accepted", "member.added", "member.role_changed", "member.removed", "member.left",
  "ownership.transferred", "tenant.created", "tenant.settings_changed", "tenant.region_preferences_changed",
  "tenant.move_started", "tenant.failed_over", "tenant.storage_changed", "webhook.created", "webhook.updated",
  "webhook.deleted", "webhook.secret_rotated", "secret.created", "secret.updated", "secret.deleted",
  "billing.credits_purchased", "billing.gift_card_redeemed", "billing.plan_changed", "user.signed_in",
] as const satisfies readonly Action[];
type Filter = (typeof ACTIONS)[number] | "";

export function AuditLogPage() {
  const client = useClient();
  const [action, setAction] = useState<Filter>("");
  const entries = usePaged((cursor) => client.call("list_audit_log", {
    query: { limit: 20, ...(action ? { action } : {}), ...(cursor ? { cursor } : {}) },
  }), [action]);
  // Members' e-mails name the people among the actors (an actor no longer a member shows its id).
  const members = useLoad(() => collect(client.members.iterate()).catch(() => []));
  const names = new Map(members.state === "ready"
    ? members.data.filter((m) => m.email).map((m) => [m.userId, m.email ?? ""] as [string, string]) : []);
  return (
    <>
      <h1>Audit log</h1>
      <p class="lead">Every security-relevant change in the tenant: who made it, from which address, to which object,
        and which fields changed (never a secret's value). Kept 400 days.</p>
      <div class="fields">
        <label>Action<select value={action} onChange={(e) => setAction(e.currentTarget.value as Filter)}>
          <option value="">Every action</option>
          {ACTIONS.map((a) => <option key={a}>{a}</option>)}
        </select></label>
      </div>
      <ExportLog action={action} />
      <PagedTable paged={entries} what="the audit log" empty={`No entries${action ? ` of ${action}` : ""}.`}
                  columns={["Action", "Time", "Actor", "Target", "Source IP", "Request id", "Changes"]}
                  row={(entry) => (
        <tr key={entry.id}>
          <th scope="row">{entry.action}</th>
          <td data-label="Time">{when(entry.created_at)}</td>
          <td data-label="Actor" class="wrap">{names.get(entry.actor.id) ?? entry.actor.type}
            <div class="muted">{entry.actor.id}</div></td>
          <td data-label="Target" class="wrap">{entry.target.type}<div class="muted">{entry.target.id}</div></td>
          <td data-label="Source IP">{entry.sourceIp || "—"}</td>
          <td data-label="Request id" class="wrap">{entry.requestId ? <code>{entry.requestId}</code> : "—"}</td>
          <td data-label="Changes" class="wrap">
            <ul class="changes">{describeChanges(entry.changes).map((line) => <li key={line}>{line}</li>)}</ul>
          </td>
        </tr>
      )} />
    </>
  );
}

function ExportLog({ action: filter }: { action: Filter }) {
  const client = useClient();
  const action = useAction();
  const [made, setMade] = useState<Export | null>(null);
  const needed = planNeeded(action.error);
  return (
    <section class="card" aria-labelledby="export-title">
      <h2 id="export-title">Export</h2>
      <p>The entries{filter ? ` of ${filter}` : ""} as JSON Lines (at most 10,000), downloadable for 15 minutes.</p>
      <button type="button" disabled={action.busy} onClick={() => void action.run(async () => {
        setMade(null);
        setMade(await client.call("export_audit_log", { query: filter ? { action: filter } : {} }));
      })}>{action.busy ? "Exporting…" : "Export the audit log"}</button>
      {made && <p role="status" class="success">{made.entries.toLocaleString("en-US")} {made.entries === 1 ? "entry" : "entries"} exported: <a href={made.url}
        download>download the export</a> (until {when(made.expires_at)}).</p>}
      {needed ? <p class="notice" role="alert">Exports come with the {needed.requiredPlan} plan; this tenant is on
        the {needed.currentPlan} plan (<a href="#/billing">Billing</a>).</p>
        : action.error !== null && <ErrorNotice error={action.error} />}
    </section>
  );
}
