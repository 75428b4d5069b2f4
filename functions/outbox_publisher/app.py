"""Publishes outbox events from the outbox table's stream to the EventBridge bus.

Each stream record is one event. The batch's events are kept in the tenants' event log first (all
at once: svc_core/domain/event_publishing.py, each write conditional on the event's id, so a record
handed back writes nothing twice), so an event a webhook receives can already be read, replayed
and streamed; then those kept go on the bus, up to 10 to a PutEvents call. A record whose event
could not be kept or put is reported as a batch item failure, so the stream hands it (and what
follows it in its shard) back until it succeeds.
Consumers deduplicate by the event id: a retried batch may publish an event twice.
"""

from __future__ import annotations

from typing import Any

from svc_core.adapters.dynamo import from_item
from svc_core.contracts.events import Event
from svc_core.domain import event_publishing
from svc_core.platform.log import logger


def event_of(record: dict[str, Any]) -> Event | None:
    """The record's event; None for a record without a new image (a removal: TTL clean-up)."""
    image = record["dynamodb"].get("NewImage")
    if not image:
        return None
    stored = from_item(image)
    stored.pop("ttl", None)  # the outbox table's own expiry, not part of the event
    return Event.of(stored)


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    # The stream is mapped with ReportBatchItemFailures: every failure is reported record by record
    # (a whole batch too), never raised, which would make Lambda bisect the batch.
    records = event["Records"]
    failed: dict[int, str] = {}
    batch: list[tuple[int, Event]] = []
    for index, record in enumerate(records):
        try:
            found = event_of(record)
        except Exception as exc:  # not an event: retried as any failure, never dropped
            failed[index] = f"not an event: {type(exc).__name__}: {exc}"
            continue
        if found is not None:
            batch.append((index, found))
    try:
        outcomes = event_publishing.publish([e for _, e in batch])
    except Exception as exc:  # e.g. no bus client: the whole batch is handed back, in order
        outcomes = [f"{type(exc).__name__}: {exc}"] * len(batch)
    for (index, published), reason in zip(batch, outcomes, strict=True):
        if reason:
            failed[index] = reason
        else:
            logger.info("event published", extra={"event_id": published.id, "event_type": published.type,
                                                   "tenant_id": published.tenantId})
    for index, reason in sorted(failed.items()):
        logger.warning("event not published", extra={"sequence_number": records[index]["dynamodb"]["SequenceNumber"],
                                                      "reason": reason})
    return {"batchItemFailures": [{"itemIdentifier": records[index]["dynamodb"]["SequenceNumber"]}
                                  for index in sorted(failed)]}
