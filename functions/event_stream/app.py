"""GET /api/v1/events/stream: the tenant's event log live, as Server-Sent Events (what
`svc listen` reads).

Two entry points, one behaviour (svc_core/domain/event_stream.py decides what is sent):
- `app`, an ASGI app, streamed (svc_core/http/streamed.py, as the chat stream is served): in AWS
  the Lambda Web Adapter layer runs it under uvicorn (run.sh) with API Gateway's response
  streaming; the local stack's gateway calls it in-process the same way;
- `lambda_handler`, the proxy integration's handler, buffered: where streaming is off, the events
  logged within a short wait, in one text/event-stream body (the client reconnects with
  Last-Event-ID).
"""

from __future__ import annotations  # the models are named lazily (svc_core/domain/models)

import time
from typing import Annotated, Any

from svc_core.auth import rate_limit
from svc_core.domain import event_stream, events
from svc_core.domain.event_stream import LAST_EVENT_ID_PATTERN, STREAM_PATH, TYPES_PATTERN
from svc_core.http import streamed
from svc_core.http.api import Api
from svc_core.http.params import Header, Query
from svc_core.http.response import Response
from svc_core.platform.config import settings
from svc_core.platform.lazy import lazy_module

models = lazy_module("svc_core.domain.models.events")
BUFFERED_SECONDS = 20.0  # API Gateway answers a buffered proxy integration after 29 s

api = Api()

DESCRIPTION = (
    "Server-Sent Events: `retry:` first, then each event of the tenant's log as it is logged: `id: <event id>`, "
    "`event: <type>`, `data: <the event's JSON, as the webhooks carry it>`, oldest first; `: keep-alive` comments "
    "while nothing comes. Without Last-Event-ID the stream starts with the events logged from now on; with it "
    "(or ?lastEventId=) it resumes after that event (the events of the 5 seconds before it may come again: "
    "deduplicate by id). `types`: comma-separated event names. A stream ends after 5 minutes at most; reconnect "
    "with Last-Event-ID. A credential that no longer stands (the member removed or demoted, the key revoked) ends "
    "the stream within a second with `event: error` and `data: {\"code\": \"UNAUTHORIZED\", ...}` (no id); a "
    "reconnection is then 401. "
    + streamed.STREAM_CAP + "Streamed for real in AWS (API Gateway response streaming); buffered where streaming is off."
)


@api.get(STREAM_PATH, scope=events.SCOPE, raw=True, media_type=streamed.EVENT_STREAM, tags=["Events"],
         response_model="models.StreamedEvent", summary="Stream the tenant's events as Server-Sent Events",
         description=DESCRIPTION)
def stream_events(
        types: Annotated[str, Query(pattern=TYPES_PATTERN, description="only these event names, comma-separated")
                         ] = None,  # type: ignore[assignment]
        last_event_id: Annotated[str, Header(alias="Last-Event-ID", pattern=LAST_EVENT_ID_PATTERN,
                                             description="Resume after this event id")] = None,  # type: ignore[assignment]
        lastEventId: Annotated[str, Query(pattern=LAST_EVENT_ID_PATTERN,
                                          description="Resume after this event id")] = None):  # type: ignore[assignment]
    """The buffered answer: what is logged within a short wait."""
    del last_event_id
    follower = _follower(types, api.header("last-event-id"), lastEventId)
    api.set_response_header("Cache-Control", "no-cache")
    deadline = time.monotonic() + BUFFERED_SECONDS
    watch = rate_limit.CredentialWatch(api.tenant_context().principal)
    watch.next_check = time.monotonic() + settings().stream_credential_check_seconds  # admission just looked
    found, ended = follower.step(), False
    while not found and time.monotonic() < deadline:
        time.sleep(settings().event_stream_poll_ms / 1000)
        if watch.ended():  # a removed member's wait answers nothing more
            ended = True
            break
        found = follower.step()
    body = event_stream.retry_line() + "".join(event_stream.format_event(e) for e in found)
    if ended:
        body += rate_limit.credential_ended_event()
    return Response(status_code=200, content_type=streamed.EVENT_STREAM, body=body)


def _follower(types: str | None, header: str | None, query: str | None) -> event_stream.Follower:
    return event_stream.open_stream(api.tenant_context(), event_stream.parse_types(types),
                                    event_stream.parse_last_event_id(header, query))


api.snapstart()  # a no-op outside Lambda (and this function runs under the Web Adapter there)
lambda_handler = api.handler


def _open(event: dict[str, Any]) -> event_stream.Follower:
    query = event["queryStringParameters"] or {}
    return _follower(query.get("types"), event["headers"].get("last-event-id"), query.get("lastEventId"))


def _timing() -> tuple[float, float, float]:
    cfg = settings()
    return cfg.event_stream_poll_ms / 1000, cfg.event_stream_heartbeat_seconds, cfg.event_stream_max_seconds


app = streamed.asgi_app(api, streamed.StreamRoute(
    resource=STREAM_PATH, open=_open, format_event=event_stream.format_event, first_line=event_stream.retry_line(),
    heartbeat=event_stream.HEARTBEAT, failure_event=event_stream.failure_event, timing=_timing))
