"""GET /api/v1/chat/sessions/{id}/stream: a chat session's answer as Server-Sent Events.

Two entry points, one behaviour (svc_core/domain/chat_stream.py decides what is sent):
- `app`, an ASGI app, streamed: in AWS the Lambda Web Adapter layer runs it under uvicorn
  (run.sh) with API Gateway's response streaming, and passes API Gateway's request context in the
  x-amzn-request-context header (request id, source address, stage); the local stack's gateway
  calls it in-process the same way, writing each chunk as it comes;
- `lambda_handler`, the proxy integration's handler, buffered: where streaming is off, the same
  text/event-stream body, collected until `done` or a time budget.

Both authenticate as every route does (svc_core.http.api: credential, rate limit, tenant policy and IP
allowlist, scope), and accept the session's stream token as ?token= in place of the
Authorization header (EventSource cannot send one).
"""


import asyncio
import json
import re
import time
from typing import Annotated, Any
from urllib.parse import parse_qsl

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Header, Query

from svc_core.auth.principal import Principal
from svc_core.domain import chat_stream
from svc_core.domain.chat_stream import EVENT_STREAM, STREAM_PATH
from svc_core.http import envelope
from svc_core.http.api import JSON, Api, RequestState
from svc_core.platform.config import settings
from svc_core.platform.errors import MethodNotAllowed, NotFound, ServiceError
from svc_core.platform.log import logger

EVENT_ID_PATTERN = chat_stream.LAST_EVENT_ID_PATTERN
BUFFERED_LIMIT_SECONDS = 25.0  # API Gateway answers a buffered proxy integration after 29 s
_STREAM_PATH = re.compile(r"^/api/v1/chat/sessions/(?P<id>[^/]+)/stream/?$")


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
    "nothing to stream. Authenticate with the Authorization header or ?token= (POST .../stream-token). "
    "Streamed for real in AWS (API Gateway response streaming); buffered where streaming is off."
)


@api.get(STREAM_PATH, scope=chat_stream.STREAM_SCOPE, raw=True, media_type=EVENT_STREAM, tags=["Chat"],
         response_model=chat_stream.ChatStreamEvent, or_scheme=chat_stream.STREAM_TOKEN_SCHEME,
         summary="Stream a chat session's answer as Server-Sent Events", description=DESCRIPTION, also=(204,))
