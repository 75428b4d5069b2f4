"""The message that carries one (event, subscription) delivery on the webhook delivery queue.

The fan-out (one message per subscription that wants the event) and the API's test call put
these on the queue; the delivery function takes them off. One message per pair is what keeps
a slow or failing endpoint from delaying or repeating the deliveries to another.

    {"event": {id, type, timestamp, tenantId, data}, "webhookId": "whk_...", "tenantId": "ten_..."}

A redelivery or a replay adds "sendId" (its rdl_ or rpl_ id): the event is sent again, once per
send id. A delivery carried from another cell (its tenant moved here: domain/cell_handoff.py) goes on
with its schedule: "attempts" (those made before, which its attempt numbers here follow), "dueAt"
(epoch seconds: when its next attempt is due) and "waitFirst" (its first receive here only waits until
dueAt: SQS delays a message 15 minutes at most). A replay's work is on this queue too, one page of the
event log per message:

    {"replayStep": {"replayId": "rpl_...", "webhookId": "whk_...", "tenantId": "ten_...", "position": "..."}}
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from svc_core.adapters import aws
from svc_core.contracts.events import Event
from svc_core.platform.checked import fields_of, require_strings
from svc_core.platform.config import settings


class MessageInvalid(ValueError):
    """A queue message that is not one of the two below."""


# Checked dataclasses, as the event envelope is (contracts/events.py): the webhooks API's reads import
# this module, and a read's cold start should not load pydantic (svc_core.http.binding).
@dataclass(frozen=True, kw_only=True)
class DeliveryMessage:
    event: Event
    webhookId: str
    tenantId: str
    sendId: str | None = None
    attempts: int = 0            # made before it reached this queue (another cell's)
    dueAt: int | None = None     # its next attempt not before (epoch seconds)
    waitFirst: bool = False      # its first receive waits until dueAt, no attempt made

    def __post_init__(self) -> None:
        if not isinstance(self.event, Event):
            raise MessageInvalid("event must be an event envelope")
        require_strings(self, ("webhookId", "tenantId"), MessageInvalid)
        if self.sendId is not None:
            require_strings(self, ("sendId",), MessageInvalid)
        if type(self.attempts) is not int or self.attempts < 0:
            raise MessageInvalid("attempts must be a whole number, 0 or more")
        if self.dueAt is not None and type(self.dueAt) is not int:
            raise MessageInvalid("dueAt must be epoch seconds")
        if type(self.waitFirst) is not bool or (self.waitFirst and self.dueAt is None):
            raise MessageInvalid("waitFirst must be a boolean, true only with dueAt")

    @classmethod
    def of(cls, body: str) -> DeliveryMessage:
        message = fields_of(cls, json.loads(body), MessageInvalid)
        return cls(**{**message, "event": Event.of(message["event"])})

    def to_json(self) -> str:
        message = {"event": self.event.payload(), "webhookId": self.webhookId, "tenantId": self.tenantId}
        if self.sendId:
            message["sendId"] = self.sendId
        if self.attempts:
            message["attempts"] = self.attempts
        if self.dueAt is not None:
            message["dueAt"] = self.dueAt
        if self.waitFirst:
            message["waitFirst"] = True
        return json.dumps(message, separators=(",", ":"))


@dataclass(frozen=True, kw_only=True)
class ReplayStep:
    """One page of a replay's work: the events after `position` ("start": from its `since`)."""

    replayId: str
    webhookId: str
    tenantId: str
    position: str

    def __post_init__(self) -> None:
        require_strings(self, ("replayId", "webhookId", "tenantId", "position"), MessageInvalid)

    @classmethod
    def of(cls, body: str) -> ReplayStep | None:
        """The step a message carries, or None for a delivery message."""
        parsed = json.loads(body)
        return cls(**fields_of(cls, parsed["replayStep"], MessageInvalid)) if "replayStep" in parsed else None

    def payload(self) -> dict[str, str]:
        return {"replayId": self.replayId, "webhookId": self.webhookId, "tenantId": self.tenantId,
                "position": self.position}


def delivery_message(event: Event, webhook_id: str, send_id: str | None = None) -> DeliveryMessage:
    return DeliveryMessage(event=event, webhookId=webhook_id, tenantId=event.tenantId, sendId=send_id)


def enqueue_step(step: ReplayStep, delay_seconds: int = 0) -> None:
    aws.client("sqs").send_message(QueueUrl=settings().webhook_delivery_queue_url, DelaySeconds=delay_seconds,
                                   MessageBody=json.dumps({"replayStep": step.payload()}, separators=(",", ":")))


def enqueue(messages: list[DeliveryMessage]) -> None:
    """Put the messages on the delivery queue (in batches of 10, SQS's most). Raises when SQS
    refuses any, so the caller's own message comes back and nothing is lost."""
    sqs = aws.client("sqs")
    for start in range(0, len(messages), 10):
        batch = messages[start:start + 10]
        answer = sqs.send_message_batch(QueueUrl=settings().webhook_delivery_queue_url, Entries=[
            {"Id": str(i), "MessageBody": m.to_json()} for i, m in enumerate(batch)])
        if answer.get("Failed"):
            raise RuntimeError(f"SQS refused {len(answer['Failed'])} delivery messages")


def retry_later(receipt_handle: str, seconds: int) -> None:
    """Hide a received message for `seconds` (at most 12 h, SQS's limit): SQS hands it back then,
    with its receive count one higher. Nothing sleeps while a delivery waits for its retry."""
    aws.client("sqs").change_message_visibility(QueueUrl=settings().webhook_delivery_queue_url,
                                                ReceiptHandle=receipt_handle,
                                                VisibilityTimeout=max(0, min(int(seconds), 12 * 3600)))


def to_dead_letters(body: str) -> None:
    """Keep a delivery that will not be tried again on the delivery dead-letter queue (the
    caller then lets its message be deleted)."""
    aws.client("sqs").send_message(QueueUrl=settings().webhook_delivery_dead_letter_queue_url, MessageBody=body)
