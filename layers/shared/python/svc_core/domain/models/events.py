"""The event log's response models, the event stream's among them (svc_core/domain/models says why
they live apart)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from svc_core.domain.models.common import Page, named


class LoggedEvent(BaseModel):
    """An event as the webhooks carry it: {id, type, timestamp, tenantId, data}."""
    id: str = Field(examples=["evt_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
    type: str = Field(examples=["project.created"])
    timestamp: str = Field(description="ISO 8601 UTC, milliseconds")
    tenantId: str
    data: dict[str, Any] = Field(description="the event's data (see the events table in the webhooks guide)")


EventPage = named("EventPage", Page[LoggedEvent])


# ---- the event stream ---------------------------------------------------------------------

class StreamedEvent(BaseModel):
    """One Server-Sent Event of the stream (fields id, event, data, retry)."""
    id: str | None = Field(default=None, description="the event's id (evt_...)")
    event: str | None = Field(default=None, description="the event's type, e.g. project.created")
    data: str = Field(description="the event's envelope as JSON: {id, type, timestamp, tenantId, data}")
    retry: int | None = Field(default=None, description="milliseconds before a reconnect (sent once, first)")
