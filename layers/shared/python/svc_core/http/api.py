"""The HTTP layer every API function shares.

A function declares its routes with the scope each needs:

    api = Api()

    @api.get("/api/v1/projects/{id}", scope="projects:read", response_model=Project,
             summary="Read one project")
    def get_project(id: str):
        return projects.get_project(api.tenant_context(), id)

    lambda_handler = api.handler

and gets, for every request: the credential checked (before the body is looked at), the
request counted against the credential's rate limit and its tenant's ceiling (a public route
that creates or checks credentials names its throttle group instead: counted per source
address), the scope checked, the body size, type and JSON checked (svc_core.http.json_body: UTF-8,
nesting depth, numbers, duplicate keys), the input validated (svc_core.http.binding), the result
wrapped in the envelope, every error mapped to its code, and the X-Request-Id, X-RateLimit-*,
security and CORS headers on every response, errors included. A route answering Server-Sent Events
holds a slot of its credential's and tenant's open streams while it answers (svc_core.auth.stream_slots).
A browser's CORS preflight (OPTIONS with Origin and Access-Control-Request-Method) is answered before
admission: no credential, not counted (svc_core.http.cors). Paths are written as in template.yaml.

Routing and validation are this module's and svc_core.http.binding's, with Powertools' rules and
error locations; the OpenAPI document is Powertools', generated from the same declarations
(svc_core.http.openapi_doc, which imports this module, never the reverse). Powertools' event handler is not imported to serve a
request: its import alone (every resolver it has, its OpenAPI models) cost each cold start about
50 ms, a third of a function's own start-up (docs/benchmarks.md). docs/architecture.md, "Why the HTTP
layer is our own", gives the figures and what to keep in step with Powertools.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import gc
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from svc_core.adapters import aws
from svc_core.auth import cell_routing, rate_limit, tenant_policy
from svc_core.auth.authenticate import authenticate, key_pepper
from svc_core.auth.context import TenantContext
from svc_core.auth.principal import Principal
from svc_core.contracts import cells, plans
from svc_core.data.common import ConditionFailed
from svc_core.http import cors, envelope, json_body, security_headers
from svc_core.http.binding import Binder, RequestInvalid
from svc_core.http.response import EVENT_STREAM, JSON, Response
from svc_core.platform import deadline, ids, snapshot
from svc_core.platform.config import settings
from svc_core.platform.errors import (
    Conflict,
    Forbidden,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ServiceError,
    ServiceUnavailable,
    Unauthorized,
    UnsupportedMediaType,
    ValidationFailed,
)
from svc_core.platform.log import logger

# Powertools' event handler (the OpenAPI document's) logs every route's arguments at DEBUG, request
# bodies included (passwords, secret values, provider codes): never let it, whatever the log level.
logging.getLogger("aws_lambda_powertools.event_handler").setLevel(logging.INFO)

AUTHENTICATED = "authenticated"  # a route's scope when any valid credential may call it
# A page or a document sets its own Cache-Control and Content-Security-Policy (set_response_header).
SECURITY_HEADERS = {"Cache-Control": "no-store", **security_headers.EVERY_ANSWER}


@dataclass(frozen=True)
class RouteSpec:
    method: str
    path: str                 # as in template.yaml: /api/v1/projects/{id}
    scope: str | None
    public: bool
    throttle: str | None = None  # a public route's group, counted per source address
    stream: bool = False         # answers Server-Sent Events: each request holds a stream slot (auth.stream_slots)


@dataclass
class RequestState:
    request_id: str
    source_ip: str
    principal: Principal | None = None
    allowance: rate_limit.Allowance | None = None
    extra_headers: dict[str, str] = field(default_factory=dict)
    body: tuple[str, Any] | None = None  # the body's text and its JSON value, once admission parsed it
    routes: list[Any] | None = None  # the routes of the request's resource, once admission found them
    failure_counter: str | None = None  # a route group counting only failures: its counter, counted on one
    origin: str | None = None  # the request's Origin header (a browser's page), for the CORS headers
    event: dict[str, Any] = field(default_factory=dict)  # the proxy event
    context: Any = None  # the Lambda context, when there is one


_state: contextvars.ContextVar[RequestState] = contextvars.ContextVar("request_state")


# A path parameter's characters, as Powertools matched them (RFC 3986's unreserved and sub-delims,
# and what a client may send unencoded): a path with any other character is no route's (404).
_SEGMENT = r"[-._~()'!*:@,;=+&$%<> \[\]{}|^\w]+"


def _path_pattern(path: str) -> re.Pattern[str]:
    parts = re.split(r"\{(\w+)\}", path)
    regex = "".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>{_SEGMENT})" for i, part in enumerate(parts))
    return re.compile(f"^{regex}$")


def _specificity(path: str) -> tuple[bool, ...]:
    """A template's order among those matching one path: segment by segment, a literal first."""
    return tuple(part.startswith("{") for part in path.split("/"))


