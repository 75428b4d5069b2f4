"""Answers the assistant turns of chat sessions, one SQS message ({tenantId, sessionId, messageId})
per turn; the rules are in svc_core/domain/chat_turns.py.

A turn another worker holds is reported as a batch item failure (the queue brings it back after
its visibility timeout); a crash leaves the message on the queue, and its next delivery finishes
the abandoned turn as failed.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response

from svc_core.domain import chat_turns

processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


def answer(record) -> None:
    chat_turns.process(record.body, int(record.attributes.approximate_receive_count))


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return process_partial_response(event=event, record_handler=answer, processor=processor, context=context)
