"""Over real HTTP to the local stack: no request body, however odd, is answered with a 5xx (the
gateway answers 502 when a function fails, as API Gateway does)."""

from __future__ import annotations

import httpx
import pytest

from tests.support import bodies


@pytest.fixture(scope="module")
def http(local_stack):
    headers = {"Authorization": f"Bearer {local_stack.credentials['apiKey']}", "Content-Type": "application/json"}
    with httpx.Client(base_url=local_stack.base_url, headers=headers, timeout=30) as client:
        yield client


@pytest.mark.parametrize("body", bodies.PATHOLOGICAL, ids=[b.id for b in bodies.PATHOLOGICAL])
def test_no_body_is_answered_with_a_5xx(http, body):
    reply = http.post("/api/v1/projects", content=body.raw)
    assert reply.status_code < 500, reply.text[:300]
    assert reply.status_code == body.status, reply.text[:300]
    assert reply.headers["content-type"].startswith("application/json")
    error = reply.json()["error"]
    assert error["code"] == body.code and set(error) == {"code", "message", "details"}
    assert reply.json()["meta"]["request_id"] == reply.headers["x-request-id"]


def test_an_odd_body_on_other_routes_is_never_a_5xx(http):
    """The same rules on every JSON route: one per function that takes a body."""
    for path in ("/api/v1/api-keys", "/api/v1/agents", "/api/v1/webhooks", "/api/v1/secrets", "/api/v1/tenants",
                 "/api/v1/chat/sessions", "/api/v1/auth/login", "/api/v1/billing/stripe/webhook"):
        for body in (b"[" * 10_000, b'{"a": 1e400}', '{"a": 1}'.encode("utf-16")):
            reply = http.post(path, content=body)
            assert reply.status_code < 500, (path, body[:20], reply.text[:300])
            assert reply.json()["error"]["code"] == "VALIDATION_ERROR", (path, reply.text[:300])


def test_a_utf8_byte_order_mark_is_ignored(http):
    reply = http.post("/api/v1/projects", content=bodies.UTF8_BOM)
    assert reply.status_code == 201, reply.text[:300]
    assert reply.json()["data"]["name"] == "Apollo"
