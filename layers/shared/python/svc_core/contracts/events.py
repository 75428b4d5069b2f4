"""Domain events: the envelope every consumer sees, {id, type, timestamp, tenantId, data}.

`Event` is that envelope, typed once for every hop: built here (new_event, or the webhook test
event), stored in the outbox with the change that caused it (data/outbox_table.py), put on the
EventBridge bus by the outbox publisher (detail-type = type, detail = the envelope), fanned out to
the webhook subscriptions (data/webhook_delivery_queue.py), and POSTed as the body of each delivery
(domain/webhook_delivery.py). Each hop reads it back with `Event.of`. The client library's
`WebhookEvent` is the receiving side's model of it (a test holds the two alike).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from svc_core.platform import timeutil
from svc_core.platform.checked import fields_of, require_strings
from svc_core.platform.ids import new_id

EVENT_PREFIX = "evt"   # event ids: evt_ and a ULID

EVENT_TYPES = (
    "project.created", "project.updated", "project.deleted",
    "agent.started", "agent.completed", "agent.failed",
    "tenant.created", "user.created",
    "member.added", "member.removed", "member.role_changed",
)


@dataclass(frozen=True)
class Event:
    """Checked as a strict schema would check it, without pydantic: every write's path builds one,
    and a read's cold start should not load pydantic for it (svc_core.http.binding)."""

    id: str
    type: str
    timestamp: str      # ISO 8601, UTC, milliseconds
    tenantId: str
    data: dict[str, Any]

    def __post_init__(self) -> None:
        require_strings(self, ("id", "type", "timestamp", "tenantId"), EventInvalid)
        if not isinstance(self.data, dict) or not all(type(k) is str for k in self.data):
            raise EventInvalid("data must be an object")

    @classmethod
    def of(cls, payload: Mapping[str, Any]) -> Event:
        return cls(**fields_of(cls, payload, EventInvalid))

    def payload(self) -> dict[str, Any]:
        """The envelope as JSON-ready values, in the order it is sent."""
        return {"id": self.id, "type": self.type, "timestamp": self.timestamp, "tenantId": self.tenantId,
                "data": self.data}

    def to_json(self) -> str:
        """The envelope's wire form: compact JSON, as the bus detail and the webhook body."""
        return json.dumps(self.payload(), separators=(",", ":"))


class EventInvalid(ValueError):
    """A payload that is not an event envelope."""



def event_now(event_type: str, tenant_id: str, data: dict[str, Any]) -> Event:
    """An event of any type (the webhook test's too), with a new id and the current time."""
    return Event(id=new_id(EVENT_PREFIX), type=event_type, timestamp=timeutil.iso(timeutil.now()),
                 tenantId=tenant_id, data=data)


def new_event(event_type: str, tenant_id: str, data: dict[str, Any]) -> Event:
    """A domain event, one of EVENT_TYPES."""
    if event_type not in EVENT_TYPES:
        raise ValueError(f"unknown event type {event_type}")
    return event_now(event_type, tenant_id, data)