def stream_chat_session(
        id: str,  # noqa: A002 - the path parameter's name
        # str (not Optional[str]) with a None default: a header or query value is never JSON null, and
        # the document must not say it may be (a client would send the text "null").
        last_event_id: Annotated[str, Header(alias="Last-Event-ID", pattern=EVENT_ID_PATTERN,
                                             description="Resume after this event id")] = None,  # type: ignore[assignment]
        lastEventId: Annotated[str, Query(pattern=EVENT_ID_PATTERN,  # noqa: N803 - no-header clients
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
    context = api.resolver.lambda_context
    if context is not None and hasattr(context, "get_remaining_time_in_millis"):
        budget = min(budget, context.get_remaining_time_in_millis() / 1000 - 1)
    events = chat_stream.collect(follower, max(0.0, budget))
    body = chat_stream.retry_line() + "".join(chat_stream.format_event(e) for e in events)
    return Response(status_code=200, content_type=EVENT_STREAM, body=body)


api.snapstart()  # SnapStart's hooks (svc_core/platform/snapshot.py); a no-op outside Lambda
lambda_handler = api.handler


# ---- the streamed entry point (ASGI) ----------------------------------------------------------

def proxy_event(scope: dict[str, Any]) -> dict[str, Any]:
    """The request as the proxy event svc_core.http.api reads: API Gateway's own request context from
    x-amzn-request-context (the adapter sets it; outside API Gateway the socket's peer is the
    source address)."""
    headers: dict[str, str] = {}
    for name, value in scope.get("headers") or []:
        headers[name.decode("latin-1").lower()] = value.decode("latin-1")
    try:
        context = json.loads(headers.pop("x-amzn-request-context", "") or "{}")
    except ValueError:
        context = {}
    if not isinstance(context, dict):
        context = {}
    identity = context.get("identity") if isinstance(context.get("identity"), dict) else {}
    if not identity.get("sourceIp") and scope.get("client"):
        identity = {**identity, "sourceIp": scope["client"][0]}
    context["identity"] = identity
    query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
    path = scope.get("path") or "/"
    matched = _STREAM_PATH.match(path)
    return {"resource": STREAM_PATH if matched else path, "path": path, "httpMethod": scope.get("method", "GET"),
            "headers": headers, "queryStringParameters": query or None,
            "pathParameters": {"id": matched.group("id")} if matched else None,
            "requestContext": context, "body": None, "isBase64Encoded": False}


def _open(event: dict[str, Any], state: RequestState) -> chat_stream.Follower | None:
    """Admission and the start of the stream: everything that may still answer an error envelope."""
    api.admit(event, state)
    if event["resource"] != STREAM_PATH:
        raise NotFound("No such route.", {"path": event["path"], "method": event["httpMethod"]})
    if event["httpMethod"] != "GET":
        raise MethodNotAllowed(f"{event['httpMethod']} is not allowed on this path.", {"allowed": ["GET"]},
                               {"Allow": "GET"})
    query = event["queryStringParameters"] or {}
    last_event_id = chat_stream.parse_last_event_id(event["headers"].get("last-event-id"), query.get("lastEventId"))
    return chat_stream.open_stream(api.tenant_context(), event["pathParameters"]["id"], last_event_id)


def _header_list(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode("latin-1"), str(v).encode("latin-1")) for k, v in headers.items()]


async def _answer(send, status: int, headers: dict[str, str], body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": _header_list(headers)})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _watch_disconnect(receive, gone: asyncio.Event) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            gone.set()
            return


async def _pump(follower: chat_stream.Follower, receive, send) -> None:
    """Write the events as they are stored; heartbeats while waiting; stop when the client is gone."""
    cfg = settings()
    loop = asyncio.get_running_loop()
    gone = asyncio.Event()
    watcher = asyncio.create_task(_watch_disconnect(receive, gone))

    async def write(text: str) -> None:
        await send({"type": "http.response.body", "body": text.encode(), "more_body": True})

    deadline = loop.time() + cfg.chat_stream_max_seconds
    poll = cfg.chat_stream_poll_ms / 1000
    try:
        await write(chat_stream.retry_line())
        last_write = loop.time()
        while not gone.is_set():
            try:
                events = await asyncio.to_thread(follower.step)
            except Exception:
                logger.exception("chat stream failed")
                await write(chat_stream.failure_event())
                break
            for event in events:  # one chunk per event: each reaches the client as soon as it is read
                await write(chat_stream.format_event(event))
                last_write = loop.time()
            now = loop.time()
            if follower.finished or now >= deadline:
                break
            if events:
                continue
            if now - last_write >= cfg.chat_stream_heartbeat_seconds:
                await write(chat_stream.HEARTBEAT)
                last_write = now
            wait = min(poll, last_write + cfg.chat_stream_heartbeat_seconds - now, deadline - now)
            try:
                await asyncio.wait_for(gone.wait(), timeout=max(0.0, wait))
            except asyncio.TimeoutError:
                pass
        if not gone.is_set():
            await send({"type": "http.response.body", "body": b"", "more_body": False})
    except OSError:
        pass  # the client went away while we wrote: nothing to tell anyone
    finally:
        watcher.cancel()


async def _lifespan(receive, send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def app(scope: dict[str, Any], receive, send) -> None:
    if scope["type"] == "lifespan":
        await _lifespan(receive, send)
        return
    if scope["type"] != "http":
        return
    event = proxy_event(scope)
    started = time.perf_counter()
    with api.request_state(event) as state:
        preflight = api.answer_preflight(event, state)
        if preflight is not None:  # a browser's CORS preflight: no credential, nothing counted
            status, headers, body = preflight
            headers = {**api.response_headers(state), **headers, **({"Content-Type": JSON} if body else {})}
            await _answer(send, status, headers, body.encode())
            logger.info("request", extra={"method": event["httpMethod"], "resource": event["resource"],
                                          "status": status, "preflight": True})
            return
        refusal: ServiceError | None = None
        try:
            follower = await asyncio.to_thread(_open, event, state)
        except ServiceError as exc:
            refusal = exc
        except Exception:
            logger.exception("unhandled error")
            refusal = ServiceError()
        status = refusal.status if refusal else 200
        if refusal is not None:
            headers = {**api.response_headers(state), **refusal.headers, "Content-Type": JSON}
            await _answer(send, status, headers, envelope.error_body(
                refusal.code, refusal.message, refusal.details, state.request_id).encode())
        elif follower is None:
            status = 204
            await _answer(send, 204, {**api.response_headers(state), "Cache-Control": "no-cache"}, b"")
        else:
            await send({"type": "http.response.start", "status": 200, "headers": _header_list({
                **api.response_headers(state), "Content-Type": EVENT_STREAM, "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no"})})
            await _pump(follower, receive, send)
        logger.info("request", extra={"method": event["httpMethod"], "resource": event["resource"], "status": status,
                                      "streamed": True, "latency_ms": round((time.perf_counter() - started) * 1000, 2)})
