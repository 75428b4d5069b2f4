"""The webhook queues of a cell, this one or another (cell_tables.Place names them by logical id): where a
message of a tenant homed in another cell is sent on to, and how a move between cells takes a tenant's
messages off this cell's dead-letter queues or brings its hidden retries back at once
(domain/tenant_moves.py, domain/cell_handoff.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from svc_core.adapters import aws
from svc_core.data.cell_tables import Place

EVENTS = "WebhookQueue"                               # the bus's events, before the fan-out
EVENT_DEAD_LETTERS = "WebhookDeadLetterQueue"         # events the fan-out failed on 10 times
DELIVERIES = "WebhookDeliveryQueue"                   # one message per (event, webhook)
DELIVERY_DEAD_LETTERS = "WebhookDeliveryDeadLetterQueue"   # deliveries given up on
WEBHOOK_QUEUES = (EVENTS, EVENT_DEAD_LETTERS, DELIVERIES, DELIVERY_DEAD_LETTERS)
LONGEST_DELAY_SECONDS = 900                           # SQS's longest DelaySeconds
# What SQS answers for a receipt handle that no longer holds its message hidden (received again
# since, visible, or deleted).
_HANDLE_GONE = {"ReceiptHandleIsInvalid", "AWS.SimpleQueueService.ReceiptHandleIsInvalid", "MessageNotInflight",
                "AWS.SimpleQueueService.MessageNotInflight", "InvalidParameterValue"}


@dataclass(frozen=True)
class Received:
    body: str
    receipt_handle: str


def _client(place: Place) -> Any:
    return place.client("sqs")   # another cell's: aws.client_in, kept per region and endpoint


def url(place: Place, queue: str) -> str:
    found = place.queues.get(queue)
    if not found:
        raise LookupError(f"the cell in {place.region} has published no URL of its {queue}")
    return found


def send(place: Place, queue: str, body: str, delay_seconds: int = 0) -> None:
    _client(place).send_message(QueueUrl=url(place, queue), MessageBody=body,
                                DelaySeconds=max(0, min(int(delay_seconds), LONGEST_DELAY_SECONDS)))


def release(place: Place, queue: str, receipt_handle: str) -> bool:
    """Make a hidden message visible now; False when the handle no longer holds it hidden (it was
    received again, or deleted: whoever holds it now deals with it)."""
    try:
        _client(place).change_message_visibility(QueueUrl=url(place, queue), ReceiptHandle=receipt_handle,
                                                 VisibilityTimeout=0)
    except Exception as exc:
        if aws.error_code(exc) in _HANDLE_GONE:
            return False
        raise
    return True


def receive_all(place: Place, queue: str, hold_seconds: int) -> Iterator[Received]:
    """Every message of the queue that is visible now, each hidden for hold_seconds once received
    (so none comes twice): up to an answer with none (a long poll of a second asks every server)."""
    client, queue_url = _client(place), url(place, queue)
    while True:
        answer = client.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1,
                                        VisibilityTimeout=hold_seconds)
        messages = answer.get("Messages", [])
        if not messages:
            return
        for message in messages:
            yield Received(message["Body"], message["ReceiptHandle"])


def delete(place: Place, queue: str, receipt_handle: str) -> None:
    _client(place).delete_message(QueueUrl=url(place, queue), ReceiptHandle=receipt_handle)
