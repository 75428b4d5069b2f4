/**
 * One webhook endpoint: its settings (enabled, events, description), a test event; the page's actions
 * menu rotates the secret (the overlap asked in a dialog, the new secret shown there once) or deletes
 * the endpoint (asked first); its deliveries (outcome, HTTP status, attempt,
 * latency, next retry, error) with redelivery; a replay of the events since a time, with its progress.
 */
import type { components } from "@svc/client";
import { useEffect, useRef, useState } from "preact/hooks";

import { useAction } from "../action";
import { useClient } from "../api";
import { Confirm } from "../components/confirm";
import { Dialog } from "../components/dialog";
import { ActionsMenu } from "../components/menu";
import { NewValue, OverlapForm } from "../components/rotate";
import { PagedTable } from "../components/paged-table";
import { ErrorNotice, Show } from "../components/status";
import { ShortId, Time } from "../components/readable";
import { shortId } from "../format";
import { useLoad } from "../load";
import { deliveryRow, localInputToIso, type Replay, replayDone, replayProgress, toLocalInput,
         type WebhookEvent } from "../observe";
import { usePaged } from "../paged";
import { navigate } from "../router";
import { toast } from "../toast";
import { EventsPicker, eventsLabel } from "./webhooks";

type Webhook = components["schemas"]["Webhook"];
const OVERLAPS = [
  { seconds: 0, label: "no time: it stops now" }, { seconds: 3600, label: "1 hour" },
  { seconds: 86400, label: "24 hours" }, { seconds: 604800, label: "7 days" },
];
/** After a send, the deliveries are read again at these delays (ms): an attempt lands within seconds. */
const REFRESHES = [700, 2000, 5000, 10000, 20000];

export function WebhookPage({ params }: { params: Record<string, string> }) {
  const client = useClient();
  const id = params["id"] ?? "";
  const hook = useLoad(() => client.webhooks.get(id), [id]);
  const deliveries = usePaged((cursor) => client.call("list_webhook_deliveries",
    { path: { id }, query: { limit: 20, ...(cursor ? { cursor } : {}) } }), [id]);
  const timers = useRef<number[]>([]);
  useEffect(() => () => timers.current.forEach((t) => clearTimeout(t)), []);
  const refreshSoon = () => {
    timers.current.forEach((t) => clearTimeout(t));
    timers.current = REFRESHES.map((ms) => window.setTimeout(deliveries.reload, ms));
  };
  return (
    <>
      <p><a href="#/webhooks">← Webhooks</a></p>
      <div class="page-head">
        <h1>Webhook endpoint</h1>
        {hook.state === "ready" && <EndpointActions hook={hook.data} changed={hook.reload} />}
      </div>
      <Show loaded={hook} what="the endpoint">
        {(data) => <>
          <Endpoint hook={data} changed={hook.reload} sent={refreshSoon} />
          <ReplayEvents hook={data} progressed={deliveries.reload} />
        </>}
      </Show>
      <section aria-labelledby="deliveries-title">
        <div class="heading-row">
          <h2 id="deliveries-title">Deliveries</h2>
          <button type="button" onClick={deliveries.reload}>Refresh</button>
        </div>
        <p class="muted">One row per attempt, newest first; kept 30 days.</p>
        <PagedTable paged={deliveries} what="the deliveries" empty="No deliveries yet: send a test event."
                    columns={["Event", "Outcome", "HTTP status", "Attempt", "Latency", "Time", "Next retry", "Sent by",
                              "Error", "Actions"]}
                    row={(attempt) => {
          const row = deliveryRow(attempt);
          return (
            <tr key={row.key}>
              <th scope="row">{row.eventType}<div class="muted wrap">
                {row.canRedeliver ? <a href={`#/events/${row.eventId}`} title={row.eventId}>{shortId(row.eventId)}</a>
                  : <code title={row.eventId}>{shortId(row.eventId)}</code>}</div></th>
              <td data-label="Outcome"><span class={`badge ${row.outcome}`}>{row.outcome}</span></td>
              <td data-label="HTTP status">{row.status}</td>
              <td data-label="Attempt">{row.attempt}</td>
              <td data-label="Latency">{row.latency}</td>
              <td data-label="Time"><Time iso={row.attemptedAt} /></td>
              <td data-label="Next retry"><Time iso={row.nextRetryAt} never="—" /></td>
              <td data-label="Sent by">{row.sentBy}{row.sentById && <> <ShortId id={row.sentById} /></>}</td>
              {row.error ? <td data-label="Error" class="wrap">{row.error}</td> : <td class="wrap" />}
              <td>{row.canRedeliver
                ? <Redeliver webhookId={id} eventId={row.eventId} eventType={row.eventType} sent={refreshSoon} />
                : <span class="muted">test events are not kept</span>}</td>
            </tr>
          );
        }} />
      </section>
    </>
  );
}

