"""The event log: every event of a tenant, readable for 30 days, in the envelope the webhooks carry.

The outbox publisher records each event (record(), from domain/event_publishing.py) before it puts
it on the bus, so what a webhook receives is in the log first; a replay (domain/webhook_replays.py)
and the event stream read it.
Ids are evt_ ULIDs, so the log's order is the events' time order and a time range (since, until)
is a range of ids.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, Literal

from svc_core.auth.context import TenantContext
from svc_core.contracts import cursors
from svc_core.contracts.events import EVENT_PREFIX, EVENT_TYPES, Event
from svc_core.data import events_table
from svc_core.domain.paging import page
from svc_core.platform import ids, timeutil
from svc_core.platform.errors import NotFound, ValidationFailed

RETENTION_DAYS = 30
SCOPE = "events:read"
_RANDOM_BITS = 80
_LOWEST = f"{EVENT_PREFIX}_{ids.ulid_text(0)}"
_HIGHEST = f"{EVENT_PREFIX}_{ids.ulid_text((1 << ids.ULID_BITS) - 1)}"
# (The audit log's aud_ ids are ULIDs too: its time ranges are id ranges of that prefix.)
# A date and time with its offset that names a real instant: every string the pattern admits parses
# (the document promises no more than the service takes). Years 0001-9999; February 29 in leap years.
_YEAR = r"(?:000[1-9]|00[1-9]\d|0[1-9]\d\d|[1-9]\d{3})"
_LEAP_YEAR = r"(?:\d\d(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_DATE = (rf"(?:{_YEAR}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)"
         rf"|02-(?:0[1-9]|1\d|2[0-8]))|{_LEAP_YEAR}-02-29)")
_CLOCK = r"(?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,6})?)?"
TIME_PATTERN = rf"^{_DATE}T{_CLOCK}(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$"

EventType = Literal[EVENT_TYPES]  # type: ignore[valid-type]


def object_id_of(event: Event) -> str | None:
    """What the objectId filter matches: the run of an agent.* event, the person of a member.* event
    (their user id), else the object's own id."""
    if event.type.startswith("agent."):
        value = event.data.get("runId")
    elif event.type.startswith("member."):
        value = event.data.get("userId")
    else:
        value = event.data.get("id")
    return value if isinstance(value, str) else None


def epoch_of(timestamp: str) -> float:
    moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def record(event: Event) -> bool:
    """Keep the event in its tenant's log for the retention; False when it was kept already (a
    retried publish)."""
    expires_at = int(epoch_of(event.timestamp)) + RETENTION_DAYS * 86400
    return events_table.put(event.payload(), object_id_of(event), expires_at)


def id_at(epoch_seconds: float, last: bool = False, prefix: str = EVENT_PREFIX) -> str:
    """The lowest (or, last=True, highest) event id (id of that prefix) of that millisecond."""
    return id_at_ms(int(epoch_seconds * 1000), last, prefix)


def id_at_ms(ms: int, last: bool = False, prefix: str = EVENT_PREFIX) -> str:
    ms = max(0, ms)
    random_part = (1 << _RANDOM_BITS) - 1 if last else 0
    return f"{prefix}_{ids.ulid_text((ms << _RANDOM_BITS) | random_part)}"


def parse_time(text: str | None, field: str) -> float | None:
    if text is None:
        return None
    if not re.fullmatch(TIME_PATTERN, text):
        raise _bad_time(field)
    try:
        return epoch_of(text)
    except ValueError:
        raise _bad_time(field) from None


def _bad_time(field: str) -> ValidationFailed:
    return ValidationFailed(f"{field} is not a date and time.", {"fields": [
        {"field": field, "in": "query", "reason": "must be ISO 8601 with an offset, e.g. 2026-11-25T10:00:00Z"}]})


def id_range(since: float | None, until: float | None, prefix: str = EVENT_PREFIX) -> tuple[str, str]:
    """The ids (of that prefix) from since to until, both included (None: no bound)."""
    return (id_at_ms(0, prefix=prefix) if since is None else id_at(since, prefix=prefix),
            id_at_ms((1 << (ids.ULID_BITS - _RANDOM_BITS)) - 1, last=True, prefix=prefix) if until is None
            else id_at(until, last=True, prefix=prefix))


def _not_found(event_id: str) -> NotFound:
    return NotFound("The event does not exist.", {"id": event_id, "resource": "event"})


def list_events(ctx: TenantContext, limit: int, cursor: str | None, event_type: str | None = None,
                object_id: str | None = None, since: str | None = None, until: str | None = None,
                store=events_table) -> dict[str, Any]:
    """Newest first; since and until bound the events' time (both included)."""
    low, high = id_range(parse_time(since, "since"), parse_time(until, "until"))
    items, last = store.query(ctx.tenant_id, low=low, high=high, newest_first=True, limit=limit,
                              now=timeutil.now(), after=cursors.id_after(cursor, EVENT_PREFIX),
                              event_types=[event_type] if event_type else None, object_id=object_id)
    return page(items, cursors.id_cursor(last) if last else None)


def get_event(ctx: TenantContext, event_id: str, store=events_table) -> dict[str, Any]:
    found = store.get(ctx.tenant_id, event_id, timeutil.now()) if ids.is_id(event_id, EVENT_PREFIX) else None
    if found is None:
        raise _not_found(event_id)
    return found


def events_after(tenant_id: str, after: str | None, limit: int, *, event_types: list[str] | None = None,
                 until_id: str = _HIGHEST, store=events_table) -> tuple[list[dict[str, Any]], str | None]:
    """The tenant's events after the id `after` (None: from the oldest kept), oldest first, up to
    until_id; and the id to go on after when more may follow."""
    return store.query(tenant_id, low=_LOWEST, high=until_id, newest_first=False, limit=limit,
                       now=timeutil.now(), after=after, event_types=event_types)
