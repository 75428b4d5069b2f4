/**
 * The event log: the tenant's events of the last 30 days (the envelope webhooks carry), newest
 * first, a page at a time, each as a sentence linking to its object; filtered by type, object and
 * date range, the filters kept in the page's address; an id pasted in Find opens that event, or
 * filters by that object. An event's page shows its sentence and its data.
 */
import { ApiError } from "@svc/client";
import { useState } from "preact/hooks";

import { useAction } from "../action";
import { useClient } from "../api";
import { EmptyState, NoMatch } from "../components/empty-state";
import { DateRange, FilterForm, useDraft, useRangeDraft } from "../components/log-filters";
import { PagedTable } from "../components/paged-table";
import { ShortId, Time } from "../components/readable";
import { Sentence } from "../components/sentence";
import { ErrorNotice, Show } from "../components/status";
import { utc } from "../format";
import { useLoad } from "../load";
import { type EventFilters, eventFiltersOf, eventsAddress, filtered, filterWords, findById } from "../log-filters";
import { useKnown } from "../objects";
import { usePaged } from "../paged";
import { PLACES } from "../places";
import { navigate } from "../router";
import { describeEvent, EVENT_TYPES_LOGGED, type EventType } from "../sentences";

export function EventsPage({ query }: { params: Record<string, string>; query: URLSearchParams }) {
  const client = useClient();
  const known = useKnown(["proj", "agt"]);
  const filters = eventFiltersOf(query);
  const address = eventsAddress(filters);
  const show = (next: EventFilters) => navigate(eventsAddress(next));
  const [objectId, setObjectId] = useDraft(filters.objectId ?? "");
  const range = useRangeDraft(filters.since, filters.until);
  const events = usePaged((cursor) => client.call("list_events", {
    query: { limit: 20, ...filters, ...(cursor ? { cursor } : {}) },
  }), [address]);
  /** The filters as the form has them (a typed id or date goes along with a choice from a list). */
  const edited = (): EventFilters => ({ ...filters, objectId: objectId.trim() || undefined, ...range.range() });
  const clear = () => show({});
  return (
    <>
      <h1>Event log</h1>
      <p class="lead">Every event of the tenant, kept 30 days, in the envelope webhooks receive. A delivery's
        <code> webhook-id</code> is the event's id.</p>
      <FindById filters={filters} />
      <FilterForm label="Filter the events" active={filtered(filters)} onApply={() => show(edited())} onClear={clear}>
        <label>Type<select value={filters.type ?? ""}
                           onChange={(e) => show({ ...edited(), type: (e.currentTarget.value || undefined) as EventType | undefined })}>
          <option value="">Every type</option>
          {EVENT_TYPES_LOGGED.map((t) => <option key={t}>{t}</option>)}
        </select></label>
        <label>Object id<input value={objectId} maxLength={64} placeholder="proj_…, run_…, usr_…"
                               onInput={(e) => setObjectId(e.currentTarget.value)} /></label>
        <DateRange draft={range} since={filters.since} until={filters.until} />
      </FilterForm>
      <PagedTable paged={events} what="the events"
                  empty={filtered(filters) ? <NoMatch what="event" words={filterWords(filters, known)} onClear={clear} />
                    : <NoEventsYet />}
                  columns={["What happened", "Type", "Time", "Id"]} row={(event) => (
        <tr key={event.id}>
          <th scope="row"><Sentence said={describeEvent(event, known)} /></th>
          <td data-label="Type"><a href={`#/events/${event.id}`}>{event.type}</a></td>
          <td data-label="Time"><Time iso={event.timestamp} /></td>
          <td data-label="Id"><ShortId id={event.id} /></td>
        </tr>
      )} />
    </>
  );
}

function NoEventsYet() {
  return (
    <EmptyState title="No events yet" tag="Events">
      <p>An event is a change in the tenant: a project created, an agent run completed, a member joining. Each is
        kept here 30 days, and the webhook endpoints registered for it receive it as it happens.</p>
      <p>Make the first one: <a href={`#${PLACES.projects.path}`}>create a project</a>, then
        {" "}<a href={`#${PLACES.webhooks.path}`}>register a webhook endpoint</a> to hear of the next.</p>
    </EmptyState>
  );
}

/** Find by id: an event's id opens it (a clear word when there is none), another id filters by object. */
function FindById({ filters }: { filters: EventFilters }) {
  const client = useClient();
  const action = useAction();
  const [pasted, setPasted] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  return (
    <form class="find" role="search" aria-label="Find by id" onSubmit={(event) => {
      event.preventDefault();
      setProblem(null);
      const found = findById(pasted);
      if ("problem" in found) return setProblem(found.problem);
      if ("filter" in found) return navigate(eventsAddress({ ...filters, objectId: found.id }));
      void action.run(async () => {
        try {
          await client.call("get_event", { path: { id: found.id } });
          navigate(`/events/${found.id}`);
        } catch (error) {
          if (!(error instanceof ApiError && error.status === 404)) throw error;
          setProblem(`No event has the id ${found.id}: it is not this tenant's, or older than 30 days.`);
        }
      });
    }}>
      <label>Find by id<input value={pasted} placeholder="evt_… or an object's id" aria-describedby="find-problem"
                              onInput={(e) => setPasted(e.currentTarget.value)} /></label>
      <button type="submit" disabled={action.busy}>{action.busy ? "Finding…" : "Find"}</button>
      <p id="find-problem" class="field-error" role="alert">{problem}</p>
      {action.error !== null && <ErrorNotice error={action.error} />}
    </form>
  );
}

export function EventPage({ params }: { params: Record<string, string> }) {
  const client = useClient();
  const known = useKnown(["proj", "agt"]);
  const id = params["id"] ?? "";
  const event = useLoad(() => client.call("get_event", { path: { id } }), [id]);
  return (
    <>
      <p><a href="#/events">← Event log</a></p>
      <h1>Event</h1>
      {event.state === "failed" && event.error instanceof ApiError && event.error.status === 404
        ? <div class="empty"><p>No event has the id {id}: it is not this tenant's, or older than 30 days.</p></div>
        : <Show loaded={event} what="the event">
        {(data) => (
          <section class="card" aria-labelledby="event-title">
            <h2 id="event-title">{data.type}</h2>
            <p><Sentence said={describeEvent(data, known)} /></p>
            <dl class="facts">
              <dt>Id</dt><dd><ShortId id={data.id} label="the event id" /></dd>
              <dt>Time</dt><dd><Time iso={data.timestamp} /> <span class="muted">({utc(data.timestamp)})</span></dd>
              <dt>Tenant</dt><dd><ShortId id={data.tenantId} label="the tenant id" /></dd>
            </dl>
            <h3>Data</h3>
            <pre class="json" tabIndex={0} aria-label="The event's data">{JSON.stringify(data.data, null, 2)}</pre>
          </section>
        )}
      </Show>}
    </>
  );
}
