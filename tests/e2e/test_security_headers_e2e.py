"""Every answer carries the security headers, over real HTTP on the local stack: each operation of the
OpenAPI document the stack serves (read from the stack, not kept here), called with a tenant's key;
an event stream's answer; errors; a path no route of the template matches (the gateway's own 404);
a path under /api/v1 no function declares; a wrong method; a CORS preflight.

JSON answers carry a Content-Security-Policy that allows nothing; the pages (the API reference,
the device-login approval page) keep their own, which admits their scripts (the browser tests run
them under it: test_browser_reference.py, test_browser_login.py).
"""

from __future__ import annotations

import re

import httpx
import pytest

from tests.support.tenants_http import new_key, new_owner

HSTS = "max-age=63072000; includeSubDomains"
JSON_POLICY = "default-src 'none'; frame-ancestors 'none'"


def assert_security_headers(answer: httpx.Response, what: str) -> None:
    headers = answer.headers
    assert headers.get("strict-transport-security") == HSTS, what
    assert headers.get("x-content-type-options") == "nosniff", what
    assert headers.get("referrer-policy") == "no-referrer", what
    assert headers.get("x-frame-options") == "DENY", what
    policy = headers.get("content-security-policy")
    if headers.get("content-type", "").startswith("text/html"):
        # A page's own policy: nothing by default, its scripts named, no site may frame it.
        assert policy and "default-src 'none'" in policy and "script-src " in policy, what
        assert "frame-ancestors 'none'" in policy, what
    else:
        assert policy == JSON_POLICY, what


def concrete(path: str) -> str:
    """A path template with each parameter given a value no resource has."""
    return re.sub(r"\{[^}]+\}", "nothing_here", path)


@pytest.fixture(scope="module")
def tenant_key(local_stack) -> str:
    """A new tenant's API key (every scope of its owner)."""
    return new_key(local_stack.base_url, new_owner(local_stack.base_url, "127.0.31.7"), "headers")


def operations(base_url: str) -> list[tuple[str, str, dict]]:
    document = httpx.get(base_url + "/api/v1/openapi.json", timeout=30).json()
    return [(method.upper(), path, operation) for path, item in document["paths"].items()
            for method, operation in item.items() if method in ("get", "post", "put", "patch", "delete")]


def test_every_operation_of_the_document_answers_with_the_security_headers(local_stack, tenant_key):
    found = operations(local_stack.base_url)
    assert len(found) > 50  # the whole document, not a few routes
    seen_statuses = set()
    with httpx.Client(base_url=local_stack.base_url, timeout=30,
                      transport=httpx.HTTPTransport(local_address="127.0.31.8")) as http:
        for method, path, _operation in found:
            body = {} if method in ("POST", "PUT", "PATCH") else None
            with http.stream(method, concrete(path), json=body,
                             headers={"Authorization": f"Bearer {tenant_key}"}) as answer:
                if not answer.headers.get("content-type", "").startswith("text/event-stream"):
                    answer.read()  # a stream is left unread: its headers are what is checked
                assert_security_headers(answer, f"{method} {path} -> {answer.status_code}")
                seen_statuses.add(answer.status_code)
    # Successes and refusals alike: the headers are not only on one kind of answer.
    assert {200, 404} <= seen_statuses and seen_statuses & {400, 401, 403}


def test_answers_no_route_gives_carry_them_too(local_stack, tenant_key):
    base = local_stack.base_url
    auth = {"Authorization": f"Bearer {tenant_key}"}
    with httpx.Client(base_url=base, timeout=30) as http:
        outside = http.get("/nowhere/at/all")              # the gateway's own 404 (no route of the template)
        inside = http.get("/api/v1/no/such/route", headers=auth)  # a function's 404
        anonymous = http.get("/api/v1/no/such/route")      # 401 without a credential
        wrong_method = http.request("PUT", "/api/v1/health")  # 405
        preflight = http.options("/api/v1/projects", headers={"Origin": "https://elsewhere.example",
                                                              "Access-Control-Request-Method": "GET"})
    assert outside.status_code == 404 and inside.status_code == 404
    assert anonymous.status_code == 401 and wrong_method.status_code == 405 and preflight.status_code in (204, 403)
    for answer in (outside, inside, anonymous, wrong_method, preflight):
        assert_security_headers(answer, f"{answer.request.method} {answer.request.url.path} -> {answer.status_code}")


def test_the_pages_keep_their_own_policy(local_stack):
    with httpx.Client(base_url=local_stack.base_url, timeout=30) as http:
        reference = http.get("/api/v1/docs")
        approval = http.get("/api/v1/cli/auth/approve")
    for page in (reference, approval):
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert_security_headers(page, page.request.url.path)
    assert "script-src 'self'" in reference.headers["content-security-policy"]
    assert "script-src 'sha256-" in approval.headers["content-security-policy"]
