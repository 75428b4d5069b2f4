"""The message that carries one (event, subscription) delivery on the webhook delivery queue.

The fan-out (one message per subscription that wants the event) and the API's test call put
these on the queue; the delivery function takes them off. One message per pair is what keeps
a slow or failing endpoint from delaying or repeating the deliveries to another.

    {"event": {id, type, timestamp, tenantId, data}, "webhookId": "whk_...", "tenantId": "ten_..."}
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict

from svc_core.adapters import aws
from svc_core.platform.config import settings
from svc_core.rules.events import Event


class DeliveryMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    event: Event
    webhookId: str
    tenantId: str

    @classmethod
    def of(cls, body: str) -> DeliveryMessage:
        return cls.model_validate_json(body)

    def to_json(self) -> str:
        return json.dumps({"event": self.event.payload(), "webhookId": self.webhookId, "tenantId": self.tenantId},
                          separators=(",", ":"))


def delivery_message(event: Event, webhook_id: str) -> DeliveryMessage:
    return DeliveryMessage(event=event, webhookId=webhook_id, tenantId=event.tenantId)


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
