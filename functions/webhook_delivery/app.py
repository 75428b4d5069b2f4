"""Delivers webhook messages: one signed POST per (event, subscription), retried on a schedule.

The rules are in svc_core/domain/webhook_delivery.py. The records of a batch are delivered at
once (each in its own thread), so a slow endpoint does not hold back the others of its batch.
A delivery to try again is hidden on the queue until its next attempt and reported as a batch
item failure; nothing sleeps here. A crash leaves every undone message on the queue.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aws_lambda_powertools.utilities.batch import AsyncBatchProcessor, EventType, async_process_partial_response

from svc_core.domain import webhook_delivery

processor = AsyncBatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


async def deliver(record) -> None:
    await asyncio.to_thread(webhook_delivery.process, record.body,
                            int(record.attributes.approximate_receive_count), record.receipt_handle)


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return async_process_partial_response(event=event, record_handler=deliver, processor=processor, context=context)
