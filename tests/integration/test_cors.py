"""CORS for browser front-ends, over real loopback HTTP: the local gateway in this process (as in
test_chat_stream), the functions behind it on the moto server, the allowed origins from the
functions' CORS_ALLOWED_ORIGINS and the gateway's AllowedOrigins, as a stack deploys them.

The rules (svc_core/http/cors.py): a preflight is answered 204 without a credential and without being
counted; an allowed origin is echoed exactly (never `*`) on every answer, errors included; any other
origin gets no CORS header; every answer says Vary: Origin."""

from __future__ import annotations

import httpx
import pytest

from devstack.gateway import Gateway, Router
from devstack.runtime import load_functions
from devstack.template import Resolver
from svc_core.domain import projects as projects_domain
from svc_core.http import cors
from tests.support.stack import DEFAULT_PARAMETERS, provisioned_stack

APP = "https://app.example.com"
DEV = "http://localhost:5173"
OTHER = "https://evil.example"
CONFIGURED = f" {APP}/, {DEV} ,*,null"  # spaces, a trailing slash; `*` and `null` are never allowed
PROJECT = "/api/v1/projects/proj_01J00000000000000000000000"
EXPOSED = "X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After"


@pytest.fixture(scope="module")
def stack(emulator):
    provisioned = provisioned_stack(emulator)
    stack = next(provisioned)
    with pytest.MonkeyPatch.context() as patch:  # after the stack's environment, which has the template's ""
        patch.setenv("CORS_ALLOWED_ORIGINS", CONFIGURED)
        stack.forget_caches()
        yield stack
    next(provisioned, None)


@pytest.fixture(scope="module")
def http(stack):
    parameters = {**DEFAULT_PARAMETERS, "AllowedOrigins": CONFIGURED}
    resolver = Resolver(parameters)
    gateway = Gateway(Router(resolver.api_routes(), resolver.streaming_routes()),
                      load_functions(resolver, containers=1), port=0, log=lambda _m: None,
                      allowed_origins=cors.parse_origins(CONFIGURED)).start()
    with httpx.Client(base_url=f"http://127.0.0.1:{gateway.port}", timeout=10) as client:
        yield client
    gateway.stop()


def preflight(http: httpx.Client, path: str, origin: str = APP, method: str = "POST") -> httpx.Response:
    return http.options(path, headers={"Origin": origin, "Access-Control-Request-Method": method,
                                       "Access-Control-Request-Headers": "authorization,content-type"})


def cors_headers(answer: httpx.Response) -> dict[str, str]:
    return {k.lower(): v for k, v in answer.headers.items() if k.lower().startswith("access-control-")}


def assert_allowed(answer: httpx.Response, origin: str = APP) -> None:
    assert answer.headers.get("access-control-allow-origin") == origin, (answer.status_code, answer.headers)
    assert answer.headers.get("access-control-allow-credentials") == "true"
    assert answer.headers.get("access-control-expose-headers") == EXPOSED
    assert "Origin" in answer.headers.get("vary", "")
    assert "*" not in answer.headers.get_list("access-control-allow-origin")


def test_a_preflight_is_204_without_a_credential_and_names_the_routes_methods(stack, http):
    cases = [("/api/v1/projects", "GET, POST"), (PROJECT, "DELETE, GET, PATCH"),
             ("/api/v1/auth/login", "POST"),
             ("/api/v1/chat/sessions/chs_01JD2Q7ZB6V8S3K4X9W2M5N7PA/stream", "GET"),  # the streaming app
             ("/api/v1/nope", "GET, POST, PUT, PATCH, DELETE")]  # no route: the API's methods
    for path, methods in cases:
        answer = preflight(http, path)
        assert answer.status_code == 204, (path, answer.status_code, answer.text)
        assert answer.content == b""
        assert_allowed(answer)
        assert answer.headers["access-control-allow-methods"] == methods, path
        assert answer.headers["access-control-allow-headers"] == \
            "Authorization, Content-Type, Idempotency-Key, Last-Event-ID"
        assert answer.headers["access-control-max-age"] == "600"
        assert answer.headers["x-request-id"]
        assert "x-ratelimit-limit" not in answer.headers  # not counted against anything
    # The origin as configured with a trailing slash, and the local stack's dev server, both match.
    assert preflight(http, "/api/v1/projects", origin=DEV).headers["access-control-allow-origin"] == DEV


