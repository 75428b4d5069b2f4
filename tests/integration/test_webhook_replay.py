"""Sending events again, on the moto server with the real delivery path (fan-out, delivery queue,
delivery function, a loopback receiver verifying with the Standard Webhooks reference library):
a redelivery is a new attempt with the same webhook-id signed with the current secret; a replay
queues every matching event of the log for one webhook, page by page, once per webhook and event
however often it is asked for, with its progress readable; another tenant's webhooks, events and
replays answer as missing ones."""

from __future__ import annotations

from typing import Any

import pytest

from svc_core.contracts import events
from svc_core.domain import events as event_log
from svc_core.domain import webhook_replays
from svc_core.platform import timeutil
from tests.integration.test_webhook_delivery import attempts
from tests.support.functions import call
from tests.support.projects import assert_error
from tests.support.webhook_path import WebhookPath
from tests.support.webhook_receiver import new_secret, register


@pytest.fixture(autouse=True)
def small_pages(monkeypatch):
    monkeypatch.setattr(webhook_replays, "PAGE", 2)               # several pages for a handful of events
    monkeypatch.setattr(webhook_replays, "STEP_DELAY_SECONDS", 0)


def api(event: str, key: str, **kwargs: Any):
    return call("webhooks", event, token=key, **kwargs)


def redeliver(key: str, webhook_id: str, event_id: str):
    return api("Webhooks-RedeliverWebhookEvent", key, path_params={"id": webhook_id, "deliveryId": event_id})


def replay(key: str, webhook_id: str, **body: Any):
    return api("Webhooks-ReplayWebhookEvents", key, path_params={"id": webhook_id}, body=body)


def progress(key: str, webhook_id: str, replay_id: str):
    return api("Webhooks-GetWebhookReplay", key, path_params={"id": webhook_id, "replayId": replay_id})


def logged_event(path: WebhookPath, tenant_id: str, name: str, event_type: str = "project.created") -> events.Event:
    """An event as the outbox publisher handles it: kept in the log, then put on the bus."""
    event = events.new_event(event_type, tenant_id, {"id": f"proj_{name}", "name": name})
    assert event_log.record(event)
    path.publish(event)
    return event


def ids_received(receiver) -> list[str]:
    assert all(d.verify_error is None for d in receiver.deliveries)
    return [d.headers["webhook-id"] for d in receiver.deliveries]


def test_a_redelivery_is_a_new_attempt_with_the_same_webhook_id_and_the_current_secret(stack, path, receivers):
    tenant_id, key = stack.tenant_with_key()
    receiver = receivers()
    webhook_id = register(tenant_id, receiver.url, receiver.secret)
    event = logged_event(path, tenant_id, "Apollo")
    path.pump()
    assert ids_received(receiver) == [event.id]

    rotated = api("Webhooks-RotateWebhookSecret", key, path_params={"id": webhook_id},
                  body={"secret": (new := new_secret()), "overlapSeconds": 0})
    assert rotated.status == 200
    receiver.secret = new   # only the new secret may verify now
    answer = redeliver(key, webhook_id, event.id)
    assert answer.status == 202, answer
    assert answer.data["id"].startswith("rdl_") and answer.data["eventId"] == event.id
    assert answer.data == {"id": answer.data["id"], "webhookId": webhook_id, "eventId": event.id,
                           "eventType": "project.created"}
    path.pump()
    assert ids_received(receiver) == [event.id, event.id]
    assert receiver.deliveries[1].payload == event.payload()
    resent = [a for a in attempts(tenant_id, webhook_id) if a.get("resentBy")]
    assert [(a["resentBy"], a["outcome"], a["attempt"]) for a in resent] == [(answer.data["id"], "delivered", 1)]
    listed = api("Webhooks-ListWebhookDeliveries", key, path_params={"id": webhook_id}).data["items"]
    assert sorted(a["resentBy"] or "" for a in listed) == ["", answer.data["id"]]

    # Twice asked, twice sent: each redelivery is its own send.
    assert redeliver(key, webhook_id, event.id).status == 202
    path.pump()
    assert ids_received(receiver) == [event.id] * 3


def test_redelivery_refusals(stack, path, receivers):
    tenant_id, key = stack.tenant_with_key()
    other_tenant, other_key = stack.tenant_with_key()
    receiver = receivers()
    webhook_id = register(tenant_id, receiver.url, receiver.secret)
    theirs = register(other_tenant, receiver.url, receiver.secret)
    event = logged_event(path, tenant_id, "Apollo")
    other_event = logged_event(path, other_tenant, "Gemini")
    path.pump()
    before = len(receiver.deliveries)
    assert assert_error(redeliver(key, webhook_id, other_event.id), 404, "RESOURCE_NOT_FOUND") == {
        "id": other_event.id, "resource": "event"}
    assert assert_error(redeliver(key, theirs, event.id), 404, "RESOURCE_NOT_FOUND")["resource"] == "webhook"
    assert assert_error(redeliver(other_key, webhook_id, event.id), 404, "RESOURCE_NOT_FOUND")["resource"] == "webhook"
    assert assert_error(redeliver(key, webhook_id, "evt_123"), 404, "RESOURCE_NOT_FOUND")["id"] == "evt_123"
    reader = stack.new_key(tenant_id, ["webhooks:read", "events:read"])["key"]
    assert assert_error(redeliver(reader, webhook_id, event.id), 403, "FORBIDDEN")["requiredScope"] == "webhooks:write"
    assert api("Webhooks-UpdateWebhook", key, path_params={"id": webhook_id}, body={"enabled": False}).status == 200
    assert_error(redeliver(key, webhook_id, event.id), 409, "CONFLICT")
    assert_error(replay(key, webhook_id, since=timeutil.iso(timeutil.now() - 60)), 409, "CONFLICT")
    path.pump()
    assert len(receiver.deliveries) == before


