"""The event log end to end on the moto server: the outbox publisher keeps every event it publishes
in its tenant's log (once, however often the stream hands it over), and GET /events and
GET /events/{id} read it newest first, filtered by type, object and time, in cursor pages, as the
webhooks carry each event; another tenant's events answer as missing ones; expired ones are gone."""

from __future__ import annotations

from typing import Any

import pytest

from svc_core.adapters.dynamo import to_item
from svc_core.contracts.events import Event
from svc_core.domain import events as event_log
from svc_core.platform import ids, timeutil
from tests.support.functions import call, load_function
from tests.support.projects import assert_error
from tests.support.stack import provisioned_stack

BASE = 1_795_000_000.0   # 2026-11-18, well inside the retention of the tests' now


@pytest.fixture(scope="module")
def stack(emulator):
    yield from provisioned_stack(emulator)


def listed(key: str, **query: Any):
    return call("events", "Events-ListEvents", token=key, query={k: str(v) for k, v in query.items()} or None)


def get(key: str, event_id: str):
    return call("events", "Events-GetEvent", token=key, path_params={"id": event_id})


def make_event(tenant_id: str, event_type: str, at: float, data: dict[str, Any]) -> Event:
    return Event(id=f"evt_{ids.new_ulid(int(at * 1000))}", type=event_type, timestamp=timeutil.iso(at),
                 tenantId=tenant_id, data=data)


def stream_batch(events: list[Event]) -> dict[str, Any]:
    """The outbox table's stream records of these events, as the mapping hands them to the publisher."""
    return {"Records": [{"eventID": str(i), "eventName": "INSERT", "eventSource": "aws:dynamodb",
                         "eventSourceARN": "arn:aws:dynamodb:us-east-1:123456789012:table/outbox/stream/x",
                         "dynamodb": {"Keys": {"id": {"S": e.id}}, "SequenceNumber": str(100 + i),
                                      "NewImage": to_item({**e.payload(), "ttl": int(BASE) + 7 * 86400}),
                                      "StreamViewType": "NEW_IMAGE"}}
                        for i, e in enumerate(events)]}


def history(tenant_id: str) -> list[Event]:
    """Six events a minute apart: two projects' lives and an agent run."""
    return [make_event(tenant_id, "project.created", BASE, {"id": "proj_A", "name": "Apollo"}),
            make_event(tenant_id, "project.created", BASE + 60, {"id": "proj_B", "name": "Gemini"}),
            make_event(tenant_id, "project.updated", BASE + 120, {"id": "proj_A", "name": "Apollo 2",
                                                                   "changes": {"name": "Apollo 2"}}),
            make_event(tenant_id, "agent.started", BASE + 180, {"runId": "run_X", "agentId": "agt_1",
                                                                 "projectId": "proj_A", "status": "running"}),
            make_event(tenant_id, "agent.completed", BASE + 240, {"runId": "run_X", "agentId": "agt_1",
                                                                   "projectId": "proj_A", "status": "completed"}),
            make_event(tenant_id, "project.deleted", BASE + 300, {"id": "proj_B", "name": "Gemini"})]


@pytest.fixture(scope="module")
def logged(stack) -> dict[str, Any]:
    tenant, key = stack.tenant_with_key()
    events = history(tenant)
    publisher = load_function("outbox_publisher")
    assert publisher.lambda_handler(stream_batch(events), None) == {"batchItemFailures": []}
    return {"tenant": tenant, "key": key, "events": [e.payload() for e in events]}


def test_the_publisher_keeps_each_event_once_in_the_log(stack, logged):
    key, events = logged["key"], logged["events"]
    # The stream hands the batch over again (a put that failed after these): nothing is kept twice.
    publisher = load_function("outbox_publisher")
    assert publisher.lambda_handler(stream_batch([Event.of(e) for e in events]), None) == {"batchItemFailures": []}
    page = listed(key, limit=100)
    assert page.status == 200
    assert page.data == {"items": list(reversed(events)), "nextCursor": None}  # newest first, as sent
    for event in events:
        assert get(key, event["id"]).data == event


