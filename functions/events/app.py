"""The event log: a tenant's events of the last 30 days, as the webhooks carry them."""

from __future__ import annotations  # the models are named lazily (svc_core/domain/models)

from typing import Annotated

from svc_core.domain import events
from svc_core.domain.events import TIME_PATTERN, EventType
from svc_core.domain.paging import DEFAULT_LIMIT, MAX_LIMIT
from svc_core.http.api import Api
from svc_core.http.params import IdCursor, Query
from svc_core.platform.lazy import lazy_module

models = lazy_module("svc_core.domain.models.events")
api = Api()
TAGS = ["Events"]
TimeQuery = Annotated[str | None, Query(pattern=TIME_PATTERN, description=(
    "ISO 8601 date and time with its offset, e.g. 2026-11-25T10:00:00Z"))]


@api.get("/api/v1/events", scope=events.SCOPE, response_model="models.EventPage", tags=TAGS,
         summary="List the tenant's events of the last 30 days, newest first",
         description="Filters: `type` (one event name), `objectId` (the project, tenant or user the event is "
                     "about; the run of an agent.* event, the person (user id) of a member.* event), "
                     "`since` and `until` (the event's time, both included). "
                     "A filtered page may hold fewer than `limit` events and still have a `nextCursor`.")
def list_events(limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
                cursor: IdCursor = None,
                type: Annotated[EventType | None, Query(description="only events of this name")] = None,
                objectId: Annotated[str | None, Query(max_length=64,
                                                         description="only events about this object")] = None,
                since: TimeQuery = None, until: TimeQuery = None):
    return events.list_events(api.tenant_context(), limit, cursor, type, objectId, since, until)


@api.get("/api/v1/events/{id}", scope=events.SCOPE, response_model="models.LoggedEvent", tags=TAGS,
         summary="Read one event of the last 30 days")
def get_event(id: str):
    return events.get_event(api.tenant_context(), id)


api.snapstart()  # SnapStart's hooks (svc_core/platform/snapshot.py); a no-op outside Lambda
lambda_handler = api.handler
