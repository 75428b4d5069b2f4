"""GET /api/v1/chat/sessions/{id}/stream: a chat session's answer as Server-Sent Events.

Two entry points, one behaviour (svc_core/domain/chat_stream.py decides what is sent):
- `app`, an ASGI app, streamed (svc_core/http/streamed.py): in AWS the Lambda Web Adapter layer
  runs it under uvicorn (run.sh) with API Gateway's response streaming; the local stack's gateway
  calls it in-process the same way, writing each chunk as it comes;
- `lambda_handler`, the proxy integration's handler, buffered: where streaming is off, the same
  text/event-stream body, collected until `done` or a time budget.

Both authenticate as every route does (svc_core.http.api: credential, rate limit, tenant policy and IP
allowlist, scope), and accept the session's stream token as ?token= in place of the
Authorization header (EventSource cannot send one).
"""

from __future__ import annotations  # the models are named lazily (svc_core/domain/models)

import time
from typing import Annotated, Any

from svc_core.auth import rate_limit
from svc_core.auth.principal import Principal
from svc_core.domain import chat_stream
from svc_core.domain.chat_stream import EVENT_STREAM, STREAM_PATH
from svc_core.http import streamed
from svc_core.http.api import Api
from svc_core.http.params import Header, Query
from svc_core.http.response import Response
from svc_core.platform.config import settings
from svc_core.platform.lazy import lazy_module

models = lazy_module("svc_core.domain.models.chat")
EVENT_ID_PATTERN = chat_stream.LAST_EVENT_ID_PATTERN
BUFFERED_LIMIT_SECONDS = 25.0  # API Gateway answers a buffered proxy integration after 29 s


class StreamApi(Api):
    def authenticate(self, event: dict[str, Any], headers: dict[str, str]) -> Principal:
        """The Authorization header as on every route; without one, the session's stream token."""
        token = (event.get("queryStringParameters") or {}).get(chat_stream.STREAM_TOKEN_PARAMETER)
        if headers.get("authorization") or token is None:
            return super().authenticate(event, headers)
        return chat_stream.verify_stream_token(token, (event.get("pathParameters") or {}).get("id"))


api = StreamApi()

DESCRIPTION = (
    "Server-Sent Events: `retry:` first, then each stored event of the turn as `id: <n>`, `event: <name>`, "
    "`data: <json>` in id order (message_start, content_delta, tool_use, tool_result, usage, message_stop, "
    "error, done), `: keep-alive` comments every 15 s while waiting; the stream ends after `done`. "
    "With Last-Event-ID (or ?lastEventId=): every event after that id, then the new ones. 204 when there is "
    "nothing to stream. Authenticate with the Authorization header or ?token= (POST .../stream-token). A stream "
    "fails with `event: error` without an id: `INTERNAL_ERROR` (reconnect with Last-Event-ID), or `UNAUTHORIZED` "
    "within a second of its credential ending (the member removed or demoted, the key revoked; a reconnection "
    "is 401). "
    + streamed.STREAM_CAP + "Streamed for real in AWS (API Gateway response streaming); buffered where streaming is off."
)


@api.get(STREAM_PATH, scope=chat_stream.STREAM_SCOPE, raw=True, media_type=EVENT_STREAM, tags=["Chat"],
         response_model="models.ChatStreamEvent", or_scheme=chat_stream.STREAM_TOKEN_SCHEME,
         summary="Stream a chat session's answer as Server-Sent Events", description=DESCRIPTION, also=(204,))
def stream_chat_session(
        id: str,
        # str (not Optional[str]) with a None default: a header or query value is never JSON null, and
        # the document must not say it may be (a client would send the text "null").
        last_event_id: Annotated[str, Header(alias="Last-Event-ID", pattern=EVENT_ID_PATTERN,
                                             description="Resume after this event id")] = None,  # type: ignore[assignment]
        lastEventId: Annotated[str, Query(pattern=EVENT_ID_PATTERN,
                                          description="Resume after this event id")] = None):  # type: ignore[assignment]
    """The buffered answer (the proxy integration): the same body, collected. The parameters are
    declared for validation and the OpenAPI document (the ?token= as a security scheme); the header
    and token are read where the streamed entry point reads them too (parse_last_event_id,
    StreamApi.authenticate)."""
    del last_event_id
    follower = chat_stream.open_stream(api.tenant_context(), id,
                                       chat_stream.parse_last_event_id(api.header("last-event-id"), lastEventId))
    api.set_response_header("Cache-Control", "no-cache")
    if follower is None:
        return Response(status_code=204, content_type=None, body="")
    budget = min(settings().chat_stream_buffered_seconds, BUFFERED_LIMIT_SECONDS)
    context = api.lambda_context()
    if context is not None and hasattr(context, "get_remaining_time_in_millis"):
        budget = min(budget, context.get_remaining_time_in_millis() / 1000 - 1)
    watch = rate_limit.CredentialWatch(api.tenant_context().principal)
    watch.next_check = time.monotonic() + settings().stream_credential_check_seconds  # admission just looked
    events, ended = chat_stream.collect(follower, max(0.0, budget), ended=watch.ended)
    body = chat_stream.retry_line() + "".join(chat_stream.format_event(e) for e in events)
    if ended:  # a removed member's wait answers nothing more
        body += rate_limit.credential_ended_event()
    return Response(status_code=200, content_type=EVENT_STREAM, body=body)


api.snapstart()  # SnapStart's hooks (svc_core/platform/snapshot.py); a no-op outside Lambda
lambda_handler = api.handler


# ---- the streamed entry point (ASGI) ----------------------------------------------------------

def _open(event: dict[str, Any]) -> chat_stream.Follower | None:
    query = event["queryStringParameters"] or {}
    last_event_id = chat_stream.parse_last_event_id(event["headers"].get("last-event-id"), query.get("lastEventId"))
    return chat_stream.open_stream(api.tenant_context(), event["pathParameters"]["id"], last_event_id)


def _timing() -> tuple[float, float, float]:
    cfg = settings()
    return cfg.chat_stream_poll_ms / 1000, cfg.chat_stream_heartbeat_seconds, cfg.chat_stream_max_seconds


app = streamed.asgi_app(api, streamed.StreamRoute(
    resource=STREAM_PATH, open=_open, format_event=chat_stream.format_event, first_line=chat_stream.retry_line(),
    heartbeat=chat_stream.HEARTBEAT, failure_event=chat_stream.failure_event, timing=_timing))
