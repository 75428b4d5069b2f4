"""Project events: written to the outbox in the change's own transaction, then carried from
the outbox table's stream by the outbox publisher to the EventBridge bus, whose rule sends
them to the webhook queue. A put that EventBridge refuses is reported back to the stream
(batchItemFailures) and arrives when the stream hands the record over again.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from botocore.exceptions import ClientError

from svc_core.adapters import aws
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
    """The EventBridge client, except that the puts whose number (1-based) is in fail_on are
    refused: by raising (mode "raise") or by a FailedEntryCount of 1 (mode "entry")."""

    def __init__(self, real, fail_on: set[int], mode: str) -> None:
        self.real, self.fail_on, self.mode, self.calls = real, fail_on, mode, 0

    def put_events(self, **kwargs: Any) -> dict[str, Any]:
        self.calls += 1
        if self.calls not in self.fail_on:
            return self.real.put_events(**kwargs)
        if self.mode == "raise":
            raise ClientError({"Error": {"Code": "InternalException", "Message": "try again"}}, "PutEvents")
        return {"FailedEntryCount": 1, "Entries": [{"ErrorCode": "InternalFailure", "ErrorMessage": "try again"}]}

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


@pytest.mark.parametrize("mode", ["entry", "raise"])
def test_only_the_failed_record_of_a_batch_is_reported(stack, flaky_events, mode):
    _, key = stack.tenant_with_key()
    for name in ("one", "two", "three"):
        create(key, name=name)
    events = outbox_events()
    batch = outbox_stream()
    first, second, third = sequence_numbers(batch)
    flaky_events({2}, mode)

    assert publish(batch) == {"batchItemFailures": [{"itemIdentifier": second}]}
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
