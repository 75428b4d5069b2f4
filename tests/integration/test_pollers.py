"""The local stack's event source mappings: partial batch failures, visibility, redrive."""

from __future__ import annotations

import json
import time

import pytest

from devstack.pollers import QueuePoller, StreamPoller, matches

# They read DynamoDB streams and queues, which a wipe between tests would leave records in.
pytestmark = pytest.mark.fresh_stack


def test_filter_patterns_match_like_lambda_filter_criteria():
    assert matches({"eventName": ["INSERT"]}, {"eventName": "INSERT", "x": 1})
    assert not matches({"eventName": ["INSERT"]}, {"eventName": "REMOVE"})
    assert matches({"dynamodb": {"NewImage": {"type": {"S": ["a", "b"]}}}},
                   {"dynamodb": {"NewImage": {"type": {"S": "b"}}}})


def _put_events(stack, count):
    from svc_core.contracts import events
    from svc_core.data import outbox_table
    from svc_core.data.common import transact
    from svc_core.platform import timeutil
    made = [events.new_event("project.created", "ten_X", {"n": i}) for i in range(count)]
    for event in made:
        transact([outbox_table.put_event_item(event, timeutil.now())])
    return [e.id for e in made]


def _clients(stack):
    return {name: stack.client(name) for name in ("dynamodb", "dynamodbstreams", "sqs")}


def test_stream_batches_retry_from_the_first_failed_record_in_order(stack):
    ids = _put_events(stack, 5)
    seen: list[str] = []
    fail_once = {ids[2]}

    def function(event):
        failures = []
        for record in event["Records"]:
            event_id = record["dynamodb"]["NewImage"]["id"]["S"]
            if event_id in fail_once:
                fail_once.discard(event_id)
                failures.append({"itemIdentifier": record["dynamodb"]["SequenceNumber"]})
                break
            seen.append(event_id)
        return {"batchItemFailures": failures}

    poller = StreamPoller(_clients(stack), "OutboxTable", function,
                          {"BatchSize": 10, "FunctionResponseTypes": ["ReportBatchItemFailures"],
                           "FilterCriteria": {"Filters": [{"Pattern": '{"eventName": ["INSERT"]}'}]}})
    assert poller.poll_once() == 2          # the two before the failure are done
    assert poller.poll_once() == 3          # then the rest, from the failed one on
    assert seen == ids


def test_a_raising_function_gets_the_same_batch_again(stack):
    ids = _put_events(stack, 3)
    calls: list[list[str]] = []

    def function(event):
        calls.append([r["dynamodb"]["NewImage"]["id"]["S"] for r in event["Records"]])
        if len(calls) == 1:
            raise RuntimeError("crash mid-batch")
        return {"batchItemFailures": []}

    poller = StreamPoller(_clients(stack), "OutboxTable", function,
                          {"BatchSize": 10, "FunctionResponseTypes": ["ReportBatchItemFailures"]})
    poller.poll_once()
    poller.poll_once()
    assert calls == [ids, ids]


def test_queue_failures_come_back_after_the_visibility_timeout_then_go_to_the_dead_letter_queue(stack):
    sqs = stack.client("sqs")
    dlq = sqs.create_queue(QueueName="t-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    queue = sqs.create_queue(QueueName="t-main", Attributes={
        "VisibilityTimeout": "1",
        "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 2})})["QueueUrl"]
    for body in ("ok-1", "bad", "ok-2"):
        sqs.send_message(QueueUrl=queue, MessageBody=body)
    handled: list[str] = []

    def function(event):
        failures = []
        for record in event["Records"]:
            if record["body"] == "bad":
                failures.append({"itemIdentifier": record["messageId"]})
            else:
                handled.append(record["body"])
        return {"batchItemFailures": failures}

    poller = QueuePoller(_clients(stack), queue, "arn:aws:sqs:us-east-1:123456789012:t-main", function,
                         {"BatchSize": 10, "FunctionResponseTypes": ["ReportBatchItemFailures"]})
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        poller.poll_once(wait_seconds=1)
        moved = sqs.receive_message(QueueUrl=dlq, WaitTimeSeconds=0).get("Messages", [])
        if moved:
            break
    assert sorted(handled) == ["ok-1", "ok-2"]
    assert [m["Body"] for m in moved] == ["bad"]
    left = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["ApproximateNumberOfMessages",
                                                                    "ApproximateNumberOfMessagesNotVisible"])
    assert left["Attributes"] == {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}


# -- Lambda's failure semantics: retries, bisecting, the OnFailure destination, reopened iterators --

def _poller(stack, function, props, **options):
    base = {"BatchSize": 10, "FunctionResponseTypes": ["ReportBatchItemFailures"],
            "FilterCriteria": {"Filters": [{"Pattern": '{"eventName": ["INSERT"]}'}]}}
    errors: list[str] = []
    poller = StreamPoller(_clients(stack), "OutboxTable", function, {**base, **props}, log=lambda _m: None,
                          errors=errors.append, **options)
    poller.logged_errors = errors
    return poller


def _event_ids(event):
    return [r["dynamodb"]["NewImage"]["id"]["S"] for r in event["Records"]]