def test_a_replay_after_an_outage_delivers_each_missed_event_once(stack, path, receivers):
    tenant_id, key = stack.tenant_with_key()
    up = {"value": True}
    receiver = receivers(respond=lambda n, d: (200, {}) if up["value"] else (503, {}))
    webhook_id = register(tenant_id, receiver.url, receiver.secret, events=["project.created", "project.deleted"])
    before = logged_event(path, tenant_id, "Before")
    path.pump()
    outage_start = timeutil.now()
    up["value"] = False
    missed = [logged_event(path, tenant_id, f"Missed{i}") for i in range(5)]
    unwanted = logged_event(path, tenant_id, "Renamed", "project.updated")   # not subscribed: never sent
    path.pump(timeout=30)
    assert len(path.dead_letters()) == 5   # every retry spent
    up["value"] = True
    delivered_before = ids_received(receiver).count(before.id)
    receiver.deliveries.clear()

    started = replay(key, webhook_id, since=timeutil.iso(outage_start - 1), onlyFailed=True)
    assert started.status == 202, started
    replay_id = started.data["id"]
    assert started.data["status"] == "running" and started.data["queued"] == 0
    path.pump(timeout=30)
    assert sorted(ids_received(receiver)) == sorted(e.id for e in missed)   # each once, none else
    assert {d.payload["id"]: d.payload for d in receiver.deliveries} == {e.id: e.payload() for e in missed}
    done = progress(key, webhook_id, replay_id)
    assert done.status == 200
    assert {k: done.data[k] for k in ("status", "matched", "queued", "skipped", "delivered", "failed", "onlyFailed")} == {
        "status": "completed", "matched": 6, "queued": 5, "skipped": 1, "delivered": 5, "failed": 0, "onlyFailed": True}
    # (the range began a second before the outage: `before` is in it, delivered already, so skipped)
    assert done.data["completed_at"] is not None and unwanted.id not in ids_received(receiver)

    # The same replay again: nothing is delivered twice.
    again = replay(key, webhook_id, since=timeutil.iso(outage_start - 1), onlyFailed=True)
    path.pump(timeout=30)
    assert len(receiver.deliveries) == 5
    assert progress(key, webhook_id, again.data["id"]).data["skipped"] == 6
    # All events since before the outage: only the one never replayed goes (delivered once already).
    everything = replay(key, webhook_id, since=timeutil.iso(outage_start - 600))
    path.pump(timeout=30)
    assert ids_received(receiver)[5:] == [before.id] and delivered_before == 1
    assert {k: progress(key, webhook_id, everything.data["id"]).data[k] for k in ("matched", "queued", "skipped")} == {
        "matched": 6, "queued": 1, "skipped": 5}


def test_a_replay_whose_deliveries_fail_leaves_them_to_a_later_one(stack, path, receivers):
    tenant_id, key = stack.tenant_with_key()
    up = {"value": False}
    receiver = receivers(respond=lambda n, d: (200, {}) if up["value"] else (500, {}))
    webhook_id = register(tenant_id, receiver.url, receiver.secret)
    since = timeutil.iso(timeutil.now() - 1)
    event = logged_event(path, tenant_id, "Apollo")
    path.pump(timeout=30)
    path.dead_letters()
    first = replay(key, webhook_id, since=since).data["id"]
    path.pump(timeout=30)
    path.dead_letters()
    assert {k: progress(key, webhook_id, first).data[k] for k in ("queued", "delivered", "failed")} == {
        "queued": 1, "delivered": 0, "failed": 1}
    up["value"] = True
    receiver.deliveries.clear()
    second = replay(key, webhook_id, since=since).data["id"]
    path.pump(timeout=30)
    assert ids_received(receiver) == [event.id]
    assert progress(key, webhook_id, second).data["delivered"] == 1


