"""Fans each service event out to the webhook subscriptions that want it.

The webhook queue receives every event from the EventBridge bus (the envelope's `detail` is
the event). For each, one delivery message per enabled subscription of the event's tenant that
wants its type goes onto the delivery queue, so every (event, subscription) pair is delivered,
retried and given up on independently. A record whose fan-out fails is reported as a batch
item failure and comes back; a retried fan-out may enqueue a pair it had already enqueued, so a
consumer may see an event twice: it deduplicates by `webhook-id` (the event id), as Standard
Webhooks asks. An event of a tenant that moved to another cell is sent on to that cell's webhook
queue (svc_core/domain/webhooks.py, fan_out_message).
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response

from svc_core.domain import webhooks
from svc_core.platform.log import logger

processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


def fan_out(record) -> None:
    done = webhooks.fan_out_message(record.body)
    event = done.pop("event")
    logger.info("event sent on to its tenant's home cell" if "sentTo" in done else "event fanned out",
                extra={"event_id": event.id, "event_type": event.type, "tenant_id": event.tenantId, **done})


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return process_partial_response(event=event, record_handler=fan_out, processor=processor, context=context)