def test_filters_by_type_object_and_time(logged):
    key, events = logged["key"], logged["events"]

    def ids_of(**query: Any) -> list[str]:
        reply = listed(key, limit=100, **query)
        assert reply.status == 200, reply
        return [e["id"] for e in reply.data["items"]]

    newest_first = [e["id"] for e in reversed(events)]
    assert ids_of(type="project.created") == [events[1]["id"], events[0]["id"]]
    assert ids_of(objectId="proj_A") == [events[2]["id"], events[0]["id"]]
    assert ids_of(objectId="run_X") == [events[4]["id"], events[3]["id"]]
    assert ids_of(objectId="proj_A", type="project.updated") == [events[2]["id"]]
    assert ids_of(since=timeutil.iso(BASE + 120)) == newest_first[:4]   # since is included
    assert ids_of(until=timeutil.iso(BASE + 60)) == newest_first[4:]    # until too
    assert ids_of(since=timeutil.iso(BASE + 60), until="2026-11-18T12:08:40+01:00") == [events[2]["id"], events[1]["id"]]
    assert ids_of(since=timeutil.iso(BASE + 400)) == []
    assert ids_of(since=timeutil.iso(BASE + 300), until=timeutil.iso(BASE)) == []   # an empty range
    for bad in ({"since": "yesterday"}, {"until": "2026-11-18"}, {"type": "project.renamed"}, {"limit": 0}):
        assert_error(listed(key, **bad), 400, "VALIDATION_ERROR")


def test_pages_newest_first_with_a_cursor_and_filters(logged):
    key, events = logged["key"], logged["events"]
    seen, cursor = [], None
    while True:
        reply = listed(key, limit=2, **({"cursor": cursor} if cursor else {}))
        assert reply.status == 200 and len(reply.data["items"]) <= 2
        seen += reply.data["items"]
        cursor = reply.data["nextCursor"]
        if cursor is None:
            break
    assert seen == list(reversed(events))
    # A filtered list pages too; a page may be short, never repeats and never skips one.
    seen, cursor = [], None
    for _ in range(10):
        reply = listed(key, limit=1, type="project.created", **({"cursor": cursor} if cursor else {}))
        seen += [e["id"] for e in reply.data["items"]]
        cursor = reply.data["nextCursor"]
        if cursor is None:
            break
    assert seen == [events[1]["id"], events[0]["id"]]
    # A cursor past the range's end continues within it; one before its start ends the list.
    from svc_core.contracts.cursors import id_cursor
    assert listed(key, cursor=id_cursor(events[3]["id"]), until=timeutil.iso(BASE + 60)).data["items"] == [
        events[1], events[0]]
    assert listed(key, cursor=id_cursor(events[0]["id"]), since=timeutil.iso(BASE + 60)).data["items"] == []


def test_another_tenants_events_answer_as_missing_ones(stack, logged):
    other_tenant, other_key = stack.tenant_with_key()
    theirs = logged["events"][0]
    missing = get(other_key, "evt_01JD2Q7ZB6V8S3K4X9W2M5N7PA")
    foreign = get(other_key, theirs["id"])
    assert assert_error(foreign, 404, "RESOURCE_NOT_FOUND") == {"id": theirs["id"], "resource": "event"}
    assert foreign.error["message"] == missing.error["message"]
    assert listed(other_key, limit=100).data == {"items": [], "nextCursor": None}
    assert listed(other_key, objectId="proj_A").data["items"] == []
    assert_error(get(other_key, "evt_123"), 404, "RESOURCE_NOT_FOUND")