def test_a_record_that_keeps_failing_goes_to_the_failure_destination_and_the_shard_moves_on(stack):
    ids = _put_events(stack, 4)
    poison = ids[1]
    delivered: list[str] = []
    sent: list[dict] = []

    def function(event):
        if poison in _event_ids(event):
            raise RuntimeError("cannot handle this record")
        delivered.extend(_event_ids(event))
        return {"batchItemFailures": []}

    poller = _poller(stack, function, {"BisectBatchOnFunctionError": True, "MaximumRetryAttempts": 2},
                     on_failure=sent.append)
    for _ in range(10):
        poller.poll_once()
    # Bisecting isolates the poison record; the others are each delivered (at least once, as on AWS).
    assert set(delivered) == set(ids) - {poison}
    assert delivered.count(ids[3]) == 1
    assert len(sent) == 1
    info = sent[0]["DDBStreamBatchInfo"]
    assert info["batchSize"] == 1 and sent[0]["requestContext"]["condition"] == "RetryAttemptsExhausted"
    assert poller.status()["sentToFailureDestination"] == 1
    assert all(line.startswith("stream OutboxTable -> function: ") for line in poller.logged_errors)
    assert any("cannot handle this record" in line for line in poller.logged_errors)
    assert any("retries exhausted after 3 attempts" in line for line in poller.logged_errors)
    # The shard goes on: a later event is delivered.
    later = _put_events(stack, 1)
    poller.poll_once()
    assert delivered[-1] == later[0]


def test_without_a_destination_an_exhausted_record_is_discarded_loudly(stack):
    ids = _put_events(stack, 2)
    calls: list[list[str]] = []

    def function(event):
        calls.append(_event_ids(event))
        return {"batchItemFailures": [{"itemIdentifier": event["Records"][0]["dynamodb"]["SequenceNumber"]}]}

    poller = _poller(stack, function, {"MaximumRetryAttempts": 1})
    for _ in range(4):
        poller.poll_once()
    # The batch is tried twice (the first attempt and one retry); then, as on AWS, the batch from
    # the failed record on is given up (here: dropped, with an ERROR line) and nothing is tried again.
    assert calls == [ids, ids]
    assert poller.status()["discarded"] == 2
    assert sum("2 record(s) discarded" in line for line in poller.logged_errors) == 1


def test_a_trimmed_or_expired_iterator_is_reopened_without_skipping_or_repeating_records(stack):
    first = _put_events(stack, 3)
    delivered: list[str] = []
    poller = _poller(stack, lambda event: delivered.extend(_event_ids(event)) or {"batchItemFailures": []}, {})
    poller.poll_once()
    assert delivered == first
    second = _put_events(stack, 3)
    real_get_records = poller.streams.get_records
    from botocore.exceptions import ClientError

    def expired_once(**request):
        poller.streams.get_records = real_get_records
        raise ClientError({"Error": {"Code": "ExpiredIteratorException", "Message": "expired"}}, "GetRecords")

    poller.streams.get_records = expired_once
    poller.poll_once()   # meets the expired iterator: reopened at the horizon
    poller.poll_once()
    assert delivered == first + second
    assert poller.status()["failures"] == 1
    assert "ExpiredIteratorException" in poller.status()["lastError"]


def test_a_failing_datastore_is_logged_and_the_poller_goes_on_when_it_is_back(stack):
    import threading
    delivered: list[str] = []
    poller = _poller(stack, lambda event: delivered.extend(_event_ids(event)) or {"batchItemFailures": []}, {},
                     interval=0.01)
    real_get_records = poller.streams.get_records
    broken = threading.Event()
    broken.set()

    def get_records(**request):
        if broken.is_set():
            raise ConnectionError("the datastore does not answer")
        return real_get_records(**request)

    poller.streams.get_records = get_records
    poller.start()
    try:
        ids = _put_events(stack, 2)
        deadline = time.monotonic() + 10
        while poller.status()["failures"] < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert delivered == []
        broken.clear()
        while delivered != ids and time.monotonic() < deadline + 10:
            time.sleep(0.05)
    finally:
        poller.stop()
    assert delivered == ids
    assert any("poll failed: ConnectionError: the datastore does not answer" in line
               for line in poller.logged_errors)


def test_a_cancelled_transaction_publishes_nothing_and_the_stream_goes_on(data_backend):
    """On both engines: DynamoDB Local writes no stream record for it; moto does, and leaves
    iterators on a discarded copy of the table, which the local stack's moto poller handles."""
    from devstack.stack import LocalStack
    from svc_core.contracts import events
    from svc_core.data import outbox_table, tenants_table
    from svc_core.data.common import ConditionFailed, transact
    from svc_core.platform import timeutil
    stack = data_backend.stack
    clients = _clients(stack)
    delivered: list[str] = []
    skip = LocalStack._phantom_check(clients, "OutboxTable") if data_backend.name == "moto" else None
    poller = _poller(stack, lambda event: delivered.extend(_event_ids(event)) or {"batchItemFailures": []}, {},
                     skip_insert=skip)
    poller.poll_once()
    tenant_id = stack.new_tenant()
    existing = tenants_table.get(tenant_id)
    phantom = events.new_event("tenant.created", tenant_id, {"n": "phantom"})
    with pytest.raises(ConditionFailed):  # the tenant exists: the whole transaction is cancelled
        transact([outbox_table.put_event_item(phantom, timeutil.now()), tenants_table.put_new(existing)])
    real = _put_events(stack, 2)
    for _ in range(3):
        poller.poll_once()
    assert delivered == real
    assert poller.status()["failures"] == 0
