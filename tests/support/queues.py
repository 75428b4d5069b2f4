"""SQS queues as the tests read them: every message now on a queue, taken off it."""

from __future__ import annotations

import json
from typing import Any

from svc_core.adapters import aws


def take_messages(sqs: Any, url: str) -> list[dict[str, Any]]:
    """Receive and delete every message now visible on the queue at `url`; their parsed bodies, in
    the order received (a message is deleted as soon as it is received, so none comes back)."""
    bodies: list[dict[str, Any]] = []
    while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", []):
        for message in messages:
            bodies.append(json.loads(message["Body"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    return bodies


def drain_queue(queue_name: str) -> list[dict[str, Any]]:
    """Every message now on the queue named queue_name, taken off it (take_messages)."""
    sqs = aws.client("sqs")
    return take_messages(sqs, sqs.get_queue_url(QueueName=queue_name)["QueueUrl"])
