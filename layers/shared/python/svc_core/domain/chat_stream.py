"""The chat answer stream: which stored events a GET .../chat/sessions/{id}/stream sends, in what
form, until when; and the stream token a browser's EventSource authenticates with.

The chat turn worker stores every event of an assistant turn in the chat events table before
anyone sees it (ids 1, 2, 3 ... per session, across turns). A stream only reads that table:
- with Last-Event-ID L (header, or the lastEventId query parameter): every event with id > L,
  then the new ones as they are stored; without: the newest turn from its first event;
- it ends after it has sent a `done` and no later event is waiting; nothing to send (no turn, or
  L covers everything and no turn is in progress) is 204, before any byte of a stream;
- it polls the table (chat_stream_poll_ms) and, while nothing comes, reads the session now and
  then: a turn that ended meanwhile without a later event ends the stream too.

Transport (a streamed ASGI response, or a buffered proxy response) is the function's business
(functions/chat_stream); everything here is the same for both.

The stream token exists because EventSource cannot send an Authorization header: it is an ES256
JWT of its own type and audience (never accepted as an access token), bound to one tenant, one
session and the credential's principal (its rate-limit counter and revocation), lives 5 minutes
at most, and is reusable within that life (EventSource reconnects reuse the URL).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from svc_core.auth import tokens
from svc_core.auth.context import TenantContext
from svc_core.auth.principal import Principal
from svc_core.data import chat_events_table
from svc_core.domain import chat
from svc_core.platform import timeutil
from svc_core.platform.config import settings
from svc_core.platform.errors import NotFound, Unauthorized, ValidationFailed

EVENT_STREAM = "text/event-stream"
STREAM_PATH = "/api/v1/chat/sessions/{id}/stream"
STREAM_SCOPE = "chat:read"
# The stream token goes in the query (EventSource sends no header): an OpenAPI security scheme.
STREAM_TOKEN_SCHEME = "streamToken"
STREAM_TOKEN_PARAMETER = "token"
RETRY_MS = 2000                 # how long EventSource waits before it reconnects
# A comment line: clients ignore it, proxies and load balancers see traffic. No blank line after it
# (nor after retry:): a blank line ends an event block, and some clients (httpx-sse) then hand out
# an empty event repeating the last id; the next event's own blank line ends the block instead.
HEARTBEAT = ": keep-alive\n"
TOKEN_TYPE = "chat-stream+jwt"  # not at+jwt: tokens.verify() refuses it everywhere else
TOKEN_LIFETIME_SECONDS = 300
SESSION_CHECK_SECONDS = 1.0     # while idle: how often to look whether the turn ended
BATCH = 200                     # events read per query
# Where a stream resumes: an event's id, or nothing (an empty Last-Event-ID is as if not sent).
LAST_EVENT_ID_PATTERN = r"^(?:[0-9]{1,18})?$"
_LAST_EVENT_ID = re.compile(LAST_EVENT_ID_PATTERN)


def token_audience() -> str:
    return f"{settings().jwt_audience}:chat-stream"


# ---- the stream token --------------------------------------------------------------------------

def issue_stream_token(ctx: TenantContext, session_id: str, base_url: str = "") -> dict[str, Any]:
    """A short-lived token for this session's stream, for the caller's own credential."""
    session = chat.get_session(ctx, session_id)
    principal = ctx.principal
    now = int(timeutil.now())
    lifetime = TOKEN_LIFETIME_SECONDS
    parent_expiry = principal.claims.get("exp") if principal.credential == "user" else None
    if isinstance(parent_expiry, int):  # never outlive the access token it was issued for
        lifetime = max(1, min(lifetime, parent_expiry - now))
    extra = {"chs": session["id"]}
    if principal.session_id:
        extra["sid"] = principal.session_id  # the sign-in session: its counter, its revocation
    token, lifetime = tokens.mint(subject=principal.subject, tenant_id=ctx.tenant_id, scopes=[STREAM_SCOPE],
                                  credential=principal.credential, lifetime=lifetime, extra=extra,
                                  token_type=TOKEN_TYPE, audience=token_audience())
    url = f"{base_url.rstrip('/')}{STREAM_PATH.replace('{id}', session['id'])}?token={token}"
    return {"token": token, "expires_at": timeutil.iso(now + lifetime), "streamUrl": url}


def verify_stream_token(token: str, session_id: str | None) -> Principal:
    """The principal of a stream token, if it is valid and for this session (else Unauthorized)."""
    try:
        principal = tokens.verify(token, token_type=TOKEN_TYPE, audience=token_audience())
    except Unauthorized as exc:
        raise Unauthorized(exc.message.replace("access token", "stream token")) from None
    if principal.claims.get("chs") != session_id:
        raise Unauthorized("The stream token is for another chat session.")
    return principal


# ---- what to send ------------------------------------------------------------------------------

def parse_last_event_id(header: str | None, query: str | None) -> int | None:
    """The Last-Event-ID header, else the lastEventId query parameter: an integer >= 0, or None (an
    empty one is not sent). Each one sent must be valid, even the query parameter the header overrides."""
    # Named and worded as the buffered handler's validation (Powertools, from the same pattern) names them.
    for value, name, where in ((header, "last-event-id", "header"), (query, "lastEventId", "query")):
        if value is not None and not _LAST_EVENT_ID.match(value):
            raise ValidationFailed("The request is not valid.", {"fields": [
                {"field": name, "in": where, "reason": f"String should match pattern '{LAST_EVENT_ID_PATTERN}'"}]})
    chosen = header or query
    return int(chosen) if chosen else None


def start_after(session: dict[str, Any], last_event_id: int | None) -> int | None:
    """The id the stream starts after, or None when there is nothing to stream (204)."""
    if last_event_id is None:
        turn = session.get("latestTurn")
        return int(turn["firstEventId"]) - 1 if turn else None
    if not session.get("activeTurn") and last_event_id >= session["lastEventId"]:
        return None
    return last_event_id


def open_stream(ctx: TenantContext, session_id: str, last_event_id: int | None) -> Follower | None:
    """The stream's follower, or None for 204. NotFound for a session not in the caller's tenant."""
    session = chat.get_session(ctx, session_id)
    cursor = start_after(session, last_event_id)
    return None if cursor is None else Follower(ctx, session["id"], cursor)


def format_event(event: dict[str, Any]) -> str:
    data = json.dumps(event["data"], separators=(",", ":"), ensure_ascii=False)
    return f"id: {event['id']}\nevent: {event['event']}\ndata: {data}\n\n"


def retry_line() -> str:
    return f"retry: {RETRY_MS}\n"


def failure_event() -> str:
    """Sent when the stream itself fails once started (no id: it is not a stored event)."""
    data = json.dumps({"code": "INTERNAL_ERROR",
                       "message": "The stream failed; reconnect with Last-Event-ID to resume."})
    return f"event: error\ndata: {data}\n\n"


@dataclass
class Follower:
    """Reads a session's events after a cursor; knows when the stream is over."""
    ctx: TenantContext
    session_id: str
    cursor: int
    finished: bool = False
    _done_sent: bool = False
    _next_session_check: float = field(default=0.0)

    def step(self, clock: Callable[[], float] = time.monotonic) -> list[dict[str, Any]]:
        """The events stored after the cursor (possibly none); sets `finished` when the stream ends."""
        events = chat_events_table.after(self.ctx.tenant_id, self.session_id, self.cursor, BATCH)
        if events:
            self.cursor = events[-1]["id"]
            self._done_sent = events[-1]["event"] == "done"
            # A short batch ending with done: nothing later was waiting when it was read.
            self.finished = self._done_sent and len(events) < BATCH
            return events
        if self._done_sent:
            self.finished = True
        elif clock() >= self._next_session_check:
            self._next_session_check = clock() + SESSION_CHECK_SECONDS
            self.finished = self._turn_over()
        return []

    def _turn_over(self) -> bool:
        """No turn in progress and nothing stored past the cursor: nothing more will come."""
        try:
            session = chat.get_session(self.ctx, self.session_id)
        except NotFound:  # deleted meanwhile
            return True
        return not session.get("activeTurn") and self.cursor >= session["lastEventId"]


def collect(follower: Follower, budget_seconds: float, sleep: Callable[[float], None] = time.sleep,
            clock: Callable[[], float] = time.monotonic,
            ended: Callable[[], bool] = lambda: False) -> tuple[list[dict[str, Any]], bool]:
    """The buffered answer: every event until the stream ends, the time budget is spent or
    `ended()` says the credential no longer stands (looked at before each read after the first; the
    caller then adds its error event). The events, and whether it was the credential that ended it."""
    deadline = clock() + budget_seconds
    poll = settings().chat_stream_poll_ms / 1000
    events: list[dict[str, Any]] = []
    while True:
        batch = follower.step(clock)
        events.extend(batch)
        if follower.finished or clock() >= deadline:
            return events, False
        if not batch:
            sleep(min(poll, max(0.0, deadline - clock())))
        if ended():
            return events, True
