"""The message that carries one (event, subscription) delivery on the webhook delivery queue.

The fan-out (one message per subscription that wants the event) and the API's test call put
these on the queue; the delivery function takes them off. One message per pair is what keeps
a slow or failing endpoint from delaying or repeating the deliveries to another.

    {"event": {id, type, timestamp, tenantId, data}, "webhookId": "whk_...", "tenantId": "ten_..."}

A redelivery or a replay adds "sendId" (its rdl_ or rpl_ id): the event is sent again, once per
send id. A replay's work is on this queue too, one page of the event log per message:

    {"replayStep": {"replayId": "rpl_...", "webhookId": "whk_...", "tenantId": "ten_...", "position": "..."}}
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, PlainSerializer, PlainValidator

from svc_core.adapters import aws
from svc_core.platform.config import settings
from svc_core.rules.events import Event


def _event_of(value: Any) -> Event:
    return value if isinstance(value, Event) else Event.of(value)


# The envelope checks itself (rules/events.py: a dataclass, which pydantic would otherwise re-check as its own).
EventField = Annotated[Event, PlainValidator(_event_of), PlainSerializer(Event.payload)]


class DeliveryMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    event: EventField
    webhookId: str
    tenantId: str
    sendId: str | None = None

    @classmethod
    def of(cls, body: str) -> DeliveryMessage:
        return cls.model_validate_json(body)

    def to_json(self) -> str:
        message = {"event": self.event.payload(), "webhookId": self.webhookId, "tenantId": self.tenantId}
        if self.sendId:
            message["sendId"] = self.sendId
        return json.dumps(message, separators=(",", ":"))


class ReplayStep(BaseModel):
    """One page of a replay's work: the events after `position` ("start": from its `since`)."""
    model_config = ConfigDict(extra="forbid", frozen=True)

    replayId: str
    webhookId: str
    tenantId: str
    position: str

    @classmethod
    def of(cls, body: str) -> ReplayStep | None:
        """The step a message carries, or None for a delivery message."""
        parsed = json.loads(body)
        return cls.model_validate(parsed["replayStep"]) if "replayStep" in parsed else None


def delivery_message(event: Event, webhook_id: str, send_id: str | None = None) -> DeliveryMessage:
    return DeliveryMessage(event=event, webhookId=webhook_id, tenantId=event.tenantId, sendId=send_id)


def enqueue_step(step: ReplayStep, delay_seconds: int = 0) -> None:
    aws.client("sqs").send_message(QueueUrl=settings().webhook_delivery_queue_url, DelaySeconds=delay_seconds,
                                   MessageBody=json.dumps({"replayStep": step.model_dump()}, separators=(",", ":")))


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
