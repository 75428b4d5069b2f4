"""An HTTP gateway on loopback that does what API Gateway's REST proxy integration does.

Routes come from the Api events of template.yaml. As API Gateway does, a static path segment
beats a {param}, which beats a {proxy+}, and an exact method beats ANY. Each request becomes
the proxy event AWS would send (requestContext with requestId, identity.sourceIp, stage,
resourcePath; pathParameters; single and multi-value headers and query strings; a base64
body for binary content) and is passed to the function's real handler. A path no route
matches gets the API's own 404 envelope, as the template's gateway response gives it, with the CORS
headers the functions' answers carry (svc_core.http.cors: for the origins of the AllowedOrigins parameter).
A function that has not answered after API Gateway's integration timeout (29 s) gets the template's
INTEGRATION_TIMEOUT gateway response (504 in the error envelope), as the deployed API answers it; one
still running at its own, shorter, Timeout, or answering more than Lambda's 6 MB, is a function error
(502, as a crash); a body over API Gateway's 10 MB gets the template's REQUEST_TOO_LARGE (413) before
any function sees it (docs/local-stack.md, "Limits as AWS applies them").

Routes API Gateway streams (ResponseTransferMode RESPONSE_STREAM, a Lambda Web Adapter function)
are served as the adapter serves them: the function's ASGI app gets the HTTP request with API
Gateway's request context in the x-amzn-request-context header, and each chunk it sends is written
to the socket at once (chunked transfer encoding). A client that goes away is told to the app as
http.disconnect, so it stops. With streaming=False those routes are answered buffered by the
function's proxy handler, as where streaming is off.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import socket
import threading
import time
import traceback
import uuid
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlsplit

from devstack.loopback_server import LoopbackHTTPServer

STAGE = "v1"
API_ID = "local"
_TEXT_TYPES = ("application/json", "text/", "application/x-www-form-urlencoded", "application/xml",
               "application/problem+json", "application/javascript")


class Route:
    def __init__(self, method: str, template: str, function: str, streaming: bool = False) -> None:
        self.method, self.template, self.function = method, template, function
        self.streaming = streaming
        parts = template.strip("/").split("/")
        pattern, self.params = "", []
        self.rank = []
        for part in parts:
            greedy = re.fullmatch(r"\{(\w+)\+\}", part)
            named = re.fullmatch(r"\{(\w+)\}", part)
            if greedy:
                pattern += r"/(?P<%s>.+)" % greedy.group(1)
                self.params.append(greedy.group(1))
                self.rank.append(2)
            elif named:
                pattern += r"/(?P<%s>[^/]+)" % named.group(1)
                self.params.append(named.group(1))
                self.rank.append(1)
            else:
                pattern += "/" + re.escape(part)
                self.rank.append(0)
        self.regex = re.compile("^" + pattern + "/?$")

    def sort_key(self) -> tuple:
        # Most specific first: fewer variable segments earlier, then exact methods before ANY.
        return (self.rank, self.method == "ANY")


class Router:
    def __init__(self, routes: list[tuple[str, str, str]], streaming: set[tuple[str, str]] | None = None) -> None:
        streaming = streaming or set()
        self.routes = sorted((Route(m, p, f, (m, p) in streaming) for m, p, f in routes), key=Route.sort_key)

    def match(self, method: str, path: str) -> tuple[Route, dict[str, str]] | None:
        for route in self.routes:
            found = route.regex.match(path)
            if found and route.method in (method, "ANY"):
                return route, found.groupdict()
        return None


def _is_text(content_type: str | None, body: bytes) -> bool:
    if not content_type or content_type.lower().startswith(_TEXT_TYPES):
        try:
            body.decode("utf-8")
            return True
        except UnicodeDecodeError:
            return False
    return False


def build_event(*, method: str, raw_path: str, headers: list[tuple[str, str]], body: bytes,
                source_ip: str, route: Route, path_params: dict[str, str]) -> dict[str, Any]:
    parts = urlsplit(raw_path)
    single_headers: dict[str, str] = {}
    multi_headers: dict[str, list[str]] = {}
    for name, value in headers:
        single_headers[name] = value
        multi_headers.setdefault(name, []).append(value)
    query = parse_qsl(parts.query, keep_blank_values=True)
    single_query: dict[str, str] = {}
    multi_query: dict[str, list[str]] = {}
    for name, value in query:
        single_query[name] = value
        multi_query.setdefault(name, []).append(value)
    now = datetime.now(UTC)
    content_type = next((v for k, v in headers if k.lower() == "content-type"), None)
    text = _is_text(content_type, body)
    return {
        "resource": route.template,
        "path": parts.path,
        "httpMethod": method,
        "headers": single_headers or None,
        "multiValueHeaders": multi_headers or None,
        "queryStringParameters": single_query or None,
        "multiValueQueryStringParameters": multi_query or None,
        "pathParameters": path_params or None,
        "stageVariables": None,
        "requestContext": {
            "accountId": "123456789012",
            "resourceId": format(abs(hash(route.template)) % 10**6, "06d"),
            "stage": STAGE,
            "requestId": str(uuid.uuid4()),
            "extendedRequestId": str(uuid.uuid4()),
            "requestTime": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "requestTimeEpoch": int(now.timestamp() * 1000),
            "path": f"/{STAGE}{parts.path}",
            "resourcePath": route.template,
            "httpMethod": method,
            "apiId": API_ID,
            "protocol": "HTTP/1.1",
            "domainName": single_headers.get("Host", "127.0.0.1"),
            "identity": {
                "cognitoIdentityPoolId": None, "accountId": None, "cognitoIdentityId": None, "caller": None,
                "accessKey": None, "sourceIp": source_ip, "cognitoAuthenticationType": None,
                "cognitoAuthenticationProvider": None, "userArn": None,
                "userAgent": single_headers.get("User-Agent"), "user": None,
            },
        },
        "body": (body.decode("utf-8") if text else base64.b64encode(body).decode()) if body else None,
        "isBase64Encoded": bool(body) and not text,
    }


def _not_found_body(path: str, request_id: str) -> bytes:
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return json.dumps({"error": {"code": "RESOURCE_NOT_FOUND", "message": "No such route.", "details": {"path": path}},
                       "meta": {"request_id": request_id, "timestamp": stamp}}).encode()


class Gateway:
    def __init__(self, router: Router, functions: dict[str, Any], host: str = "127.0.0.1", port: int = 3000,
                 log=print, streaming: bool = True, local_routes: dict[str, Any] | None = None,
                 allowed_origins: frozenset[str] = frozenset(), local_health=None,
                 listening: socket.socket | None = None) -> None:
        self.router, self.functions, self.log = router, functions, log
        # The health answer's `local` part (engine and pollers): what only the local stack knows.
        self.local_health = local_health
        self.allowed_origins = allowed_origins  # CORS, for the answers the gateway gives itself
        # The local stack's own pages (GET only, never part of the API nor deployed): path -> a callable
        # given the query's values, answering JSON data or an HTML page (a str).
        self.local_routes = local_routes or {}
        self.streaming = streaming
        # API Gateway's integration timeout (a REST API's default, 29 s): a function still running
        # then gets the INTEGRATION_TIMEOUT gateway response. Streamed routes have their own.
        self.integration_timeout = INTEGRATION_TIMEOUT_SECONDS
        gateway = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # the gateway logs its own line
                pass

            def _serve(self) -> None:
                gateway.serve(self)

            def __getattr__(self, name: str) -> Any:
                # Every method reaches the routes (ANY routes answer the unknown ones with 405).
                if name.startswith("do_"):
                    return self._serve
                raise AttributeError(name)

        if listening is None:
            self.server = LoopbackHTTPServer((host, port), Handler)
        else:  # a socket already listening, bound by the process that started this one (python -m devstack --regions)
            self.server = LoopbackHTTPServer(listening.getsockname(), Handler, bind_and_activate=False)
            self.server.socket.close()
            self.server.socket = listening
        self.port = self.server.server_address[1]
        self._thread: threading.Thread | None = None

    def start(self) -> Gateway:
        self._thread = threading.Thread(target=self.server.serve_forever, name="gateway", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def serve(self, request: BaseHTTPRequestHandler) -> None:
        started = time.perf_counter()
        length = int(request.headers.get("Content-Length") or 0)
        path = urlsplit(request.path).path
        if length > REQUEST_PAYLOAD_BYTES:   # refused before any route or function sees it
            _discard(request, length)          # read (so the client gets the answer, not a reset), never kept
            request.close_connection = True
            self._write(request, *gateway_response("REQUEST_TOO_LARGE", _gateway_event(request, path)))
            self.log(f"{request.command} {path} -> 413 (a body of {length} bytes)")
            return
        body = request.rfile.read(length) if length else b""
        if path in self.local_routes and request.command == "GET":
            self._local_route(request, path)
            return
        matched = self.router.match(request.command, path)
        if matched is None:
            request_id = str(uuid.uuid4())
            from svc_core.http import cors  # the shared layer's rules, as the functions apply them
            cors_headers = cors.response_headers(request.headers.get("Origin"), self.allowed_origins)
            self._write(request, 404, [("Content-Type", "application/json"), ("X-Request-Id", request_id),
                                       *cors_headers.items(), *_security_headers()], _not_found_body(path, request_id))
            self.log(f"{request.command} {path} -> 404 (no route)")
            return
        route, params = matched
        event = build_event(method=request.command, raw_path=request.path, headers=list(request.headers.items()),
                            body=body, source_ip=request.client_address[0], route=route, path_params=params)
        if route.streaming and self.streaming:
            status = _Streamed(request, event, body).run(self.functions[route.function].asgi_app(), self.log)
            self.log(f"{request.command} {path} -> {status} {route.function} (streamed) "
                     f"{(time.perf_counter() - started) * 1000:.1f} ms")
            return
        function = self.functions[route.function]
        # Lambda ends an invocation at the function's Timeout (an error, which API Gateway answers 502);
        # API Gateway stops waiting at its own integration timeout (504), whichever comes first.
        function_timeout = getattr(function, "timeout", None)
        try:
            result = _within(function.invoke, event, self.integration_timeout, function_timeout)
            response_bytes = len(json.dumps(result, separators=(",", ":")).encode())
            if response_bytes > LAMBDA_RESPONSE_BYTES:
                raise FunctionError(f"Response payload size exceeded maximum allowed payload size "
                                    f"({LAMBDA_RESPONSE_BYTES} bytes): {response_bytes} bytes")
            status, headers, payload = _from_proxy_result(result)
            if path == HEALTH_PATH and status == 200 and self.local_health is not None:
                payload = _with_local_health(payload, self.local_health())
        except FunctionTimeout:   # Lambda's "Task timed out": the function's thread runs on (it cannot be killed here)
            self.log(f"{route.function}: Task timed out after {function_timeout:.2f} seconds")
            status, headers, payload = _function_error(event)
        except IntegrationTimeout:   # API Gateway stops waiting (the function may still be running)
            status, headers, payload = gateway_response("INTEGRATION_TIMEOUT", event)
        except FunctionError as exc:   # Lambda refused the function's answer: API Gateway answers 502
            self.log(f"{route.function}: {exc}")
            status, headers, payload = _function_error(event)
        except Exception:  # the function crashed: API Gateway answers 502 (and Lambda logs the trace)
            self.log(traceback.format_exc())
            request_id = event["requestContext"]["requestId"]
            status, headers = 502, [("Content-Type", "application/json"), ("X-Request-Id", request_id),
                                    *_security_headers()]
            payload = _error_payload(request_id)
        self._write(request, status, headers, payload)
        self.log(f"{request.command} {path} -> {status} {route.function} "
                 f"{(time.perf_counter() - started) * 1000:.1f} ms")

    def _local_route(self, request: BaseHTTPRequestHandler, path: str) -> None:
        """A page of the local stack's own. A query it refuses (ValueError) is 400, any other failure 502 (the
        emulator behind it did not answer, say): answered, never a connection closed without a word."""
        query = {name: values[-1] for name, values in parse_qs(urlsplit(request.path).query).items()}
        try:
            answer = self.local_routes[path](query)
        except ValueError as exc:
            self._write(request, 400, [("Content-Type", "application/json")], json.dumps({"error": str(exc)}).encode())
            return
        except Exception as exc:
            self.log(f"GET {path} -> 502 ({type(exc).__name__}: {exc})")
            self._write(request, 502, [("Content-Type", "application/json")],
                        json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode())
            return
        if isinstance(answer, str):  # a page (the mailbox): the API's policy (no script, style or frame)
            self._write(request, 200, [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"),
                                       *_security_headers()], answer.encode())
        else:
            self._write(request, 200, [("Content-Type", "application/json")], json.dumps(answer, indent=2).encode())

    @staticmethod
    def _write(request: BaseHTTPRequestHandler, status: int, headers: list[tuple[str, str]], payload: bytes) -> None:
        request.send_response(status)
        for name, value in headers:
            if name.lower() not in ("content-length", "connection", "transfer-encoding"):
                request.send_header(name, value)
        request.send_header("Content-Length", str(len(payload)))
        request.end_headers()
        if request.command != "HEAD":
            request.wfile.write(payload)


HEALTH_PATH = "/api/v1/health"
INTEGRATION_TIMEOUT_SECONDS = 29.0
# API Gateway REST's request payload quota, 10 MB (https://docs.aws.amazon.com/apigateway/latest/developerguide/
# limits.html: "Payload size 10 MB", not adjustable), answered with the REQUEST_TOO_LARGE gateway response (413,
# https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html), which
# template.yaml customises.
REQUEST_PAYLOAD_BYTES = 10 * 1024 * 1024
# Lambda's synchronous response payload quota, 6 MB, as its error names it: "Response payload size exceeded
# maximum allowed payload size (6291556 bytes)" (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html).
LAMBDA_RESPONSE_BYTES = 6_291_556


class IntegrationTimeout(Exception):
    """The function did not answer within the integration timeout."""


class FunctionTimeout(Exception):
    """The function ran past its Timeout (Lambda ends the invocation: API Gateway answers 502)."""


class FunctionError(Exception):
    """Lambda reports the invocation as failed although the handler returned (its answer too large)."""


def _function_error(event: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes]:
    """API Gateway's answer to an invocation Lambda reports as failed (a crash, a timeout, an answer too
    large): 502, as the local stack answers a crash."""
    request_id = event["requestContext"]["requestId"]
    return 502, [("Content-Type", "application/json"), ("X-Request-Id", request_id),
                 *_security_headers()], _error_payload(request_id)


def _discard(request: BaseHTTPRequestHandler, length: int) -> None:
    while length > 0:
        chunk = request.rfile.read(min(length, 1 << 20))
        if not chunk:
            return
        length -= len(chunk)


def _gateway_event(request: BaseHTTPRequestHandler, path: str) -> dict[str, Any]:
    """The request context of a request refused before any route is looked at (what a gateway response reads)."""
    now = datetime.now(UTC)
    return {"requestContext": {"requestId": str(uuid.uuid4()), "requestTime": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
                               "path": f"/{STAGE}{path}"}}


def _within(invoke, event: dict[str, Any], integration_seconds: float, function_seconds: float | None = None) -> Any:
    """invoke(event)'s answer; IntegrationTimeout when API Gateway's wait (integration_seconds from
    now) ends first, FunctionTimeout when Lambda's (function_seconds from when the invocation began,
    invoke's began()) does. The invocation goes on in its own thread, as a Lambda function outlives
    API Gateway's wait; a wait for a free container here counts against the gateway's time only."""
    answer: dict[str, Any] = {}
    done = threading.Event()
    began: list[float] = []

    def run() -> None:
        try:
            answer["result"] = invoke(event, began=began.append) if function_seconds is not None else invoke(event)
        except BaseException as exc:  # handed to the waiting thread, which raises it
            answer["error"] = exc
        finally:
            done.set()

    gateway_ends = time.monotonic() + integration_seconds
    threading.Thread(target=run, name="gateway-integration", daemon=True).start()
    while not done.is_set():
        function_ends = began[0] + function_seconds if began and function_seconds is not None else None
        ends = gateway_ends if function_ends is None else min(gateway_ends, function_ends)
        left = ends - time.monotonic()
        if left <= 0:
            raise FunctionTimeout() if function_ends is not None and function_ends < gateway_ends else IntegrationTimeout()
        # Until the invocation has begun, look again soon: its own clock starts then.
        done.wait(left if function_ends is not None or function_seconds is None else min(left, 0.05))
    if "error" in answer:
        raise answer["error"]
    return answer["result"]


# API Gateway's own answers the local gateway gives: each type's default status and $context.error.message
# (https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html).
GATEWAY_DEFAULTS = {
    "MISSING_AUTHENTICATION_TOKEN": (403, "Missing Authentication Token"),
    "REQUEST_TOO_LARGE": (413, "Request Too Long"),
    "INTEGRATION_TIMEOUT": (504, "Endpoint request timed out"),
}


def gateway_response(response_type: str, event: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes]:
    """API Gateway's own answer of this type as template.yaml's GatewayResponses give it, resolved as API
    Gateway resolves it: the type's own response, else DEFAULT_4XX or DEFAULT_5XX by the type's default
    status; the status the response sets, else the type's default. Its body template gets the request's
    $context values, and its headers: a value in single quotes is static (API Gateway drops the outer quotes
    only), any other names a $context value."""
    from devstack.template import load
    responses = load()["Resources"]["Api"]["Properties"].get("GatewayResponses") or {}
    default_status, message = GATEWAY_DEFAULTS[response_type]
    response = responses.get(response_type) or responses.get(f"DEFAULT_{default_status // 100}XX") or {}
    context = event["requestContext"]
    values = {**{name: context[name] for name in ("requestId", "requestTime", "path")},
              "error.message": message, "error.messageString": json.dumps(message)}
    template = (response.get("ResponseTemplates") or {}).get("application/json", '{"message":$context.error.messageString}')
    body = re.sub(r"\$context\.([A-Za-z.]+[A-Za-z])", lambda found: values[found.group(1)], template)
    headers = [("Content-Type", "application/json")]
    for name, source in ((response.get("ResponseParameters") or {}).get("Headers") or {}).items():
        static = len(source) >= 2 and source[0] == source[-1] == "'"
        headers.append((name, source[1:-1] if static else values[source.removeprefix("context.")]))
    return int(response.get("StatusCode") or default_status), headers, body.encode()


def _with_local_health(payload: bytes, local: dict[str, Any]) -> bytes:
    """The function's health answer with data.local filled (the same document shape, one field set)."""
    body = json.loads(payload)
    body["data"]["local"] = local
    return json.dumps(body).encode()


