/**
 * Webhooks: the tenant's endpoints; register one (URL, the events it receives, a description), its
 * signing secret shown once with Copy. Each endpoint's own page (webhook.tsx) has its deliveries.
 */
import { useState } from "preact/hooks";

import { useAction } from "../action";
import { useClient } from "../api";
import { CopyValue } from "../components/copy";
import { Empty, ErrorNotice, Show } from "../components/status";
import { when } from "../format";
import { collect, useLoad } from "../load";
import { EVENT_TYPES, type WebhookEvent } from "../observe";
import { TableWrap } from "../components/table-wrap";

export function WebhooksPage() {
  const client = useClient();
  const hooks = useLoad(() => collect(client.webhooks.iterate()));
  const [created, setCreated] = useState<{ id: string; url: string; secret: string | null } | null>(null);
  return (
    <>
      <h1>Webhooks</h1>
      <p class="lead">Endpoints that receive the tenant's events as signed HTTP POSTs (Standard Webhooks). Each has
        its own signing secret: verify every delivery with it.</p>
      {created && (
        <section class="card reveal" aria-labelledby="secret-title">
          <h2 id="secret-title">The signing secret of {created.url}</h2>
          {created.secret ? <>
            <p>The endpoint is registered. Copy its secret now: it is not shown again.</p>
            <CopyValue value={created.secret} label={`The signing secret of ${created.url}`} />
          </> : <p>The endpoint is registered with the secret you gave.</p>}
          <div class="row-actions">
            <a href={`#/webhooks/${created.id}`}>Open the endpoint</a>
            <button type="button" onClick={() => setCreated(null)}>Done</button>
          </div>
        </section>
      )}
      <RegisterWebhook onCreated={(hook) => { setCreated(hook); hooks.reload(); }} />
      <h2>Endpoints</h2>
      <Show loaded={hooks} what="the endpoints">
        {(items) => items.length === 0 ? <Empty>No endpoints yet: register one above.</Empty> : (
          <TableWrap label={"Endpoints"}>
            <table class="stack">
              <thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Status</th>
                <th scope="col">Description</th><th scope="col">Created</th></tr></thead>
              <tbody>
                {items.map((hook) => (
                  <tr key={hook.id}>
                    <th scope="row"><a class="wrap" href={`#/webhooks/${hook.id}`}>{hook.url}</a></th>
                    <td data-label="Events">{eventsLabel(hook.events)}</td>
                    <td data-label="Status"><span class={`badge ${hook.enabled ? "active" : "failed"}`}>
                      {hook.enabled ? "enabled" : "disabled"}</span></td>
                    <td data-label="Description">{hook.description ?? ""}</td>
                    <td data-label="Created">{when(hook.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
      </Show>
    </>
  );
}

export function eventsLabel(events: string[]): string {
  return events.includes("*") ? "every event" : events.join(", ");
}

/** The events an endpoint receives: every event ("*"), or the ones ticked. */
export function EventsPicker({ value, onChange }: { value: WebhookEvent[]; onChange: (events: WebhookEvent[]) => void }) {
  const all = value.includes("*");
  return (
    <fieldset>
      <legend>Events</legend>
      <label class="check"><input type="checkbox" checked={all}
                                  onChange={(e) => onChange(e.currentTarget.checked ? ["*"] : [])} />Every event</label>
      <div class="scopes">
        {EVENT_TYPES.map((type) => (
          <label key={type} class="check"><input type="checkbox" disabled={all} checked={all || value.includes(type)}
            onChange={(e) => onChange(e.currentTarget.checked ? [...value, type] : value.filter((t) => t !== type))} />
            {type}</label>
        ))}
      </div>
    </fieldset>
  );
}

function RegisterWebhook({ onCreated }: { onCreated: (hook: { id: string; url: string; secret: string | null }) => void }) {
  const client = useClient();
  const action = useAction();
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<WebhookEvent[]>([]);
  const [description, setDescription] = useState("");
  return (
    <section class="card" aria-labelledby="register-title">
      <h2 id="register-title">Register an endpoint</h2>
      <form onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          const made = await client.webhooks.create({ url: url.trim(), events,
                                                      ...(description.trim() ? { description: description.trim() } : {}) });
          setUrl(""); setEvents([]); setDescription("");
          onCreated({ id: made.id, url: made.url, secret: made.secret });
        });
      }}>
        <div class="fields">
          <label>URL<input type="url" required maxLength={2048} placeholder="https://hooks.example.com/svc" value={url}
                           onInput={(e) => setUrl(e.currentTarget.value)} /></label>
          <label>Description (optional)<input maxLength={500} value={description}
                                              onInput={(e) => setDescription(e.currentTarget.value)} /></label>
        </div>
        <EventsPicker value={events} onChange={setEvents} />
        <button type="submit" class="primary" disabled={action.busy || events.length === 0}>
          {action.busy ? "Registering…" : "Register endpoint"}</button>
        {events.length === 0 && <p class="muted">Choose at least one event.</p>}
      </form>
      {action.error !== null && <ErrorNotice error={action.error} />}
    </section>
  );
}