def test_expired_events_are_gone_though_still_stored(stack):
    tenant, key = stack.tenant_with_key()
    old = make_event(tenant, "project.created", timeutil.now() - 31 * 86400, {"id": "proj_old"})
    fresh = make_event(tenant, "project.created", timeutil.now() - 29 * 86400, {"id": "proj_new"})
    assert event_log.record(old) and event_log.record(fresh)
    assert not event_log.record(fresh)   # kept already
    assert [e["id"] for e in listed(key).data["items"]] == [fresh.id]
    assert_error(get(key, old.id), 404, "RESOURCE_NOT_FOUND")


def test_the_scope_and_the_roles(stack, logged):
    tenant = logged["tenant"]
    event_id = logged["events"][0]["id"]
    for token in (stack.new_key(tenant, ["webhooks:read", "projects:read"])["key"],):
        assert assert_error(listed(token), 403, "FORBIDDEN")["requiredScope"] == "events:read"
        assert assert_error(get(token, event_id), 403, "FORBIDDEN")["requiredScope"] == "events:read"
    for role in ("member", "admin", "owner"):
        assert get(stack.user_token(tenant, role), event_id).status == 200
    assert listed(stack.new_key(tenant, ["events:read"])["key"]).status == 200
    assert_error(listed("svc_sdk_notakey"), 401, "UNAUTHORIZED")


# ---- the event stream (GET /events/stream) -------------------------------------------------------

def test_the_stream_follower_sends_each_event_once_even_when_logged_late(stack):
    from svc_core.domain import event_stream
    tenant, _ = stack.tenant_with_key()
    ctx = type("Ctx", (), {"tenant_id": tenant})()   # only the tenant is read
    now = timeutil.now()
    before = make_event(tenant, "project.created", now - 60, {"id": "proj_before"})
    assert event_log.record(before)
    follower = event_stream.open_stream(ctx, None, None)
    assert follower.step() == []                         # nothing logged since it started
    first = make_event(tenant, "project.created", timeutil.now(), {"id": "proj_1"})
    event_log.record(first)
    assert [e["id"] for e in follower.step()] == [first.id]
    # An event that happened before `first` but is logged after it (the publisher's moment) still comes, once.
    late = make_event(tenant, "project.deleted", timeutil.now() - 2, {"id": "proj_late"})
    event_log.record(late)
    second = make_event(tenant, "project.created", timeutil.now(), {"id": "proj_2"})
    event_log.record(second)
    assert [e["id"] for e in follower.step()] == [late.id, second.id]
    assert follower.step() == []
    # Only the types asked for; a resumed stream starts after its Last-Event-ID.
    only_created = event_stream.open_stream(ctx, ["project.created"], first.id)
    assert [e["id"] for e in only_created.step()] == [second.id]
    resumed = event_stream.open_stream(ctx, None, first.id)
    assert [e["id"] for e in resumed.step()] == [late.id, second.id]
    assert resumed.step() == []


def test_the_buffered_stream_answers_server_sent_events(stack, logged):
    key, events = logged["key"], logged["events"]

    def stream(**query: str):
        return call("event_stream", "EventStream-StreamEvents", token=key, query=query or None)

    reply = stream(lastEventId=events[3]["id"], types="agent.completed,project.deleted")
    assert reply.status == 200 and reply.headers["content-type"].startswith("text/event-stream")
    blocks = [b for b in reply.text.split("\n\n") if b.strip()]
    assert blocks[0].startswith("retry: 2000")
    import json as _json
    sent = [dict(line.split(": ", 1) for line in b.splitlines() if not line.startswith("retry")) for b in blocks]
    assert [(s["id"], s["event"], _json.loads(s["data"])) for s in sent] == [
        (e["id"], e["type"], e) for e in events[4:]]
    assert_error(stream(types="project.renamed"), 400, "VALIDATION_ERROR")
    assert_error(stream(lastEventId="42"), 400, "VALIDATION_ERROR")
    reader = stack.new_key(logged["tenant"], ["webhooks:read"])["key"]
    refused = call("event_stream", "EventStream-StreamEvents", token=reader)
    assert assert_error(refused, 403, "FORBIDDEN")["requiredScope"] == "events:read"