@dataclass
class Route:
    spec: RouteSpec
    func: Callable               # the function as declared
    call: Callable[..., Response]  # the function, its result made the answer
    binder: Binder
    pattern: re.Pattern[str]
    doc: dict[str, Any]          # what the OpenAPI document says of it (openapi_doc)


class Api:
    def __init__(self) -> None:
        self.specs: dict[tuple[str, str], RouteSpec] = {}
        self.routes: list[Route] = []

    # ---- declaring routes -------------------------------------------------------------

    def route(self, method: str, path: str, *, scope: str | None = None, public: bool = False,
              status: int = 200, response_model: type | None = None, summary: str,
              description: str | None = None, tags: list[str] | None = None,
              raw: bool = False, media_type: str = JSON, cache_seconds: int = 0,
              errors: tuple[int, ...] = (), also: tuple[int, ...] = (), throttle: str | None = None,
              security_scheme: str | None = None, or_scheme: str | None = None,
              idempotent: Any = None) -> Callable:
        """raw: the body is the result itself, not the envelope (for documents whose format a
        standard fixes, such as a JWKS); with another media_type (a page), the result is the
        body's text. cache_seconds: let clients cache a public document. throttle: on a public
        route, the group (register, sign-in...) counted per source address (rate_limit.address_limit:
        every request, or only the failures of sign-in). security_scheme: on a public route that checks
        a credential of its own (a provider's signature header), the OpenAPI security scheme that
        declares it (devstack/openapi.py); the route answers 401 when it does not verify. or_scheme:
        on a scoped route, a credential it takes instead of the bearer one (the chat stream's token
        in the query, for EventSource), declared as the security alternative it is. idempotent: the
        operation (a name, or an idempotency.Operation) whose Idempotency-Key the route honours: the
        header is taken and documented, and the work runs once per key (svc_core/http/idempotency.py)."""
        if not public and scope is None:
            raise ValueError(f"{method} {path}: a route is either public or names its scope "
                             "(AUTHENTICATED when any credential will do)")
        if throttle is not None and not public:
            raise ValueError(f"{method} {path}: only a public route has a per-address throttle group")
        if throttle is not None:
            errors = (*errors, 429)
        if security_scheme is not None:
            if not public:
                raise ValueError(f"{method} {path}: a route with bearer credentials declares no other scheme")
            errors = (*errors, 401)
        if media_type == EVENT_STREAM and public:
            raise ValueError(f"{method} {path}: a stream is counted against its credential's open streams, "
                             "so its route names a scope")
        if or_scheme is not None and public:
            raise ValueError(f"{method} {path}: or_scheme is an alternative to a scoped route's bearer credential")
        if idempotent is not None:
            from svc_core.http import idempotency  # loaded by the functions with an idempotent route only
            errors = (*errors, *(code for code in idempotency.ERRORS if code not in errors))
            description = (idempotency.DESCRIPTION.strip() if description is None
                           else description + idempotency.DESCRIPTION)
        spec = RouteSpec(method=method, path=path, scope=scope, public=public, throttle=throttle,
                         stream=media_type == EVENT_STREAM)
        doc = {"status": status, "response_model": response_model, "summary": summary, "description": description,
               "tags": tags, "raw": raw, "media_type": media_type, "errors": errors, "also": also,
               "security_scheme": security_scheme, "or_scheme": or_scheme}

        def decorator(func: Callable) -> Callable:
            served = func if idempotent is None else idempotency.route(self, idempotent, func)

            def call(**kwargs: Any) -> Response:
                result = served(**kwargs)
                if isinstance(result, Response):  # a route that picks its own status and body (a stream)
                    return result
                if hasattr(result, "model_dump"):  # a pydantic model (not imported to check: see binding)
                    result = result.model_dump(mode="json")
                if raw:
                    if cache_seconds:
                        _state.get().extra_headers["Cache-Control"] = f"public, max-age={cache_seconds}"
                    body = json.dumps(result) if media_type == JSON else result
                    return Response(status_code=status, content_type=media_type, body=body)
                return Response(status_code=status, content_type=JSON,
                                body=envelope.success_body(result, _state.get().request_id))

            self.specs[(method, path)] = spec
            self.routes.append(Route(spec, served, call, Binder(served, path), _path_pattern(path), doc))
            # Powertools' order: every static path before any with a parameter (a parameter would match them).
            self.routes.sort(key=lambda r: "{" in r.spec.path)
            return func

        return decorator

    def get(self, path: str, **kw: Any) -> Callable:
        return self.route("GET", path, **kw)

    def post(self, path: str, **kw: Any) -> Callable:
        return self.route("POST", path, **kw)

    def put(self, path: str, **kw: Any) -> Callable:
        return self.route("PUT", path, **kw)

    def patch(self, path: str, **kw: Any) -> Callable:
        return self.route("PATCH", path, **kw)

    def delete(self, path: str, **kw: Any) -> Callable:
        return self.route("DELETE", path, **kw)

    # ---- SnapStart ----------------------------------------------------------------------

    def snapstart(self, services: tuple[str, ...] = ("dynamodb", "secretsmanager"), runtime: Any = None) -> None:
        """Register the SnapStart hooks (platform/snapshot.py), once the routes are declared.
        services: the AWS clients whose models to load before the snapshot (every request's
        admission reads DynamoDB and the key pepper in Secrets Manager). runtime: for the tests."""
        snapshot.register(functools.partial(self.prepare_snapshot, services), runtime)
        # In a function's own process (Lambda names it), what the import made (modules, models, routes)
        # lives as long as the container: out of the collector's sight, no full collection lands in the
        # first request to walk it all (about 17 ms). A process that imports functions again and again
        # (the tests, the local stack) keeps collecting them.
        if os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):
            gc.freeze()

    def prepare_snapshot(self, services: tuple[str, ...] = ("dynamodb", "secretsmanager")) -> None:
        """What every request needs, made before the snapshot: the settings, each route's
        parameter and body validator (built on a route's first request otherwise), the services'
        clients, warmed and kept (adapters/aws.py: they hold no credential and no connection across
        the restore), the metrics module and, where a route takes a credential, the key pepper (the
        one secret a snapshot keeps: auth/authenticate.py says why)."""
        settings()
        for route in self.routes:
            route.binder.build()
        aws.warm_models(services)
        from svc_core.platform import metrics  # noqa: F401 - else imported at the end of the first request
        if any(not spec.public for spec in self.specs.values()):
            key_pepper()

    # ---- inside a route ---------------------------------------------------------------

    def tenant_context(self) -> TenantContext:
        state = _state.get()
        if state.principal is None:
            raise Unauthorized()
        return TenantContext(tenant_id=state.principal.tenant_id, principal=state.principal,
                             request_id=state.request_id, source_ip=state.source_ip)

    def header(self, name: str) -> str | None:
        headers = _state.get().event.get("headers") or {}
        return next((v for k, v in headers.items() if k.lower() == name.lower()), None)

    def current_event(self) -> dict[str, Any]:
        """The request's proxy event, as API Gateway sent it (a route that verifies its raw body)."""
        return _state.get().event

    def lambda_context(self) -> Any:
        """The Lambda context of the invocation (its remaining time), None where there is none."""
        return _state.get().context

    def cookie(self, name: str) -> str | None:
        from http.cookies import CookieError, SimpleCookie
        jar = SimpleCookie()
        try:
            jar.load(self.header("cookie") or "")
        except CookieError:
            return None
        return jar[name].value if name in jar else None

    def optional_principal(self) -> Principal | None:
        """On a public route: the caller's verified credential when one is sent, else None."""
        if not self.header("authorization"):
            return None
        return authenticate(self.header("authorization"), source_ip=self.source_ip())

    def public_base_url(self) -> str:
        """Where a browser reaches this API (a login page, a stream URL): the configured
        PUBLIC_BASE_URL, else the request's own host (and stage, on API Gateway's own domain)."""
        if settings().public_base_url:
            return settings().public_base_url.rstrip("/")
        context = _state.get().event.get("requestContext") or {}
        host = context.get("domainName") or self.header("host") or "localhost"
        stage = context.get("stage")
        if host.endswith(".amazonaws.com") and stage:
            return f"https://{host}/{stage}"
        return f"https://{host}"

    def source_ip(self) -> str:
        """The caller's address: API Gateway's sourceIp (a client's X-Forwarded-For is never read)."""
        return _state.get().source_ip

    def set_response_header(self, name: str, value: str) -> None:
        _state.get().extra_headers[name] = value

    # ---- the Lambda entry point -------------------------------------------------------

    def handler(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        started = time.perf_counter()
        with self.request_state(event, context) as state:
            preflight = self.answer_preflight(event, state)
            if preflight is not None:
                status, headers, body = preflight
                response = _proxy_response(status, body, headers)
                if not body:
                    del response["multiValueHeaders"]["Content-Type"]
            else:
                try:
                    self._admit(event, state)
                except Exception as exc:
                    error = _service_error(exc, "admission failed")
                    response = _proxy_response(error.status, envelope.error_body(
                        error.code, error.message, error.details, state.request_id), error.headers)
                else:
                    response = self._dispatch(event, state).to_proxy()
                    self._count_failure(state, response["statusCode"])
            self._finish(response, state)
            logger.info("request", extra={"method": event.get("httpMethod"), "resource": event.get("resource"),
                                          "status": response["statusCode"],
                                          "latency_ms": round((time.perf_counter() - started) * 1000, 2)})
            from svc_core.platform import metrics  # on first use, as every caller: not a start-up import
            metrics.request(event.get("httpMethod", ""), event.get("resource", ""), response["statusCode"],
                            round((time.perf_counter() - started) * 1000, 2), state.request_id)
            return response

    @contextlib.contextmanager
    def request_state(self, event: dict[str, Any], context: Any = None) -> Iterator[RequestState]:
        """The request's state (id, source address, later its principal) for the length of a request.
        handler() uses it; so does an entry point that is not the resolver (a streamed response, see
        functions/chat_stream), which then calls admit() and answers with response_headers()."""
        request_context = event.get("requestContext") or {}
        state = RequestState(
            request_id=request_context.get("requestId") or ids.new_ulid(),
            source_ip=(request_context.get("identity") or {}).get("sourceIp") or "",
            origin=cors.origin_of(event.get("headers")),
            event=event, context=context,
        )
        token = _state.set(state)
        logger.thread_safe_append_keys(request_id=state.request_id, tenant_id=None)
        remaining = None
        if context is not None and hasattr(context, "get_remaining_time_in_millis"):
            remaining = context.get_remaining_time_in_millis() / 1000
        try:
            with deadline.request(remaining):   # the model calls' share of the request's time
                yield state
        finally:
            logger.thread_safe_remove_keys(["request_id", "tenant_id"])
            _state.reset(token)

    def answer_preflight(self, event: dict[str, Any], state: RequestState) -> tuple[int, dict[str, str], str] | None:
        """A browser's CORS preflight answered (status, headers, body; response_headers() adds the
        rest), or None when the request is not one. No credential is asked for and nothing is counted:
        a browser never sends one on a preflight. An allowed origin gets 204 with the methods of the
        route (of the API on a path no route of this function declares); any other origin gets 403
        and no CORS header, so the browser refuses the request it asked about."""
        if not cors.is_preflight(event.get("httpMethod", ""), event.get("headers")):
            return None
        if not cors.is_allowed(state.origin, _allowed_origins()):
            error = Forbidden("This origin may not call the API from a browser.",
                              {"reason": "origin_not_allowed", "origin": state.origin})
            return error.status, {}, envelope.error_body(error.code, error.message, error.details, state.request_id)
        resource = event.get("resource", "")
        methods = sorted({s.method for s in self.specs.values() if s.path == resource}) or list(cors.API_METHODS)
        return 204, cors.preflight_headers(methods), ""

    def admit(self, event: dict[str, Any], state: RequestState) -> None:
        """What handler() checks before a route runs: credential, rate limit, tenant, scope, body."""
        self._admit(event, state)

    def authenticate(self, event: dict[str, Any], headers: dict[str, str]) -> Principal:
        """The caller's verified credential (headers: lower-case names). An Api may accept another
        credential on its own routes (the chat stream's ?token=) by overriding this."""
        return authenticate(headers.get("authorization"), source_ip=self.source_ip())

    @staticmethod
    def response_headers(state: RequestState) -> dict[str, str]:
        """The headers every answer carries: request id, security headers, rate limit, CORS."""
        headers = {"X-Request-Id": state.request_id, **SECURITY_HEADERS, **state.extra_headers,
                   **cors.response_headers(state.origin, _allowed_origins())}
        if state.allowance is not None:
            headers.update(state.allowance.headers())
        return headers

    def _admit(self, event: dict[str, Any], state: RequestState) -> None:
        """Authenticate, count, check scope and body, before any input is parsed."""
        method, resource = event.get("httpMethod", ""), event.get("resource", "")
        state.routes = self.resource_routes(event)
        spec = next((r.spec for r in state.routes if r.spec.method == method), None)
        # A wrong method on a public path is answered (405) without asking for a credential.
        public = spec.public if spec else any(s.public and s.path == resource for s in self.specs.values())
        if public and spec is not None and spec.throttle is not None:
            self._count_address(spec.throttle, state)
        if not public:
            headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
            try:
                state.principal = self.authenticate(event, headers)
            except Unauthorized:
                self._count(f"ip#{state.source_ip}", state, counter="address")  # failed attempts count per address
                raise
            logger.thread_safe_append_keys(tenant_id=state.principal.tenant_id)
            policy = tenant_policy.policy_of(state.principal.tenant_id)
            if policy is None and cells.multi_cell():   # one cell: a missing tenant is gone (and cached so)
                cell_routing.tenant(state.principal.tenant_id)  # homed in another cell: 421 to it
                tenant_policy.forget(state.principal.tenant_id)  # homed here: maybe moved here a moment ago
                policy = tenant_policy.policy_of(state.principal.tenant_id)
            if policy is None:
                self._count(f"ip#{state.source_ip}", state, counter="address")
                raise Unauthorized("The credential's tenant no longer exists.")
            if policy.move_phase is not None:
                _check_move(state.principal.tenant_id, policy.move_phase, method)
            self._count_credential(state, policy.plan)
            if policy.status != "active":
                raise Forbidden("The tenant is suspended.", {"reason": "tenant_suspended"})
            # The allowlist binds API keys (a backend's fixed addresses); users sign in from anywhere.
            # The address is API Gateway's sourceIp: a client's X-Forwarded-For is never read.
            if state.principal.credential == "api_key" and not policy.admits(state.source_ip):
                raise Forbidden("This API key may not be used from this address (the tenant's IP allowlist).",
                                {"reason": "ip_not_allowed", "sourceIp": state.source_ip})
            if spec is not None and spec.scope != AUTHENTICATED and spec.scope not in state.principal.scopes:
                raise Forbidden(f"This needs the {spec.scope} scope.", {"requiredScope": spec.scope})
        state.body = _check_body(event, spec)

    def _count(self, counter_key: str, state: RequestState, limit: int | None = None,
               counter: str = "credential", generation: int | None = None) -> None:
        try:
            state.allowance = rate_limit.consume(counter_key, limit, counter, generation)
        except rate_limit.CredentialRevoked:
            # Counted as a failed attempt of the address, as any other 401 is (and so it has headers).
            self._count(f"ip#{state.source_ip}", state, counter="address")
            raise _revoked(state.principal) from None
        _refuse_if_exceeded(state.allowance)

    def _count_address(self, group: str, state: RequestState) -> None:
        """A public route group's counter for the caller's address: every request counted, or (a
        group that counts failures) refused once the window holds its limit of failures."""
        key, limit = rate_limit.address_key(group, state.source_ip), rate_limit.address_limit(group)
        if group not in rate_limit.FAILURES_ONLY:
            self._count(key, state, limit, counter="address")
            return
        state.failure_counter = key
        state.allowance = rate_limit.failures_so_far(key, limit)
        _refuse_if_exceeded(state.allowance)

    @staticmethod
    def _count_failure(state: RequestState, status: int) -> None:
        if state.failure_counter is not None and status in rate_limit.FAILED:
            state.allowance = rate_limit.count_failure(state.failure_counter, state.allowance.limit)

    def _count_credential(self, state: RequestState, plan: str) -> None:
        """The credential's own window, then (when within it) the tenant's: two conditional
        updates, each exact. A request its credential's limit refuses is not counted against the
        tenant, so one runaway key cannot use up its tenant's ceiling. (Sent at once, the two
        would save a round trip where the store serves calls concurrently; against the emulator
        here, which serves them one at a time, the bench showed no gain and a thread's cost on
        every request, so they stay in order.)"""
        self._count(state.principal.rate_limit_key, state, plans.requests_per_window(plan),
                    generation=state.principal.key_generation)
        tenant = rate_limit.consume_tenant(state.principal.tenant_id, plans.tenant_requests_per_window(plan))
        state.allowance = rate_limit.binding(state.allowance, tenant)
        _refuse_if_exceeded(state.allowance)

    def _finish(self, response: dict[str, Any], state: RequestState) -> None:
        headers = self.response_headers(state)
        multi = response.setdefault("multiValueHeaders", {})
        for name, value in headers.items():
            multi[name] = [value]
        if "headers" in response and response["headers"] is not None:
            response["headers"].update(headers)

    # ---- the route, and its errors -----------------------------------------------------

    def _dispatch(self, event: dict[str, Any], state: RequestState) -> Response:
        """Find the route (Powertools' way: by method and path), bind its arguments, call it; every
        error becomes its answer in the envelope."""
        method, path = event.get("httpMethod", ""), event.get("path", "")
        try:
            resource = state.routes if state.routes is not None else self.resource_routes(event)
            for route in resource:
                found = route.pattern.match(path)
                if route.spec.method == method and found is not None:
                    body = state.body[1] if state.body is not None else None
                    arguments = route.binder.bind(found.groupdict(), event, body)
                    if route.spec.stream and state.principal is not None:
                        from svc_core.auth import stream_slots  # a stream's function only: not a start-up import
                        with stream_slots.held(state.principal):  # the buffered answer of a stream
                            return route.call(**arguments)
                    return route.call(**arguments)
            raise self._no_route(method, path, resource)
        except RequestInvalid as exc:
            fields = [_field_problem(error) for error in exc.errors]
            return self._error(ValidationFailed("The request is not valid.", {"fields": fields}))
        except ServiceError as exc:
            return self._error(exc)
        except ConditionFailed:
            # A conditional write or transaction the domain did not expect to fail (a create with a new
            # id, contention that outlasted the retries): nothing was written, so the client may send it again.
            logger.warning("a write collided and was not made")
            return self._error(Conflict("The change collided with another one and was not made; send it again."))
        except Exception as exc:
            return self._error(_service_error(exc, "unhandled error"))

    def resource_routes(self, event: dict[str, Any]) -> list[Route]:
        """The routes of the resource the request is for: the template API Gateway matched (the
        event's resource) when this function serves it; else the path's most concrete template, as
        API Gateway chooses (a literal segment before a parameter). DELETE /members/leave is the
        leave resource's (405), never DELETE /members/{userId} with "leave" for an id, which
        admission did not check the scope of."""
        resource, path = event.get("resource", ""), event.get("path", "")
        named = [r for r in self.routes if r.spec.path == resource and r.pattern.match(path)]
        if named:
            return named
        matching = [r for r in self.routes if r.pattern.match(path)]
        if not matching:
            return []
        concrete = min(_specificity(r.spec.path) for r in matching)
        return [r for r in matching if _specificity(r.spec.path) == concrete]

    def _no_route(self, method: str, path: str, resource: list[Route]) -> ServiceError:
        allowed = sorted({r.spec.method for r in resource})
        if allowed:
            return MethodNotAllowed(f"{method} is not allowed on this path.", {"allowed": allowed},
                                    {"Allow": ", ".join(allowed)})
        return NotFound("No such route.", {"path": path, "method": method})

    @staticmethod
    def _error(exc: ServiceError) -> Response:
        return Response(status_code=exc.status, content_type=JSON, headers=exc.headers or {},
                        body=envelope.error_body(exc.code, exc.message, exc.details, _state.get().request_id))


def _service_error(exc: Exception, what: str) -> ServiceError:
    """The answer to an error raised while serving: its own when it is one of the API's; 503 when
    the datastore did not answer in time (an outage, not a failure of ours: the client retries after
    Retry-After); else 500, its cause only in the log."""
    if isinstance(exc, ServiceError):
        return exc
    if aws.is_unavailable(exc):
        logger.warning("the datastore did not answer in time", extra={"error": type(exc).__name__})
        return ServiceUnavailable()
    logger.exception(what)
    return ServiceError()


def _allowed_origins() -> frozenset[str]:
    return cors.parse_origins(settings().cors_allowed_origins)


def _refuse_if_exceeded(allowance: rate_limit.Allowance) -> None:
    if allowance.exceeded:
        raise RateLimited(f"More than {allowance.limit} {allowance.counts} in this window for this "
                          f"{allowance.counter}.",
                          {"limit": allowance.limit, "resetAt": allowance.reset, "counter": allowance.counter})


def _field_problem(error: dict[str, Any]) -> dict[str, str]:
    loc = [str(part) for part in error.get("loc", ())]
    where = loc[0] if loc else "body"
    name = ".".join(loc[1:]) or where
    kind = error.get("type", "")
    if kind == "json_invalid":
        name, reason = "body", "the body is not valid JSON"
    elif kind == "missing" and name == "body":
        reason = "a JSON body is required"
    else:
        reason = error.get("msg", "is not valid")
    return {"field": name, "in": where, "reason": reason}


def _check_body(event: dict[str, Any], spec: RouteSpec | None = None) -> tuple[str, Any] | None:
    """The body's size, type and JSON, before the resolver parses it (it would fail on what is refused
    here); a JSON body's text and value when there is one. The event then carries the text as it was
    parsed (base64 decoded, a UTF-8 byte order mark removed)."""
    body = event.get("body")
    if not body:
        return None
    size = len(body) * 3 // 4 if event.get("isBase64Encoded") else len(body.encode(errors="surrogatepass"))
    limit = settings().max_body_bytes
    if size > limit:
        raise PayloadTooLarge(f"The body is {size} bytes; the limit is {limit}.", {"limitBytes": limit})
    if spec is None or spec.method not in ("POST", "PUT", "PATCH"):
        return None
    # Powertools would parse form and multipart bodies, and take a JSON array's first element
    # as the body: every body of this API is a JSON object, so refuse anything else here.
    content_type = next((str(v) for k, v in (event.get("headers") or {}).items()
                         if k.lower() == "content-type"), "").strip()
    if content_type and not content_type.lower().startswith(JSON):
        raise UnsupportedMediaType("Send the body as application/json.")
    charset = re.search(r";\s*charset\s*=\s*\"?([^\s;\"]+)", content_type, re.I)
    if charset and charset.group(1).lower() not in ("utf-8", "utf8"):
        raise UnsupportedMediaType("Send the body as application/json in UTF-8.", {"charset": charset.group(1)})
    text = json_body.text_of(body, bool(event.get("isBase64Encoded")))
    value = json_body.parse(text)
    if value is None:  # JSON null: no body (what an optional body allows; a required one is then missing)
        event["body"], event["isBase64Encoded"] = None, False
        return None
    if not isinstance(value, dict):
        raise json_body.refuse("the body must be a JSON object")
    event["body"], event["isBase64Encoded"] = text, False
    return text, value


def _revoked(principal: Principal | None) -> Unauthorized:
    """The 401 of a credential whose counter carries a revocation mark, in the credential's words: an
    API key revoked or rotated past, or a user's sign-in session ended (logout, a refresh token's
    reuse, the membership's removal: the mark does not say which)."""
    if principal is not None and principal.credential == "user":
        return Unauthorized("This sign-in session has ended (signed out, its refresh token reused, or access "
                            "to the tenant removed): sign in again.", {"reason": "session_ended"})
    return Unauthorized("The API key was revoked, or this value of it was rotated out.")


def _check_move(tenant_id: str, phase: str, method: str) -> None:
    """A tenant moving between cells (domain/tenant_moves.py): 421 once the directory homes it in another
    cell (this cell's copy is arriving, or has moved away); while its writes are paused, 503 to a write."""
    cell_routing.tenant(tenant_id)
    if phase in ("frozen", "moved") and method not in ("GET", "HEAD", "OPTIONS"):
        raise ServiceUnavailable("The tenant is moving to another region: writes are paused for a few seconds; "
                                 "retry after Retry-After.", {"reason": "tenant_moving"}, retry_after_seconds=2)


def _proxy_response(status: int, body: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    multi = {"Content-Type": [JSON]}
    for name, value in (headers or {}).items():
        multi[name] = [value]
    return {"statusCode": status, "multiValueHeaders": multi, "body": body, "isBase64Encoded": False}

