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
    from svc_core import events, timeutil
    from svc_core.data import outbox_table
    from svc_core.data.common import transact
    made = [events.new_event("project.created", "ten_X", {"n": i}) for i in range(count)]
    for event in made:
        transact([outbox_table.put_event_item(event, timeutil.now())])
    return [e["id"] for e in made]


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
