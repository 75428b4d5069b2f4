/**
 * The event log: the tenant's events of the last 30 days (the envelope webhooks carry), newest
 * first, a page at a time, filtered by type; an event's page shows its data.
 */
import { useState } from "preact/hooks";

import { useClient } from "../api";
import { PagedTable } from "../components/paged-table";
import { Show } from "../components/status";
import { when } from "../format";
import { useLoad } from "../load";
import { EVENT_TYPES } from "../observe";
import { usePaged } from "../paged";

export function EventsPage() {
  const client = useClient();
  const [type, setType] = useState<(typeof EVENT_TYPES)[number] | "">("");
  const events = usePaged((cursor) => client.call("list_events", {
    query: { limit: 20, ...(type ? { type } : {}), ...(cursor ? { cursor } : {}) },
  }), [type]);
  return (
    <>
      <h1>Event log</h1>
      <p class="lead">Every event of the tenant, kept 30 days, in the envelope webhooks receive. A delivery's
        <code> webhook-id</code> is the event's id.</p>
      <div class="fields">
        <label>Type<select value={type} onChange={(e) => setType(e.currentTarget.value as typeof type)}>
          <option value="">Every type</option>
          {EVENT_TYPES.map((t) => <option key={t}>{t}</option>)}
        </select></label>
      </div>
      <PagedTable paged={events} what="the events" empty={`No events${type ? ` of type ${type}` : ""} in the last 30 days.`}
                  columns={["Type", "Time", "Id"]} row={(event) => (
        <tr key={event.id}>
          <th scope="row"><a href={`#/events/${event.id}`}>{event.type}</a></th>
          <td data-label="Time">{when(event.timestamp)}</td>
          <td data-label="Id"><code class="wrap">{event.id}</code></td>
        </tr>
      )} />
    </>
  );
}

export function EventPage({ params }: { params: Record<string, string> }) {
  const client = useClient();
  const id = params["id"] ?? "";
  const event = useLoad(() => client.call("get_event", { path: { id } }), [id]);
  return (
    <>
      <p><a href="#/events">← Event log</a></p>
      <h1>Event</h1>
      <Show loaded={event} what="the event">
        {(data) => (
          <section class="card" aria-labelledby="event-title">
            <h2 id="event-title">{data.type}</h2>
            <dl class="facts">
              <dt>Id</dt><dd><code>{data.id}</code></dd>
              <dt>Time</dt><dd>{when(data.timestamp)} <span class="muted">({data.timestamp})</span></dd>
              <dt>Tenant</dt><dd><code>{data.tenantId}</code></dd>
            </dl>
            <h3>Data</h3>
            <pre class="json" tabIndex={0} aria-label="The event's data">{JSON.stringify(data.data, null, 2)}</pre>
          </section>
        )}
      </Show>
    </>
  );
}
