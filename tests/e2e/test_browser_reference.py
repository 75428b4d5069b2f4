"""The API reference page (GET /api/v1/docs) in headless Chromium, with the network blocked: the page,
its renderer (Redoc, vendored in functions/meta/redoc/) and the OpenAPI document all come from the
local stack, and the operations of the served document appear on the page.

Every request the page makes goes through a route handler: loopback requests are let through, any
other is aborted and recorded, and the test fails if there was one.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx

# A few operations, by operationId, whose summaries the rendered page must show.
KNOWN = ("create_project", "list_agents", "stream_chat_session", "create_key", "redeem_gift_card", "jwks")


def summaries(document: dict) -> dict[str, str]:
    return {operation["operationId"]: operation["summary"]
            for operations in document["paths"].values() for operation in operations.values()}


def test_the_reference_page_renders_the_served_document_without_the_network(local_stack, page):
    asked_outside: list[str] = []

    def only_loopback(route):
        if urlsplit(route.request.url).hostname in ("127.0.0.1", "localhost", "::1"):
            route.continue_()
        else:
            asked_outside.append(route.request.url)
            route.abort()

    page.context.route("**/*", only_loopback)
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))

    response = page.goto(local_stack.base_url + "/api/v1/docs")
    assert response.status == 200 and response.headers["content-type"].startswith("text/html")
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy and "frame-ancestors 'none'" in policy

    wanted = summaries(httpx.get(local_stack.base_url + "/api/v1/openapi.json").json())
    page.wait_for_function("(text) => document.body.innerText.includes(text)",
                           arg=wanted["create_project"], timeout=90_000)
    text = page.inner_text("body")
    missing = [operation for operation in KNOWN if wanted[operation] not in text]
    assert missing == [], f"summaries not on the page: {missing}"
    assert "svc" in page.title()

    assert asked_outside == []
    assert {urlsplit(url).path for url in asked} >= {"/api/v1/docs", "/api/v1/docs/redoc.standalone.js",
                                                     "/api/v1/openapi.json"}
    # Nothing but this origin, and the blob: the search worker is made from.
    origin = local_stack.base_url
    assert [url for url in asked if not url.startswith((origin + "/", "blob:", "data:"))] == []
    assert page.problems == []


def test_the_script_is_served_as_javascript_and_cached(local_stack):
    answer = httpx.get(local_stack.base_url + "/api/v1/docs/redoc.standalone.js")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/javascript")
    assert answer.headers["cache-control"] == "public, max-age=86400"
    assert answer.text.startswith("/*! For license information please see redoc.standalone.js.LICENSE.txt */")
    assert "X-RateLimit-Limit" not in answer.headers  # public, as openapi.json: not counted
