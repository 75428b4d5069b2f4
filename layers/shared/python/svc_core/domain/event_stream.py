"""The event stream: the tenant's event log live, as Server-Sent Events (GET /events/stream).

Each event of the log is sent as `id: <event id>`, `event: <type>`, `data: <the envelope's JSON>`,
oldest first, as it is logged; `--types` limits the types. Without Last-Event-ID the stream starts
with the events logged from now on; with it (header, or ?lastEventId=), it resumes after that event.

An event is logged a moment after it happened (the outbox publisher writes it), so events are not
always logged in id order: the follower reads again the last LATE_SECONDS before the newest event it
sent and sends what it had not. A resumed stream does the same before its Last-Event-ID, so it may
send again an event of those seconds that the client had: clients deduplicate by id (the CLI does).

Transport (streamed ASGI or buffered) is functions/event_stream's business.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from svc_core.auth.context import TenantContext
from svc_core.contracts.events import EVENT_PREFIX, EVENT_TYPES
from svc_core.domain import events
from svc_core.platform import ids, timeutil
from svc_core.platform.errors import ValidationFailed

STREAM_PATH = "/api/v1/events/stream"
RETRY_MS = 2000
LATE_SECONDS = 5.0
PAGE = 100
HEARTBEAT = ": keep-alive\n"   # no blank line after it: see domain/chat_stream.py
# An event id, or nothing: an empty Last-Event-ID (or ?lastEventId=) is no event, as if not sent.
LAST_EVENT_ID_PATTERN = f"^(?:{EVENT_PREFIX}_{ids.ULID_PATTERN})?$"
_TYPE = "(?:" + "|".join(re.escape(name) for name in EVENT_TYPES) + ")"
# The known names only (the document admits no more than is taken); empty: every type, as if not sent.
TYPES_PATTERN = f"^(?:{_TYPE}(?:,{_TYPE})*)?$"


def _bad(field_name: str, where: str, reason: str) -> ValidationFailed:
    return ValidationFailed("The request is not valid.", {"fields": [{"field": field_name, "in": where,
                                                                      "reason": reason}]})


def parse_types(text: str | None) -> list[str] | None:
    if text is None or text == "":
        return None
    names = list(dict.fromkeys(text.split(",")))
    unknown = [n for n in names if n not in EVENT_TYPES]
    if unknown:
        raise _bad("types", "query", f"unknown event types: {', '.join(unknown)}; known: {', '.join(EVENT_TYPES)}")
    return names


def parse_last_event_id(header: str | None, query: str | None) -> str | None:
    """The Last-Event-ID header, else the lastEventId query parameter: an event id, or None (an
    empty one is not sent)."""
    for value, name, where in ((header, "last-event-id", "header"), (query, "lastEventId", "query")):
        if value is not None and not re.fullmatch(LAST_EVENT_ID_PATTERN, value):
            raise _bad(name, where, f"String should match pattern '{LAST_EVENT_ID_PATTERN}'")
    return header or query or None


def _ms(event_id: str) -> int:
    return ids.ulid_value(event_id.rsplit("_", 1)[-1]) >> 80


@dataclass
class Follower:
    """Reads the tenant's log from a point in time on; never finished (a stream ends on its time)."""
    tenant_id: str
    types: list[str] | None
    floor_ms: int                      # nothing older than this is sent
    newest_ms: int                     # the newest event sent (or the start)
    sent: dict[str, int] = field(default_factory=dict)   # ids sent within the late window, and their ms
    finished: bool = False

    def step(self) -> list[dict[str, Any]]:
        start_ms = max(self.floor_ms, self.newest_ms - int(LATE_SECONDS * 1000))
        after: str | None = events.id_at_ms(start_ms - 1, last=True)   # read on from start_ms
        fresh: list[dict[str, Any]] = []
        for _ in range(10):   # at most 1,000 events a step
            items, after = events.events_after(self.tenant_id, after, PAGE, event_types=self.types)
            for item in items:
                if item["id"] not in self.sent:
                    self.sent[item["id"]] = _ms(item["id"])
                    fresh.append(item)
            if after is None:
                break
        if fresh:
            self.newest_ms = max(self.newest_ms, max(self.sent[e["id"]] for e in fresh))
            horizon = self.newest_ms - int(LATE_SECONDS * 1000)
            self.sent = {k: v for k, v in self.sent.items() if v >= horizon}
        return fresh


def open_stream(ctx: TenantContext, types: list[str] | None, last_event_id: str | None) -> Follower:
    if last_event_id is None:
        now_ms = int(timeutil.now() * 1000)
        follower = Follower(ctx.tenant_id, types, now_ms - int(LATE_SECONDS * 1000), now_ms)
        follower.step()  # what is logged already counts as sent: only what is logged from now on goes
        return follower
    resumed_ms = _ms(last_event_id)
    return Follower(ctx.tenant_id, types, resumed_ms - int(LATE_SECONDS * 1000), resumed_ms,
                    {last_event_id: resumed_ms})


def format_event(event: dict[str, Any]) -> str:
    data = json.dumps(event, separators=(",", ":"), ensure_ascii=False)
    return f"id: {event['id']}\nevent: {event['type']}\ndata: {data}\n\n"


def retry_line() -> str:
    return f"retry: {RETRY_MS}\n"


def failure_event() -> str:
    data = json.dumps({"code": "INTERNAL_ERROR", "message": "The stream failed; reconnect with Last-Event-ID to resume."})
    return f"event: error\ndata: {data}\n\n"
