"""Deletes a deleted chat session's messages and stream events, told by the sessions table's stream.

The DELETE request removes only the session item (so it answers at once, and nothing else is
reachable after it); this function then deletes the rest, however many turns the session had.
A record whose clean-up fails is reported as a batch item failure and handed over again.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response

from svc_core.adapters.dynamo import from_item
from svc_core.domain import chat
from svc_core.platform.log import logger

processor = BatchProcessor(event_type=EventType.DynamoDBStreams, raise_on_entire_batch_failure=False)


def forget(record) -> None:
    keys = from_item(record.raw_event["dynamodb"]["Keys"])
    deleted = chat.forget_session(keys["tenantId"], keys["id"])
    logger.info("chat session cleaned up", extra={"tenantId": keys["tenantId"], "sessionId": keys["id"], **deleted})


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return process_partial_response(event=event, record_handler=forget, processor=processor, context=context)
