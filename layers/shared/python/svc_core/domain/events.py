"""Domain events: the payload every consumer sees, {id, type, timestamp, tenantId, data}.

Events are written to the outbox with the change that caused them (data/outbox_table.py)
and reach the EventBridge bus with detail-type = type and detail = this payload.
"""

from __future__ import annotations

from typing import Any

from svc_core.platform import timeutil
from svc_core.platform.ids import new_id

EVENT_PREFIX = "evt"   # event ids: evt_ and a ULID

EVENT_TYPES = (
    "project.created", "project.updated", "project.deleted",
    "agent.started", "agent.completed", "agent.failed",
    "tenant.created", "user.created",
)


def new_event(event_type: str, tenant_id: str, data: dict[str, Any]) -> dict[str, Any]:
    if event_type not in EVENT_TYPES:
        raise ValueError(f"unknown event type {event_type}")
    return {"id": new_id(EVENT_PREFIX), "type": event_type, "timestamp": timeutil.iso(timeutil.now()),
            "tenantId": tenant_id, "data": data}
