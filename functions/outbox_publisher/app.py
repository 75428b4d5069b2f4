"""Publishes outbox events from the outbox table's stream to the EventBridge bus.

Each stream record is one event. It is kept in the tenant's event log first (svc_core/domain/events.py,
conditional on its id: a record handed back writes nothing twice), so an event a webhook receives
can already be read, replayed and streamed. A record whose put fails is reported as a batch item
failure, so the stream hands it (and what follows it in its shard) back until it succeeds.
Consumers deduplicate by the event id: a retried batch may publish an event twice.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response

from svc_core.adapters import aws
from svc_core.adapters.dynamo import from_item
from svc_core.contracts.events import Event
from svc_core.domain import events
from svc_core.platform.config import settings
from svc_core.platform.log import logger

# The stream is mapped with ReportBatchItemFailures: a batch whose every record failed is
# reported record by record too, rather than raised (which would make Lambda bisect it).
processor = BatchProcessor(event_type=EventType.DynamoDBStreams, raise_on_entire_batch_failure=False)


class PublishFailed(Exception):
    pass


def to_entry(event: Event) -> dict[str, Any]:
    cfg = settings()
    return {"EventBusName": cfg.event_bus_name, "Source": cfg.event_source, "DetailType": event.type,
            "Detail": event.to_json(), "Resources": []}


def publish(record) -> None:
    image = record.raw_event["dynamodb"].get("NewImage")
    if not image:
        return  # removals (TTL clean-up) carry nothing to publish
    stored = from_item(image)
    stored.pop("ttl", None)  # the outbox table's own expiry, not part of the event
    event = Event.of(stored)
    events.record(event)
    answer = aws.client("events").put_events(Entries=[to_entry(event)])
    if answer.get("FailedEntryCount"):
        code = answer["Entries"][0].get("ErrorCode")
        raise PublishFailed(f"EventBridge refused event {event.id}: {code}")
    logger.info("event published", extra={"event_id": event.id, "event_type": event.type,
                                           "tenant_id": event.tenantId})


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return process_partial_response(event=event, record_handler=publish, processor=processor, context=context)
