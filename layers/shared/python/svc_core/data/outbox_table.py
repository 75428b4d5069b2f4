"""The outbox table: events written in the same transaction as the change that caused them.

The table's stream feeds the outbox publisher, which puts each event on the EventBridge bus;
a failed put is retried from the stream, so an event committed here is never lost. Items
expire a week after they were written (TTL) once published copies live downstream.
"""

from __future__ import annotations

from typing import Any

from svc_core.adapters.dynamo import to_item
from svc_core.contracts.events import Event
from svc_core.platform.config import settings

RETENTION_SECONDS = 7 * 24 * 3600


def put_event_item(event: Event, now: float) -> dict[str, Any]:
    """A TransactWriteItems entry that stores one event."""
    record = {**event.payload(), "ttl": int(now) + RETENTION_SECONDS}
    return {"Put": {
        "TableName": settings().outbox_table,
        "Item": to_item(record),
        "ConditionExpression": "attribute_not_exists(id)",
    }}