function Endpoint({ hook, changed, sent }: { hook: Webhook; changed: () => void; sent: () => void }) {
  const client = useClient();
  const action = useAction();
  return (
    <>
      <section class="card" aria-labelledby="endpoint-title">
        <h2 id="endpoint-title" class="wrap">{hook.url}</h2>
        <dl class="facts">
          <dt>Status</dt><dd><span class={`badge ${hook.enabled ? "active" : "failed"}`}>{hook.enabled ? "enabled" : "disabled"}</span>
            {hook.disabledReason && <> {hook.disabledReason} (since <Time iso={hook.disabled_at} />)</>}</dd>
          <dt>Events</dt><dd>{eventsLabel(hook.events)}</dd>
          <dt>Description</dt><dd>{hook.description ?? "none"}</dd>
          <dt>Failing since</dt><dd><Time iso={hook.first_failure_at} never="not failing" /></dd>
          <dt>Created</dt><dd><Time iso={hook.created_at} /></dd>
          <dt>Id</dt><dd><ShortId id={hook.id} label="the endpoint id" /></dd>
        </dl>
        <div class="row-actions">
          <button type="button" disabled={action.busy || !hook.enabled} onClick={() => void action.run(async () => {
            const queued = await client.webhooks.test(hook.id);
            toast(`Test event ${queued.id} queued: its delivery appears below.`);
            sent();
          })}>Send test event</button>
        </div>
        {!hook.enabled && <p class="muted">Enable the endpoint to send it a test event, a redelivery or a replay.</p>}
        {action.error !== null && <ErrorNotice error={action.error} />}
      </section>
      <EditEndpoint key={hook.version} hook={hook} saved={changed} />
    </>
  );
}

/** The page's actions: rotate the signing secret (in a dialog), delete the endpoint (asked first). */
function EndpointActions({ hook, changed }: { hook: Webhook; changed: () => void }) {
  const client = useClient();
  const action = useAction();
  const [asking, setAsking] = useState<"rotate" | "delete" | null>(null);
  return (
    <div class="row-actions">
      <ActionsMenu name={hook.url} disabled={action.busy} items={[
        { label: "Rotate secret…", onSelect: () => setAsking("rotate") },
        { label: "Delete endpoint…", danger: true, onSelect: () => setAsking("delete") },
      ]} />
      <Dialog open={asking === "rotate"} title="Rotate the signing secret" onClose={() => setAsking(null)}>
        <RotateSecret hook={hook} rotated={changed} close={() => setAsking(null)} />
      </Dialog>
      <Confirm open={asking === "delete"} label="Delete endpoint" onClose={() => setAsking(null)}
               question={`Delete the endpoint ${hook.url}? No delivery is made to it any more; this cannot be undone.`}
               onConfirm={() => void action.run(async () => {
                 await client.webhooks.delete(hook.id);
                 toast(`The endpoint ${hook.url} was deleted.`);
                 navigate("/webhooks");
               })} />
      {action.error !== null && <ErrorNotice error={action.error} />}
    </div>
  );
}

/** The rotation's question (how long the current secret keeps signing), then the new secret, once. */
function RotateSecret({ hook, rotated, close }: { hook: Webhook; rotated: () => void; close: () => void }) {
  const client = useClient();
  const [secret, setSecret] = useState<string | null>(null);
  if (secret) {
    return (
      <NewValue value={secret} label="The new signing secret" close={close}>
        Every delivery is now signed with it (and with the previous secret until the overlap ends). Copy it now: it
        is not shown again.
      </NewValue>
    );
  }
  return (
    <OverlapForm question="The current secret keeps signing for" options={OVERLAPS} submit="Rotate secret"
                 close={close} rotate={async (overlapSeconds) => {
                   const made = await client.call("rotate_webhook_secret", { path: { id: hook.id }, body: { overlapSeconds } });
                   setSecret(made.secret);
                   rotated();
                 }}
                 explain={<>A new secret is made; the current one keeps signing for the overlap chosen, so your
                   receiver can move to the new one. After a leak, choose no time.</>} />
  );
}

