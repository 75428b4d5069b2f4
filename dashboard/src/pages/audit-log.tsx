/**
 * The audit log: who did what to which object of the tenant, from where, and what changed, newest
 * first a page at a time, each entry as a sentence linking to its object; filtered by action, actor
 * (a member by name, an API key by its name, the service), object and date range, the filters kept
 * in the page's address; the export of the filtered entries for the plans that include it (else the
 * plan it needs, as the service says).
 */
import type { components } from "@svc/client";
import { useState } from "preact/hooks";

import { useAction } from "../action";
import { useClient } from "../api";
import { EmptyState, NoMatch } from "../components/empty-state";
import { DateRange, FilterForm, useDraft, useRangeDraft } from "../components/log-filters";
import { PagedTable } from "../components/paged-table";
import { Person, ShortId, Time } from "../components/readable";
import { Sentence } from "../components/sentence";
import { ErrorNotice } from "../components/status";
import { shortId } from "../format";
import { type AuditFilters, auditAddress, auditFiltersOf, filtered, filterWords } from "../log-filters";
import { useKnown } from "../objects";
import { describeChanges, planNeeded } from "../observe";
import { usePaged } from "../paged";
import { PLACES } from "../places";
import { navigate } from "../router";
import { AUDIT_ACTIONS, type AuditAction, describeAuditEntry, type Known } from "../sentences";

type Export = components["schemas"]["AuditExport"];

export function AuditLogPage({ query }: { params: Record<string, string>; query: URLSearchParams }) {
  const client = useClient();
  const known = useKnown(["whk", "key", "inv"]);
  const filters = auditFiltersOf(query);
  const address = auditAddress(filters);
  const show = (next: AuditFilters) => navigate(auditAddress(next));
  const [target, setTarget] = useDraft(filters.target ?? "");
  const range = useRangeDraft(filters.since, filters.until);
  const entries = usePaged((cursor) => client.call("list_audit_log", {
    query: { limit: 20, ...filters, ...(cursor ? { cursor } : {}) },
  }), [address]);
  const clear = () => show({});
  /** The filters as the form has them (a typed id or date goes along with a choice from a list). */
  const edited = (): AuditFilters => ({ ...filters, target: target.trim() || undefined, ...range.range() });
  return (
    <>
      <h1>Audit log</h1>
      <p class="lead">Every security-relevant change in the tenant: who made it, from which address, to which object,
        and which fields changed (never a secret's value). Kept 400 days.</p>
      <FilterForm label="Filter the audit log" active={filtered(filters)} onClear={clear}
                  onApply={() => show(edited())}>
        <label>Action<select value={filters.action ?? ""}
                             onChange={(e) => show({ ...edited(), action: (e.currentTarget.value || undefined) as AuditAction | undefined })}>
          <option value="">Every action</option>
          {AUDIT_ACTIONS.map((a) => <option key={a}>{a}</option>)}
        </select></label>
        <label>Actor<select value={filters.actor ?? ""} onChange={(e) => show({ ...edited(), actor: e.currentTarget.value || undefined })}>
          <option value="">Anyone</option>
          {actors(known, filters.actor).map((group) => (
            <optgroup key={group.label} label={group.label}>
              {group.options.map(([id, name]) => <option key={id} value={id}>{name}</option>)}
            </optgroup>
          ))}
        </select></label>
        <label>Object id<input value={target} maxLength={64} placeholder="whk_…, key_…, usr_…"
                               onInput={(e) => setTarget(e.currentTarget.value)} /></label>
        <DateRange draft={range} since={filters.since} until={filters.until} />
      </FilterForm>
      <ExportLog filters={filters} />
      <PagedTable paged={entries} what="the audit log"
                  empty={filtered(filters) ? <NoMatch what="entry" words={filterWords(filters, known)} onClear={clear} />
                    : <NoEntriesYet />}
                  columns={["What happened", "Time", "Actor", "Target", "Source IP", "Request id", "Changes"]}
                  row={(entry) => (
        <tr key={entry.id}>
          <th scope="row"><Sentence said={describeAuditEntry(entry, known)} />
            <div class="muted"><code>{entry.action}</code></div></th>
          <td data-label="Time"><Time iso={entry.created_at} /></td>
          <td data-label="Actor"><Person id={entry.actor.id} /><div class="muted">{entry.actor.type}</div></td>
          <td data-label="Target">{entry.target.type}<div class="muted"><ShortId id={entry.target.id} /></div></td>
          <td data-label="Source IP">{entry.sourceIp || "—"}</td>
          <td data-label="Request id">{entry.requestId ? <ShortId id={entry.requestId} label="the request id" /> : "—"}</td>
          <td data-label="Changes" class="wrap">
            <ul class="changes">{describeChanges(entry.changes).map((line) => <li key={line}>{line}</li>)}</ul>
          </td>
        </tr>
      )} />
    </>
  );
}

/** The actors to choose from: the members by name, the API keys by theirs, the service; and the one
 * the address names when it is none of them (a former member, by the shortened id). */
function actors(known: Known, chosen: string | undefined): { label: string; options: [string, string][] }[] {
  const byName = (a: [string, string], b: [string, string]) => a[1].localeCompare(b[1]);
  const members = [...known.people].sort(byName);
  const keys = [...(known.objects ?? [])].filter(([id]) => id.startsWith("key_")).sort(byName);
  const groups = [{ label: "Members", options: members }, { label: "API keys", options: keys },
                  { label: "Others", options: [["service", "The service"]] as [string, string][] }];
  if (chosen && !groups.some((g) => g.options.some(([id]) => id === chosen))) {
    groups[2]!.options.push([chosen, shortId(chosen)]);
  }
  return groups.filter((g) => g.options.length > 0);
}

function NoEntriesYet() {
  return (
    <EmptyState title="No entries yet" tag="Audit log">
      <p>The audit log records each security-relevant change: API keys created, rotated and revoked, members invited,
        added and removed, webhook endpoints and secrets changed, purchases and plans, and owners' and admins' sign-ins.
        Each entry says who made it, from where, and which fields changed.</p>
      <p>The next change appears here: <a href={`#${PLACES.members.path}`}>invite a member</a> or
        {" "}<a href={`#${PLACES.apiKeys.path}`}>create an API key</a>.</p>
    </EmptyState>
  );
}

function ExportLog({ filters }: { filters: AuditFilters }) {
  const client = useClient();
  const action = useAction();
  const [made, setMade] = useState<Export | null>(null);
  const needed = planNeeded(action.error);
  return (
    <section class="card" aria-labelledby="export-title">
      <h2 id="export-title">Export</h2>
      <p>The entries{filtered(filters) ? " the filters show" : ""} as JSON Lines (at most 10,000), downloadable for 15 minutes.</p>
      <button type="button" disabled={action.busy} onClick={() => void action.run(async () => {
        setMade(null);
        setMade(await client.call("export_audit_log", { query: filters }));
      })}>{action.busy ? "Exporting…" : "Export the audit log"}</button>
      {made && <p role="status" class="success">{made.entries.toLocaleString("en-US")} {made.entries === 1 ? "entry" : "entries"} exported: <a href={made.url}
        download>download the export</a> (until <Time iso={made.expires_at} />).</p>}
      {needed ? <p class="notice" role="alert">Exports come with the {needed.requiredPlan} plan; this tenant is on
        the {needed.currentPlan} plan (<a href="#/settings/billing">Billing</a>).</p>
        : action.error !== null && <ErrorNotice error={action.error} />}
    </section>
  );
}
