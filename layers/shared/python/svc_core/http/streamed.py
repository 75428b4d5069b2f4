"""Server-Sent Events served streamed: the ASGI app of a streaming route.

In AWS the Lambda Web Adapter layer runs the app under uvicorn (the function's run.sh) with API
Gateway's response streaming, and passes API Gateway's request context in the
x-amzn-request-context header (request id, source address, stage); the local stack's gateway calls
it in-process the same way, writing each chunk as it comes. The request is admitted as every route
is (svc_core.http.api: credential, rate limit, tenant policy and IP allowlist, scope); errors until
the stream starts are answered in the envelope; then a follower's events are written as they come,
with heartbeat comments while nothing does, until the follower is finished, the stream's time is up,
the client goes away or the credential no longer stands (looked at every
stream_credential_check_seconds: the stream then ends with an `error` event, code UNAUTHORIZED).
Each stream holds a slot of its credential's and tenant's open streams (svc_core.auth.stream_slots)
from before it opens until it ends, renewed while it runs.

What a stream sends is the route's business (a StreamRoute: how to open its follower, format an
event, its timings); this module is the transport only (functions/chat_stream, functions/event_stream).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import parse_qsl

from svc_core.auth import rate_limit, stream_slots
from svc_core.http import envelope
from svc_core.http.api import JSON, Api
from svc_core.http.response import EVENT_STREAM
from svc_core.platform.config import Settings
from svc_core.platform.errors import MethodNotAllowed, NotFound, ServiceError
from svc_core.platform.log import logger

# What a stream route's description says of the caps (svc_core.auth.stream_slots), with the settings' defaults.
STREAM_CAP = (f"A credential may hold {Settings.stream_cap_per_credential} streams open at once and a tenant "
              f"{Settings.stream_cap_per_tenant} (the chat and event streams together, by default): one more is 429 "
              "RATE_LIMIT_EXCEEDED with `details.counter` `credential_streams` or `tenant_streams`, and Retry-After. ")


class Follower(Protocol):
    finished: bool

    def step(self) -> list[Any]: ...


@dataclass(frozen=True)
class StreamRoute:
    resource: str                                   # the route's path template, e.g. /api/v1/events/stream
    open: Callable[[dict[str, Any]], Any]           # the admitted proxy event -> its follower, or None (204)
    format_event: Callable[[Any], str]
    first_line: str                                 # sent first, e.g. "retry: 2000\n"
    heartbeat: str                                  # a comment line sent while nothing comes
    failure_event: Callable[[], str]                # sent when the stream fails once started
    timing: Callable[[], tuple[float, float, float]]  # (poll, heartbeat, longest stream), seconds

    def match(self, path: str) -> dict[str, str] | None:
        pattern = "^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", self.resource) + "/?$"
        found = re.match(pattern, path)
        return None if found is None else found.groupdict()


def proxy_event(scope: dict[str, Any], route: StreamRoute) -> dict[str, Any]:
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
    matched = route.match(path)
    return {"resource": route.resource if matched is not None else path, "path": path,
            "httpMethod": scope.get("method", "GET"), "headers": headers, "queryStringParameters": query or None,
            "pathParameters": matched or None, "requestContext": context, "body": None, "isBase64Encoded": False}


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


class _SlotKeeper:
    """A stream's slot while the stream runs: renewed in time, given back once, before the stream's
    last byte (a client that reconnects at once finds it free) or when the stream ends otherwise."""

    def __init__(self, slot: stream_slots.Slot | None) -> None:
        self.slot = slot
        self.next_renewal = time.monotonic() + stream_slots.renew_every_seconds()

    async def keep(self) -> bool:
        """False when the slot was lost (given up as expired): the stream ends."""
        if self.slot is None or time.monotonic() < self.next_renewal:
            return True
        self.next_renewal = time.monotonic() + stream_slots.renew_every_seconds()
        return await asyncio.to_thread(stream_slots.renew, self.slot)

    async def give_back(self) -> None:
        slot, self.slot = self.slot, None
        if slot is not None:
            await asyncio.to_thread(stream_slots.release, slot)


async def _pump(route: StreamRoute, follower: Follower, receive, send, keeper: _SlotKeeper,
                watch: rate_limit.CredentialWatch) -> None:
    """Write the events as they come; heartbeats while waiting; keep the stream's slot; stop when the
    client is gone (or the slot was lost: the client reconnects as after any end). A credential that
    no longer stands (a removed member's sign-in, a revoked key) ends the stream within
    stream_credential_check_seconds, with an `error` event UNAUTHORIZED: nothing more is sent to it."""
    poll, heartbeat_seconds, max_seconds = route.timing()
    loop = asyncio.get_running_loop()
    gone = asyncio.Event()
    watcher = asyncio.create_task(_watch_disconnect(receive, gone))

    async def write(text: str) -> None:
        await send({"type": "http.response.body", "body": text.encode(), "more_body": True})

    deadline = loop.time() + max_seconds
    try:
        await write(route.first_line)
        last_write = loop.time()
        while not gone.is_set():
            if watch.due() and await asyncio.to_thread(watch.ended):
                await write(rate_limit.credential_ended_event())
                break
            try:
                events = await asyncio.to_thread(follower.step)
            except Exception:
                logger.exception("stream failed")
                await write(route.failure_event())
                break
            for event in events:  # one chunk per event: each reaches the client as soon as it is read
                await write(route.format_event(event))
                last_write = loop.time()
            now = loop.time()
            if follower.finished or now >= deadline:
                break
            if not await keeper.keep():
                break
            if events:
                continue
            if now - last_write >= heartbeat_seconds:
                await write(route.heartbeat)
                last_write = now
            wait = min(poll, last_write + heartbeat_seconds - now, deadline - now)
            try:
                await asyncio.wait_for(gone.wait(), timeout=max(0.0, wait))
            except TimeoutError:
                pass
        if not gone.is_set():
            await keeper.give_back()
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


def asgi_app(api: Api, route: StreamRoute) -> Callable[..., Any]:
    """The ASGI app serving this one route streamed (other paths 404, other methods 405)."""

    def open_follower(event: dict[str, Any], state) -> tuple[Any, stream_slots.Slot | None]:
        """Admission and the start of the stream: everything that may still answer an error envelope.
        The follower and the stream's slot (given back here when there is no stream)."""
        api.admit(event, state)
        if event["resource"] != route.resource:
            raise NotFound("No such route.", {"path": event["path"], "method": event["httpMethod"]})
        if event["httpMethod"] != "GET":
            raise MethodNotAllowed(f"{event['httpMethod']} is not allowed on this path.", {"allowed": ["GET"]},
                                   {"Allow": "GET"})
        slot = stream_slots.take(state.principal) if state.principal is not None else None
        try:
            follower = route.open(event)
        except BaseException:
            if slot is not None:
                stream_slots.release(slot)
            raise
        if follower is None and slot is not None:
            stream_slots.release(slot)
            slot = None
        return follower, slot

    async def app(scope: dict[str, Any], receive, send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        event = proxy_event(scope, route)
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
            follower, slot = None, None
            try:
                follower, slot = await asyncio.to_thread(open_follower, event, state)
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
                keeper = _SlotKeeper(slot)
                try:
                    await send({"type": "http.response.start", "status": 200, "headers": _header_list({
                        **api.response_headers(state), "Content-Type": EVENT_STREAM, "Cache-Control": "no-cache",
                        "X-Accel-Buffering": "no"})})
                    await _pump(route, follower, receive, send, keeper, rate_limit.CredentialWatch(state.principal))
                finally:  # however the stream ended: its end, the client gone, a failure
                    await keeper.give_back()
            logger.info("request", extra={"method": event["httpMethod"], "resource": event["resource"],
                                          "status": status, "streamed": True,
                                          "latency_ms": round((time.perf_counter() - started) * 1000, 2)})

    return app
