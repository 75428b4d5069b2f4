"""Project events: written to the outbox in the change's own transaction, then carried from
the outbox table's stream by the outbox publisher to the EventBridge bus, whose rule sends
them to the webhook queue. A put that EventBridge refuses is reported back to the stream
(batchItemFailures) and arrives when the stream hands the record over again.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from botocore.exceptions import ClientError

from svc_core.adapters import aws, event_bus
from svc_core.contracts.events import new_event
from svc_core.data import outbox_table
from svc_core.domain import events as event_log
from svc_core.platform.config import settings
from tests.support.functions import load_function
from tests.support.projects import EVENT_ID, ISO_UTC, create, delete, outbox_events, patch
from tests.support.queues import drain_queue
from tests.support.streams import stream_arn, table_stream_event

# They read DynamoDB streams and queues, which a wipe between tests would leave records in.
pytestmark = pytest.mark.fresh_stack

QUEUE = "WebhookQueue"
WEEK = 7 * 24 * 3600


def publish(event: dict[str, Any]) -> dict[str, Any]:
    return load_function("outbox_publisher").lambda_handler(event, None)


def outbox_stream() -> dict[str, Any]:
    return table_stream_event(settings().outbox_table)


def sequence_numbers(event: dict[str, Any]) -> list[str]:
    return [r["dynamodb"]["SequenceNumber"] for r in event["Records"]]


def published(outbox_event: dict[str, Any]) -> dict[str, Any]:
    """The detail a consumer sees: the outbox event without its storage-only ttl."""
    return {k: v for k, v in outbox_event.items() if k != "ttl"}


def assert_delivered(messages: list[dict[str, Any]], events: list[dict[str, Any]]) -> None:
    """Each event arrived once, as EventBridge delivers it: detail-type = type, detail = event."""
    assert sorted(m["detail"]["id"] for m in messages) == sorted(e["id"] for e in events)
    by_id = {m["detail"]["id"]: m for m in messages}
    for event in events:
        message = by_id[event["id"]]
        assert message["detail-type"] == event["type"]
        assert message["source"] == settings().event_source
        assert message["detail"] == published(event)
        assert set(message["detail"]) == {"id", "type", "timestamp", "tenantId", "data"}


class FlakyEvents:
    """The EventBridge client, except that the entries whose number (1-based, in the order they
    were sent, over all calls) is in fail_on are refused: with a FailedEntryCount and an
    ErrorCode on each (mode "entry": the call's other entries go on the bus, as EventBridge does),
    or by the whole call raising (mode "raise": none of its entries goes). `sent` holds each
    call's entries."""

    def __init__(self, real, fail_on: set[int], mode: str) -> None:
        self.real, self.fail_on, self.mode = real, fail_on, mode
        self.sent: list[list[dict[str, Any]]] = []

    @property
    def calls(self) -> int:
        return len(self.sent)

    def put_events(self, Entries: list[dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
        first = sum(len(call) for call in self.sent) + 1
        self.sent.append(Entries)
        refused = {i for i in range(len(Entries)) if first + i in self.fail_on}
        if refused and self.mode == "raise":
            raise ClientError({"Error": {"Code": "InternalException", "Message": "try again"}}, "PutEvents")
        taken = [e for i, e in enumerate(Entries) if i not in refused]
        answer = self.real.put_events(Entries=taken, **kwargs) if taken else {"FailedEntryCount": 0, "Entries": []}
        results = iter(answer["Entries"])
        return {"FailedEntryCount": answer["FailedEntryCount"] + len(refused),
                "Entries": [{"ErrorCode": "InternalFailure", "ErrorMessage": "try again"} if i in refused
                            else next(results) for i in range(len(Entries))]}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


@pytest.fixture
def flaky_events(monkeypatch):
    """Install a FlakyEvents as the service's EventBridge client; returns its factory."""
    def install(fail_on: set[int], mode: str = "entry") -> FlakyEvents:
        real_client = aws.client
        flaky = FlakyEvents(real_client("events"), fail_on, mode)

        def client(service: str):
            return flaky if service == "events" else real_client(service)

        client.cache_clear = real_client.cache_clear  # the stack's teardown forgets cached clients
        monkeypatch.setattr(aws, "client", client)
        return flaky
    return install


@pytest.fixture
def put_calls(stack):
    """The entries of each PutEvents call the EventBridge client makes, as botocore sends them."""
    sent: list[list[dict[str, Any]]] = []
    events_client = aws.client("events")

    def count(params: dict[str, Any], **_: Any) -> None:
        sent.append(params["Entries"])

    events_client.meta.events.register("provide-client-params.events.PutEvents", count, unique_id="count-puts")
    yield sent
    events_client.meta.events.unregister("provide-client-params.events.PutEvents", unique_id="count-puts")


def changes(key: str, count: int) -> list[dict[str, Any]]:
    """count events of one tenant (a project's creation, then its updates), in the stream's order."""
    project = create(key, name="v0")
    for n in range(1, count):
        assert patch(key, project["id"], {"name": f"v{n}"}).status == 200
    return outbox_events()


# ---- the outbox --------------------------------------------------------------------------

def test_each_change_writes_exactly_one_event_with_it(stack):
    tenant, key = stack.tenant_with_key()
    started = int(time.time())
    project = create(key, name="Apollo", description="Moon")
    [created] = outbox_events()
    assert EVENT_ID.match(created["id"]) and ISO_UTC.match(created["timestamp"])
    assert (created["type"], created["tenantId"], created["data"]) == ("project.created", tenant, project)
    assert started + WEEK <= created["ttl"] <= int(time.time()) + WEEK

    updated = patch(key, project["id"], {"name": "Artemis"}).data
    [update] = [e for e in outbox_events() if e["id"] != created["id"]]
    assert (update["type"], update["tenantId"]) == ("project.updated", tenant)
    assert update["data"] == {**updated, "changes": ["name"]}
    assert update["timestamp"] >= created["timestamp"]

    assert delete(key, project["id"]).status == 200
    [removal] = [e for e in outbox_events() if e["id"] not in (created["id"], update["id"])]
    assert (removal["type"], removal["tenantId"], removal["data"]) == ("project.deleted", tenant, updated)
    assert len(outbox_events()) == 3


def test_refused_requests_write_no_event(stack):
    tenant, key = stack.tenant_with_key()
    _, other_key = stack.tenant_with_key()
    project = create(key, name="Apollo")
    patch(key, project["id"], {"name": ""})
    patch(other_key, project["id"], {"name": "hijacked"})
    delete(other_key, project["id"])
    reader = stack.new_key(tenant, ["projects:read"])["key"]
    delete(reader, project["id"])
    assert [e["type"] for e in outbox_events()] == ["project.created"]


# ---- from the stream to the queue --------------------------------------------------------

def test_the_publisher_carries_every_event_from_the_stream_to_the_queue(stack):
    _, key = stack.tenant_with_key()
    project = create(key, name="Apollo")
    patch(key, project["id"], {"language": "python"})
    delete(key, project["id"])
    events = outbox_events()

    batch = outbox_stream()
    arn = stream_arn(settings().outbox_table)
    assert [r["dynamodb"]["NewImage"]["type"]["S"] for r in batch["Records"]] == [
        "project.created", "project.updated", "project.deleted"]  # in commit order
    for record in batch["Records"]:
        assert record["eventName"] == "INSERT" and record["eventSource"] == "aws:dynamodb"
        assert record["eventSourceARN"] == arn
        assert set(record["dynamodb"]) >= {"Keys", "NewImage", "SequenceNumber", "StreamViewType"}
        assert record["dynamodb"]["Keys"]["id"] == record["dynamodb"]["NewImage"]["id"]

    assert drain_queue(QUEUE) == []
    assert publish(batch) == {"batchItemFailures": []}
    assert_delivered(drain_queue(QUEUE), events)


def test_records_without_a_new_image_are_skipped(stack):
    _, key = stack.tenant_with_key()
    create(key, name="Apollo")
    [event] = outbox_events()
    # TTL clean-up removes outbox items; the mapping filters REMOVE out, and the publisher
    # would ignore one that got through.
    stack.client("dynamodb").delete_item(TableName=settings().outbox_table, Key={"id": {"S": event["id"]}})
    batch = table_stream_event(settings().outbox_table, event_names=None)
    assert [r["eventName"] for r in batch["Records"]] == ["INSERT", "REMOVE"]
    assert publish(batch) == {"batchItemFailures": []}
    assert_delivered(drain_queue(QUEUE), [event])
    assert [r["eventName"] for r in outbox_stream()["Records"]] == ["INSERT"]


# ---- EventBridge failures ----------------------------------------------------------------

@pytest.mark.parametrize("mode", ["entry", "raise"])
def test_a_refused_put_is_reported_and_arrives_when_retried(stack, flaky_events, mode):
    _, key = stack.tenant_with_key()
    create(key, name="Apollo")
    [event] = outbox_events()
    batch = outbox_stream()
    flaky = flaky_events({1}, mode)

    assert publish(batch) == {"batchItemFailures": [{"itemIdentifier": sequence_numbers(batch)[0]}]}
    assert drain_queue(QUEUE) == []
    assert outbox_events() == [event]  # still in the outbox, and still in the stream
    assert outbox_stream() == batch

    assert publish(batch) == {"batchItemFailures": []}  # the stream hands the record over again
    assert flaky.calls == 2
    assert_delivered(drain_queue(QUEUE), [event])


def test_only_the_failed_record_of_a_batch_is_reported(stack, flaky_events):
    _, key = stack.tenant_with_key()
    for name in ("one", "two", "three"):
        create(key, name=name)
    events = outbox_events()
    batch = outbox_stream()
    first, second, third = sequence_numbers(batch)
    flaky = flaky_events({2})

    assert publish(batch) == {"batchItemFailures": [{"itemIdentifier": second}]}
    assert [len(call) for call in flaky.sent] == [3]   # one call, its second entry refused
    by_name = {e["data"]["name"]: e for e in events}
    assert_delivered(drain_queue(QUEUE), [by_name["one"], by_name["three"]])

    # Lambda resumes the shard at the failed record: the second event arrives (and the third
    # again, which consumers drop by event id).
    retry = {"Records": [r for r in batch["Records"] if int(r["dynamodb"]["SequenceNumber"]) >= int(second)]}
    assert publish(retry) == {"batchItemFailures": []}
    messages = drain_queue(QUEUE)
    assert sorted(m["detail"]["data"]["name"] for m in messages) == ["three", "two"]
    for message in messages:
        assert message["detail"] == published(by_name[message["detail"]["data"]["name"]])


def test_a_failure_outside_any_call_reports_every_event_record_and_raises_nothing(stack, monkeypatch):
    _, key = stack.tenant_with_key()
    events = changes(key, 3)
    batch = outbox_stream()
    real_client = aws.client

    def client(service: str):
        if service == "events":
            raise RuntimeError("no client")
        return real_client(service)

    client.cache_clear = real_client.cache_clear
    monkeypatch.setattr(aws, "client", client)
    assert publish(batch) == {"batchItemFailures": [{"itemIdentifier": s} for s in sequence_numbers(batch)]}
    monkeypatch.setattr(aws, "client", real_client)
    assert publish(batch) == {"batchItemFailures": []}
    assert_delivered(drain_queue(QUEUE), events)


# ---- batches: up to 10 events a PutEvents call -------------------------------------------

def logged_ids(tenant: str) -> list[str]:
    kept, _ = event_log.events_after(tenant, None, 100)
    return [e["id"] for e in kept]


def test_a_full_batch_goes_in_three_calls_after_its_events_are_logged(stack, put_calls):
    tenant, key = stack.tenant_with_key()
    events = changes(key, 25)
    batch = outbox_stream()
    assert len(batch["Records"]) == 25

    assert publish(batch) == {"batchItemFailures": []}
    assert [len(call) for call in put_calls] == [10, 10, 5]
    assert [json.loads(e["Detail"])["id"] for call in put_calls for e in call] == [e["id"] for e in events]
    assert logged_ids(tenant) == [e["id"] for e in events]
    assert_delivered(drain_queue(QUEUE), events)


def test_an_entry_refused_mid_call_is_the_first_failure_and_the_retry_repeats_nothing_harmful(
        stack, flaky_events):
    tenant, key = stack.tenant_with_key()
    events = changes(key, 25)
    batch = outbox_stream()
    sequences = sequence_numbers(batch)
    flaky = flaky_events({15})   # the fifth entry of the second call

    assert publish(batch) == {"batchItemFailures": [{"itemIdentifier": sequences[14]}]}
    assert [len(call) for call in flaky.sent] == [10, 10, 5]
    assert_delivered(drain_queue(QUEUE), events[:14] + events[15:])
    assert logged_ids(tenant) == [e["id"] for e in events]   # each logged before its put

    # Lambda hands back the shard from the first failure: the refused event arrives, the ten after
    # it arrive again with their own ids (the webhook-id, by which the delivery and consumers drop
    # them), and the log keeps each event once (its conditional write).
    retry = {"Records": batch["Records"][14:]}
    assert publish(retry) == {"batchItemFailures": []}
    assert [len(call) for call in flaky.sent] == [10, 10, 5, 10, 1]
    assert_delivered(drain_queue(QUEUE), events[14:])
    assert logged_ids(tenant) == [e["id"] for e in events]


def test_a_call_that_fails_whole_reports_each_of_its_records_and_the_next_call_still_goes(stack, flaky_events):
    _, key = stack.tenant_with_key()
    events = changes(key, 12)
    batch = outbox_stream()
    sequences = sequence_numbers(batch)
    flaky = flaky_events({3}, mode="raise")   # the first call (entries 1-10) raises

    assert publish(batch) == {"batchItemFailures": [{"itemIdentifier": s} for s in sequences[:10]]}
    assert [len(call) for call in flaky.sent] == [10, 2]
    assert_delivered(drain_queue(QUEUE), events[10:])

    assert publish(batch) == {"batchItemFailures": []}
    assert_delivered(drain_queue(QUEUE), events)


def test_an_entry_too_large_to_share_a_call_goes_in_its_own(stack, put_calls):
    tenant, key = stack.tenant_with_key()
    small = changes(key, 3)
    # Two events of 140 KB: either fits a call (256 KB), both together do not.
    large = [new_event("project.updated", tenant, {"id": f"proj_{n}", "notes": "x" * 140_000}) for n in (1, 2)]
    for event in large:
        stack.client("dynamodb").transact_write_items(TransactItems=[outbox_table.put_event_item(event, time.time())])
    batch = outbox_stream()
    assert len(batch["Records"]) == 5

    assert publish(batch) == {"batchItemFailures": []}
    assert [len(call) for call in put_calls] == [4, 1]
    for call in put_calls:
        assert sum(event_bus.entry_size(e) for e in call) <= event_bus.MAX_REQUEST_BYTES
    assert_delivered(drain_queue(QUEUE), small + [e.payload() for e in large])