def test_preflights_are_not_counted_against_the_credential_or_the_address(stack, http):
    _, key = stack.tenant_with_key()
    auth = {"Authorization": f"Bearer {key}"}
    first = http.get("/api/v1/projects", headers=auth)
    for _ in range(5):  # a preflight carries no credential; were it counted, then per address as a failure
        assert http.options("/api/v1/projects", headers={**auth, "Origin": APP,
                                                        "Access-Control-Request-Method": "GET"}).status_code == 204
    second = http.get("/api/v1/projects", headers=auth)
    assert int(second.headers["x-ratelimit-remaining"]) == int(first.headers["x-ratelimit-remaining"]) - 1


def test_a_preflight_from_another_origin_is_403_with_no_cors_header(stack, http):
    for origin in (OTHER, "null", "*", APP + ".evil.example", "http://app.example.com"):
        answer = preflight(http, "/api/v1/projects", origin=origin)
        assert answer.status_code == 403, origin
        assert cors_headers(answer) == {}, origin
        assert answer.headers["vary"] == "Origin"
        assert answer.json()["error"]["details"]["reason"] == "origin_not_allowed"
    # An OPTIONS that is not a preflight (no Access-Control-Request-Method) is an ordinary request.
    assert http.options("/api/v1/projects", headers={"Origin": APP}).status_code == 401


def test_every_answer_to_an_allowed_origin_carries_the_cors_headers_errors_included(stack, http, monkeypatch):
    _, key = stack.tenant_with_key()
    auth = {"Authorization": f"Bearer {key}", "Origin": APP}
    session = http.post("/api/v1/chat/sessions", json={"title": "CORS"}, headers=auth).json()["data"]["id"]
    cases = [
        (200, http.get("/api/v1/projects", headers=auth)),
        (201, http.post("/api/v1/projects", json={"name": "CORS"}, headers=auth)),
        (401, http.get("/api/v1/projects", headers={"Origin": APP})),
        (404, http.get(PROJECT, headers=auth)),
        (405, http.put(PROJECT, json={}, headers=auth)),
        (404, http.get("/api/v1/nope", headers=auth)),        # the API's catch-all route
        (404, http.get("/elsewhere", headers=auth)),           # no route at all: the gateway itself
        (204, http.get(f"/api/v1/chat/sessions/{session}/stream", headers=auth)),  # the streaming app
        (401, http.get(f"/api/v1/chat/sessions/{session}/stream", headers={"Origin": APP})),
    ]
    monkeypatch.setenv("ADDRESS_SIGN_IN_FAILURES_PER_WINDOW", "1")
    stack.forget_caches()
    login = {"email": "nobody@example.com", "password": "not the password"}
    http.post("/api/v1/auth/login", json=login, headers={"Origin": APP})
    cases.append((429, http.post("/api/v1/auth/login", json=login, headers={"Origin": APP})))
    monkeypatch.setattr(projects_domain, "list_projects", lambda *a, **k: 1 / 0)
    cases.append((500, http.get("/api/v1/projects", headers=auth)))
    for status, answer in cases:
        assert answer.status_code == status, (status, answer.request.url, answer.text)
        assert_allowed(answer)
    assert cases[-2][1].headers["retry-after"]  # exposed, so the page can read it


def test_another_origin_or_none_gets_no_cors_header_but_vary(stack, http):
    _, key = stack.tenant_with_key()
    for headers in ({"Origin": OTHER}, {"Origin": "null"}, {}):
        for answer in (http.get("/api/v1/projects", headers={**headers, "Authorization": f"Bearer {key}"}),
                       http.get("/api/v1/projects", headers=headers),
                       http.get("/elsewhere", headers=headers)):
            assert answer.status_code in (200, 401, 404)
            assert cors_headers(answer) == {}, (headers, answer.request.url)
            assert answer.headers["vary"] == "Origin"