def _from_proxy_result(result: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes]:
    status = int(result.get("statusCode", 200))
    headers: dict[str, list[str]] = {}
    for name, value in (result.get("headers") or {}).items():
        headers[name] = [str(value)]
    for name, values in (result.get("multiValueHeaders") or {}).items():
        headers[name] = [str(v) for v in values]
    body = result.get("body") or ""
    payload = base64.b64decode(body) if result.get("isBase64Encoded") else body.encode()
    return status, [(k, v) for k, vs in headers.items() for v in vs], payload


def _security_headers() -> list[tuple[str, str]]:
    """The security headers of every answer, on the gateway's own answers too (as the template's gateway responses)."""
    from svc_core.http.security_headers import EVERY_ANSWER
    return list(EVERY_ANSWER.items())


def _error_payload(request_id: str) -> bytes:
    return json.dumps({"error": {"code": "INTERNAL_ERROR", "message": "The function failed.", "details": {}},
                       "meta": {"request_id": request_id}}).encode()


class _Streamed:
    """One request served by an ASGI app, as the Lambda Web Adapter serves it behind API Gateway's
    response streaming: the app runs in this gateway thread, in its own event loop."""

    def __init__(self, request: BaseHTTPRequestHandler, event: dict[str, Any], body: bytes) -> None:
        self.request, self.event, self.body = request, event, body
        self.status: int | None = None
        self.chunked = False
        self.finished = False
        self.gone = False

    def scope(self) -> dict[str, Any]:
        parts = urlsplit(self.request.path)
        headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in self.request.headers.items()
                   if k.lower() != "x-amzn-request-context"]  # only the gateway says what API Gateway saw
        headers.append((b"x-amzn-request-context", json.dumps(self.event["requestContext"]).encode()))
        host, port = self.request.server.server_address[:2]
        return {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
                "method": self.request.command, "scheme": "http", "path": parts.path,
                "raw_path": parts.path.encode(), "query_string": parts.query.encode("latin-1"), "root_path": "",
                "headers": headers, "client": tuple(self.request.client_address[:2]), "server": (host, port)}

    def run(self, app: Any, log) -> int:
        try:
            asyncio.run(app(self.scope(), self.receive, self.send))
        except Exception:
            if not self.gone:
                log(traceback.format_exc())
        if self.status is None:  # the app failed before answering: API Gateway answers 502
            request_id = self.event["requestContext"]["requestId"]
            Gateway._write(self.request, 502, [("Content-Type", "application/json"), ("X-Request-Id", request_id),
                                               *_security_headers()], _error_payload(request_id))
            return 502
        if not self.finished:  # cut short: the client must see the stream end, not wait for more
            self.request.close_connection = True
        return self.status

    async def receive(self) -> dict[str, Any]:
        if self.body is not None:
            body, self.body = self.body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await self._client_gone()
        return {"type": "http.disconnect"}

    async def _client_gone(self) -> None:
        """Returns when the client has closed its side (the socket reads end-of-file or fails)."""
        sock = self.request.connection
        loop = asyncio.get_running_loop()
        while not self.gone:
            readable = loop.create_future()
            loop.add_reader(sock.fileno(), lambda ready=readable: ready.done() or ready.set_result(None))
            try:
                await readable
            finally:
                loop.remove_reader(sock.fileno())
            try:
                self.gone = sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
            except BlockingIOError:
                continue
            except OSError:
                self.gone = True
            if not self.gone:  # the client sent more (a pipelined request): it is still there
                await asyncio.Event().wait()

    async def send(self, message: dict[str, Any]) -> None:
        if self.gone:
            raise ConnectionResetError("the client has gone")
        try:
            if message["type"] == "http.response.start":
                self._start(message)
            elif message["type"] == "http.response.body":
                self._body(message.get("body", b""), message.get("more_body", False))
        except OSError:
            self.gone = True
            raise

    def _start(self, message: dict[str, Any]) -> None:
        request, self.status = self.request, int(message["status"])
        request.send_response(self.status)
        for name, value in message.get("headers", []):
            if name.decode("latin-1").lower() not in ("content-length", "connection", "transfer-encoding"):
                request.send_header(name.decode("latin-1"), value.decode("latin-1"))
        self.chunked = self.status not in (204, 304) and request.command != "HEAD"
        request.send_header("Transfer-Encoding" if self.chunked else "Content-Length", "chunked" if self.chunked else "0")
        request.end_headers()
        request.wfile.flush()

    def _body(self, data: bytes, more: bool) -> None:
        out = self.request.wfile
        if data and self.chunked:
            out.write(b"%X\r\n%s\r\n" % (len(data), data))
        if not more:
            if self.chunked:
                out.write(b"0\r\n\r\n")
            self.finished = True
        out.flush()