function EditEndpoint({ hook, saved }: { hook: Webhook; saved: () => void }) {
  const client = useClient();
  const action = useAction();
  const [enabled, setEnabled] = useState(hook.enabled);
  const [events, setEvents] = useState<WebhookEvent[]>(hook.events as WebhookEvent[]);
  const [description, setDescription] = useState(hook.description ?? "");
  return (
    <section class="card" aria-labelledby="edit-title">
      <h2 id="edit-title">Settings</h2>
      <form onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          await client.webhooks.update(hook.id, { enabled, events, description: description.trim() || null });
          toast("The endpoint's settings are saved.");
          saved();
        });
      }}>
        <label class="check"><input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
          Enabled (deliveries are made)</label>
        <div class="fields">
          <label>Description<input maxLength={500} value={description} onInput={(e) => setDescription(e.currentTarget.value)} /></label>
        </div>
        <EventsPicker value={events} onChange={setEvents} />
        <button type="submit" class="primary" disabled={action.busy || events.length === 0}>Save settings</button>
      </form>
      {action.error !== null && <ErrorNotice error={action.error} />}
    </section>
  );
}

function Redeliver({ webhookId, eventId, eventType, sent }: { webhookId: string; eventId: string; eventType: string;
                                                               sent: () => void }) {
  const client = useClient();
  const action = useAction();
  return (
    <div class="row-actions">
      <button type="button" disabled={action.busy} aria-label={`Redeliver ${eventType} ${eventId}`}
              onClick={() => void action.run(async () => {
                await client.call("redeliver_webhook_event", { path: { id: webhookId, deliveryId: eventId } });
                toast(`Redelivery of ${eventType} queued: its attempt appears below.`);
                sent();
              })}>Redeliver</button>
      {action.error !== null && <ErrorNotice error={action.error} />}
    </div>
  );
}

function ReplayEvents({ hook, progressed }: { hook: Webhook; progressed: () => void }) {
  const client = useClient();
  const action = useAction();
  const [since, setSince] = useState(() => toLocalInput(new Date(Date.now() - 3600_000)));
  const [onlyFailed, setOnlyFailed] = useState(false);
  const [replay, setReplay] = useState<Replay | null>(null);
  const [pollError, setPollError] = useState<unknown>(null);
  const sinceIso = localInputToIso(since);

  useEffect(() => {
    if (!replay || replayDone(replay)) return;
    const timer = window.setTimeout(() => {
      client.call("get_webhook_replay", { path: { id: hook.id, replayId: replay.id } }).then((now) => {
        setReplay(now);
        if (replayDone(now)) progressed();
      }, setPollError);
    }, 1000);
    return () => clearTimeout(timer);
  }, [replay]);

  return (
    <section class="card" aria-labelledby="replay-title">
      <h2 id="replay-title">Replay events</h2>
      <p>Send again, to this endpoint only, every event of the log since a time (up to 30 days back) of the types it
        receives. An event is queued by one replay at most; to send one event again, redeliver it.</p>
      <form onSubmit={(event) => {
        event.preventDefault();
        if (!sinceIso) return;
        setPollError(null);
        void action.run(async () => setReplay(await client.call("replay_webhook_events",
          { path: { id: hook.id }, body: { since: sinceIso, onlyFailed } })));
      }}>
        <div class="fields">
          <label>Since (your local time)<input type="datetime-local" required value={since}
                                               aria-describedby="replay-since-utc"
                                               onInput={(e) => setSince(e.currentTarget.value)} /></label>
        </div>
        <p id="replay-since-utc" class="muted">{sinceIso ? `${sinceIso} in UTC` : "Choose a date and time."}</p>
        <label class="check"><input type="checkbox" checked={onlyFailed} onChange={(e) => setOnlyFailed(e.currentTarget.checked)} />
          Only events not delivered to this endpoint</label>
        <button type="submit" class="primary" disabled={action.busy || !sinceIso || !hook.enabled
          || (replay !== null && !replayDone(replay))}>Replay</button>
      </form>
      {replay && (
        <div role="status" aria-live="polite" class="replay">
          <p>Replay <code title={replay.id}>{shortId(replay.id)}</code> since <Time iso={replay.since} />{replay.onlyFailed ? " (only failed)" : ""}</p>
          <p><span class={`badge ${replayDone(replay) ? "completed" : ""}`}>{replayDone(replay) ? "done" : replay.status}</span>
            {" "}{replayProgress(replay)}</p>
          {replay.queued > 0 && <progress max={replay.queued} value={replay.delivered + replay.failed}
                                          aria-label="Replayed events delivered or failed" />}
        </div>
      )}
      {pollError !== null && <ErrorNotice error={pollError} onRetry={() => {
        setPollError(null);
        if (replay) setReplay({ ...replay });
      }} />}
      {action.error !== null && <ErrorNotice error={action.error} />}
    </section>
  );
}
