"""Sending events again to one webhook: a redelivery (one event) and a replay (every matching
event of a time range), both read from the event log (domain/events.py).

- Redelivery: the event is queued for this webhook under a new send id (rdl_...): a new attempt
  with the same `webhook-id` (the event id), signed with the webhook's current secrets.
- Replay (rpl_...): the events of the log between since and until (until defaults to the replay's
  start: later events reach the webhook anyway) that the webhook wants (its `events`), only those
  never delivered to it with onlyFailed, are queued for it, a page of PAGE events per message on the
  delivery queue, a page at most every STEP_DELAY_SECONDS (the replay's pace: at most 100 events a
  second). One replay of a webhook runs at a time (409 CONFLICT while one does).
- Idempotent: each event is queued by one replay only (a mark per webhook and event, kept 30 days),
  so replaying a range twice does not deliver an event twice; an event whose replayed delivery
  failed for good can be queued by a later replay. A page handed back (a crash) queues the same
  events again under the same send id, which the delivery deduplicates, and counts them once.
- Progress: the replay's counts (matched, queued, skipped: not queued as delivered already or
  queued by another replay; delivered, failed: the queued ones' outcomes) and its status (running,
  completed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from svc_core.auth.context import TenantContext
from svc_core.contracts.events import Event
from svc_core.data import events_table, webhook_deliveries_table, webhook_delivery_queue, webhooks_table
from svc_core.domain import events, webhooks
from svc_core.platform import ids, timeutil
from svc_core.platform.errors import Conflict, NotFound
from svc_core.platform.log import logger

if TYPE_CHECKING:
    from svc_core.domain.models.webhooks import ReplayRequest

REPLAY_PREFIX = "rpl"
REDELIVERY_PREFIX = "rdl"
PAGE = 100
STEP_DELAY_SECONDS = 1
LEASE_SECONDS = 3600          # a replay that stopped without finishing blocks the next one at most this long
START = "start"


def _view(record: dict[str, Any], webhook_id: str) -> dict[str, Any]:
    return {"id": record["replayId"], "webhookId": webhook_id, "status": record["status"], "since": record["since"],
            "until": record["until"], "onlyFailed": record["onlyFailed"],
            **{n: record.get(n, 0) for n in ("matched", "queued", "skipped", "delivered", "failed")},
            "created_at": record["created_at"], "completed_at": record.get("completed_at")}


def redeliver(ctx: TenantContext, webhook_id: str, event_id: str,
              enqueue: Callable[[list[webhook_delivery_queue.DeliveryMessage]], None] = webhook_delivery_queue.enqueue
              ) -> dict[str, Any]:
    webhooks.enabled_webhook(ctx, webhook_id, "redeliver an event")
    event = Event.of(events.get_event(ctx, event_id))
    send_id = ids.new_id(REDELIVERY_PREFIX)
    enqueue([webhook_delivery_queue.delivery_message(event, webhook_id, send_id)])
    return {"id": send_id, "webhookId": webhook_id, "eventId": event.id, "eventType": event.type}


def start_replay(ctx: TenantContext, webhook_id: str, body: ReplayRequest, deliveries=webhook_deliveries_table,
                 enqueue_step: Callable[..., None] = webhook_delivery_queue.enqueue_step) -> dict[str, Any]:
    webhooks.enabled_webhook(ctx, webhook_id, "replay events to it")
    now = timeutil.now()
    since = events.parse_time(body.since, "since")
    until = events.parse_time(body.until, "until") if body.until is not None else now
    # An empty window (until before since, or a since still to come) is no error: the replay matches
    # nothing and completes, as the event log's list answers an empty page for it.
    record = {"replayId": ids.new_id(REPLAY_PREFIX), "tenantId": ctx.tenant_id, "since": timeutil.iso(since),
              "until": timeutil.iso(until), "onlyFailed": body.onlyFailed, "status": "running", "position": START,
              "matched": 0, "queued": 0, "skipped": 0, "delivered": 0, "failed": 0,
              "created_at": timeutil.iso(now), "completed_at": None}
    if not deliveries.start_replay(webhook_id, record, now, LEASE_SECONDS):
        raise Conflict("A replay of this webhook is running; wait until it completes (GET .../replays/{id}).",
                       {"id": webhook_id, "resource": "replay"})
    enqueue_step(webhook_delivery_queue.ReplayStep(replayId=record["replayId"], webhookId=webhook_id,
                                                   tenantId=ctx.tenant_id, position=START))
    return _view(record, webhook_id)


def get_replay(ctx: TenantContext, webhook_id: str, replay_id: str, deliveries=webhook_deliveries_table
               ) -> dict[str, Any]:
    webhooks.get_webhook(ctx, webhook_id)
    record = deliveries.get_replay(ctx.tenant_id, webhook_id, replay_id) if ids.is_id(replay_id, REPLAY_PREFIX) else None
    if record is None:
        raise NotFound("The replay does not exist.", {"id": replay_id, "resource": "replay"})
    return _view(record, webhook_id)


class StepEarly(Exception):
    """The step's message came before the previous step recorded its end: take it again shortly."""


def _ahead(step_position: str, replay_position: str) -> bool:
    return step_position != START and (replay_position == START or step_position > replay_position)


def run_step(step: webhook_delivery_queue.ReplayStep, deliveries=webhook_deliveries_table,
             enqueue: Callable[[list[webhook_delivery_queue.DeliveryMessage]], None] = webhook_delivery_queue.enqueue,
             enqueue_step: Callable[..., None] = webhook_delivery_queue.enqueue_step) -> None:
    """Queue one page of the replay's events, then hand the next page to the queue (or complete)."""
    replay = deliveries.get_replay(step.tenantId, step.webhookId, step.replayId)
    if replay is not None and replay["status"] == "running" and _ahead(step.position, replay["position"]):
        raise StepEarly(f"replay {step.replayId} is not at {step.position} yet")
    if replay is None or replay["status"] != "running" or replay["position"] != step.position:
        return  # a step already done (a copy of its message): the replay went on without it
    now = timeutil.now()
    webhook = webhooks_table.get(step.tenantId, step.webhookId)
    if webhook is None or not webhook.get("enabled"):
        deliveries.advance_replay(step.webhookId, step.replayId, step.position, None, {}, timeutil.iso(now))
        return  # deleted or disabled meanwhile: nothing more would be delivered
    low, high = events.id_range(events.epoch_of(replay["since"]), events.epoch_of(replay["until"]))
    items, last = events_table.query(step.tenantId, low=low, high=high, newest_first=False, limit=PAGE, now=now,
                                     after=None if step.position == START else step.position,
                                     event_types=webhooks.wanted_types(webhook))
    messages, skipped = [], 0
    for item in items:
        if replay["onlyFailed"] and deliveries.is_delivered(step.webhookId, item["id"]):
            skipped += 1
        elif deliveries.mark_replayed(step.webhookId, item["id"], step.replayId, now):
            messages.append(webhook_delivery_queue.delivery_message(Event.of(item), step.webhookId, step.replayId))
        else:
            skipped += 1
    enqueue(messages)
    counts = {"matched": len(items), "queued": len(messages), "skipped": skipped}
    if last:
        # The next page is queued before the position moves: a crash in between repeats this page
        # (its events deduplicated), never stalls the replay.
        enqueue_step(replace(step, position=last), STEP_DELAY_SECONDS)
    deliveries.advance_replay(step.webhookId, step.replayId, step.position, last, counts,
                              None if last else timeutil.iso(now))
    logger.info("replay step", extra={"replay_id": step.replayId, "webhook_id": step.webhookId, **counts,
                                      "finished": last is None})