def test_one_replay_runs_at_a_time_and_bad_ranges_are_refused(stack, path, receivers):
    tenant_id, key = stack.tenant_with_key()
    receiver = receivers()
    webhook_id = register(tenant_id, receiver.url, receiver.secret)
    now = timeutil.now()
    for body in ({"since": "yesterday"}, {}, {"since": "2026-02-29T00:00:00Z"},
                 {"since": timeutil.iso(now), "onlyFailed": "yes"}, {"since": timeutil.iso(now), "extra": 1}):
        assert_error(replay(key, webhook_id, **body), 400, "VALIDATION_ERROR")
    # An empty range is no error: it matches nothing and completes (schema-valid, so accepted).
    for body in ({"since": timeutil.iso(now), "until": timeutil.iso(now - 60)}, {"since": timeutil.iso(now + 3600)}):
        empty = replay(key, webhook_id, **body)
        assert empty.status == 202, empty
        path.pump()
        done = progress(key, webhook_id, empty.data["id"]).data
        assert (done["status"], done["matched"], done["queued"]) == ("completed", 0, 0)
    first = replay(key, webhook_id, since=timeutil.iso(now - 60))
    assert first.status == 202
    running = replay(key, webhook_id, since=timeutil.iso(now - 60))
    assert assert_error(running, 409, "CONFLICT") == {"id": webhook_id, "resource": "replay"}
    path.pump()
    assert progress(key, webhook_id, first.data["id"]).data["status"] == "completed"
    assert replay(key, webhook_id, since=timeutil.iso(now - 60)).status == 202   # the next may start


def test_another_tenants_replays_answer_as_missing(stack, path, receivers):
    tenant_id, key = stack.tenant_with_key()
    _, other_key = stack.tenant_with_key()
    receiver = receivers()
    webhook_id = register(tenant_id, receiver.url, receiver.secret)
    replay_id = replay(key, webhook_id, since=timeutil.iso(timeutil.now() - 60)).data["id"]
    path.pump()
    assert assert_error(progress(other_key, webhook_id, replay_id), 404, "RESOURCE_NOT_FOUND")["resource"] == "webhook"
    assert_error(replay(other_key, webhook_id, since=timeutil.iso(timeutil.now())), 404, "RESOURCE_NOT_FOUND")
    assert assert_error(progress(key, webhook_id, "rpl_01JD2Q7ZB6V8S3K4X9W2M5N7PA"), 404,
                        "RESOURCE_NOT_FOUND")["resource"] == "replay"
    reader = stack.new_key(tenant_id, ["webhooks:read"])["key"]
    assert progress(reader, webhook_id, replay_id).status == 200
    assert_error(replay(reader, webhook_id, since=timeutil.iso(timeutil.now())), 403, "FORBIDDEN")


def test_a_replay_page_handed_back_queues_the_same_sends_and_counts_once(stack, path, receivers, monkeypatch):
    from svc_core.data import webhook_deliveries_table, webhook_delivery_queue
    tenant_id, key = stack.tenant_with_key()
    receiver = receivers()
    webhook_id = register(tenant_id, receiver.url, receiver.secret)
    since = timeutil.iso(timeutil.now() - 1)
    logged = []
    for name in ("One", "Two", "Three"):
        event = events.new_event("project.created", tenant_id, {"id": f"proj_{name}", "name": name})
        event_log.record(event)   # in the log only: never delivered
        logged.append(event)
    replay_id = replay(key, webhook_id, since=since).data["id"]
    path.clear()   # the replay's first page is run by hand below
    step = webhook_delivery_queue.ReplayStep(replayId=replay_id, webhookId=webhook_id, tenantId=tenant_id,
                                             position=webhook_replays.START)
    queued, pages = [], []

    class CrashOnce:
        """The deliveries table, whose first move of the replay fails (a crash after the page was queued)."""
        crashed = False

        def __getattr__(self, name):
            return getattr(webhook_deliveries_table, name)

        def advance_replay(self, *args, **kwargs):
            if not CrashOnce.crashed:
                CrashOnce.crashed = True
                raise RuntimeError("the function died here")
            return webhook_deliveries_table.advance_replay(*args, **kwargs)

    run = dict(deliveries=CrashOnce(), enqueue=queued.extend, enqueue_step=lambda s, *_: pages.append(s))
    with pytest.raises(RuntimeError):
        webhook_replays.run_step(step, **run)
    webhook_replays.run_step(step, **run)   # the message comes back
    webhook_replays.run_step(step, **run)   # a copy of it, later: the replay went on without it
    first_page = [e.id for e in logged[:2]]
    assert [m.event.id for m in queued] == first_page * 2 and {m.sendId for m in queued} == {replay_id}
    assert [p.position for p in pages] == [logged[1].id] * 2
    state = progress(key, webhook_id, replay_id).data
    assert (state["matched"], state["queued"], state["skipped"], state["status"]) == (2, 2, 0, "running")
    webhook_delivery_queue.enqueue(queued)   # both copies of the page's sends, then its next page
    webhook_delivery_queue.enqueue_step(pages[0])
    path.pump(timeout=30)
    assert sorted(ids_received(receiver)) == sorted(e.id for e in logged)   # each once
    state = progress(key, webhook_id, replay_id).data
    assert (state["matched"], state["queued"], state["delivered"], state["status"]) == (3, 3, 3, "completed")
