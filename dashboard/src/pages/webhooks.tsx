/**
 * Webhooks: the tenant's endpoints; Register endpoint opens a dialog (URL, the events it receives, a
 * description) that shows its signing secret once with Copy. Each endpoint's own page (webhook.tsx) has its deliveries.
 */
import { useState } from "preact/hooks";

import { useAction } from "../action";
import { useClient } from "../api";
import { CopyValue } from "../components/copy";
import { DialogButton } from "../components/dialog";
import { EmptyState } from "../components/empty-state";
import { ErrorNotice, Show } from "../components/status";
import { Time } from "../components/readable";
import { collect, useLoad } from "../load";
import { EVENT_TYPES, type WebhookEvent } from "../observe";
import { TableWrap } from "../components/table-wrap";

export function WebhooksPage() {
  const client = useClient();
  const hooks = useLoad(() => collect(client.webhooks.iterate()));
  return (
    <>
      <div class="page-head">
        <h1>Webhooks</h1>
        <DialogButton label="Register endpoint" title="Register an endpoint" wide>
          {(close) => <RegisterWebhook close={close} created={hooks.reload} />}
        </DialogButton>
      </div>
      <Show loaded={hooks} what="the endpoints">
        {(items) => items.length === 0 ? <NoEndpointsYet /> : (
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
                    <td data-label="Created"><Time iso={hook.created_at} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
      </Show>
      <p class="lead">Endpoints that receive the tenant's events as signed HTTP POSTs (Standard Webhooks). Each has
        its own signing secret: verify every delivery with it.</p>
    </>
  );
}

/** What an endpoint is, how to register the first, and how to try deliveries locally first. */
function NoEndpointsYet() {
  return (
    <EmptyState title="No endpoints yet" tag="Webhooks">
      <p>An endpoint is a URL of yours that receives the tenant's events (a project created, a run completed, a member
        joining) as signed HTTP POSTs, retried until it answers.</p>
      <p>Press <strong>Register endpoint</strong> above to add the first: its signing secret is shown once.</p>
      <p>To try deliveries on your own machine first, with no public URL, run the command-line tool's forwarder: it
        sends each event to your local receiver, signed as a delivery is (<code>svc listen --print-secret</code> gives
        the secret to verify with).</p>
      <CopyValue value={LISTEN} label="Forward the events to a local receiver" />
    </EmptyState>
  );
}

const LISTEN = "svc listen --forward-to http://localhost:4242/webhook";

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

function RegisterWebhook({ close, created }: { close: () => void; created: () => void }) {
  const client = useClient();
  const action = useAction();
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<WebhookEvent[]>([]);
  const [description, setDescription] = useState("");
  const [made, setMade] = useState<{ id: string; url: string; secret: string | null } | null>(null);
  if (made) {
    return (
      <div class="reveal">
        {made.secret ? <>
          <p>The endpoint {made.url} is registered. Copy its signing secret now: it is not shown again.</p>
          <CopyValue value={made.secret} label={`The signing secret of ${made.url}`} />
        </> : <p>The endpoint {made.url} is registered with the secret you gave.</p>}
        <div class="actions">
          <a href={`#/webhooks/${made.id}`}>Open the endpoint</a>
          <button type="button" class="primary" onClick={close}>Done</button>
        </div>
      </div>
    );
  }
  return (
    <>
      <form onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          const hook = await client.webhooks.create({ url: url.trim(), events,
                                                      ...(description.trim() ? { description: description.trim() } : {}) });
          setMade({ id: hook.id, url: hook.url, secret: hook.secret });
          created();
        });
      }}>
        <div class="fields">
          <label>URL<input type="url" required maxLength={2048} placeholder="https://hooks.example.com/svc" value={url}
                           onInput={(e) => setUrl(e.currentTarget.value)} /></label>
          <label>Description (optional)<input maxLength={500} value={description}
                                              onInput={(e) => setDescription(e.currentTarget.value)} /></label>
        </div>
        <EventsPicker value={events} onChange={setEvents} />
        {events.length === 0 && <p class="muted">Choose at least one event.</p>}
        <div class="actions">
          <button type="button" onClick={close}>Cancel</button>
          <button type="submit" class="primary" disabled={action.busy || events.length === 0}>
            {action.busy ? "Registering…" : "Register endpoint"}</button>
        </div>
      </form>
      {action.error !== null && <ErrorNotice error={action.error} />}
    </>
  );
}
