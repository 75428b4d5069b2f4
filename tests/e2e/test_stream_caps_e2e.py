"""Open streams are capped per credential and per tenant, over real HTTP on the local stack (the
gateway serves the stream functions' ASGI apps streamed, as API Gateway's response streaming does):
a key opens its cap of event streams at once and the next is 429 until one closes; a tenant's keys
share the tenant's cap; every route of the served document that answers Server-Sent Events is
capped, not only the event stream."""

from __future__ import annotations

import contextlib
import re
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.support.tenants_http import new_key, new_owner
from tests.support.waiting import waited

EVENTS = "/api/v1/events/stream"


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def open_stream(http: httpx.Client, key: str, path: str = EVENTS) -> httpx.Response:
    """The stream's answer with its body unread (a 200 stays open until closed)."""
    answer = http.send(http.build_request("GET", path, headers=auth(key)), stream=True)
    if answer.status_code != 200:
        answer.read()
    return answer


def assert_refused(answer: httpx.Response, counter: str, limit: int) -> None:
    assert answer.status_code == 429, answer.status_code
    error = answer.json()["error"]
    assert error["code"] == "RATE_LIMIT_EXCEEDED"
    assert error["details"] == {"limit": limit, "counter": counter}
    assert 1 <= int(answer.headers["Retry-After"]) <= 60
    assert answer.json()["meta"]["request_id"] == answer.headers["X-Request-Id"]


@pytest.fixture
def streams(local_stack):
    """A client whose open streams are all closed at the end of the test."""
    with httpx.Client(base_url=local_stack.base_url, timeout=30,
                      limits=httpx.Limits(max_connections=200, max_keepalive_connections=0)) as http, \
            contextlib.ExitStack() as opened:
        def keep(answer: httpx.Response) -> httpx.Response:
            opened.callback(answer.close)
            return answer
        http.keep = keep
        yield http


@pytest.fixture
def small_caps(local_stack, monkeypatch):
    """3 streams per credential and 4 per tenant for one test (the settings are read per request)."""
    monkeypatch.setenv("STREAM_CAP_PER_CREDENTIAL", "3")
    monkeypatch.setenv("STREAM_CAP_PER_TENANT", "4")
    local_stack._forget_caches()
    yield
    monkeypatch.undo()
    local_stack._forget_caches()


def test_a_key_holds_ten_streams_at_once_the_eleventh_is_429_until_one_closes(local_stack, streams):
    key = new_key(local_stack.base_url, new_owner(local_stack.base_url, "127.0.32.7"), "streams")
    with ThreadPoolExecutor(max_workers=10) as pool:  # the ten opened concurrently
        held = [streams.keep(answer) for answer in pool.map(lambda _: open_stream(streams, key), range(10))]
    assert [answer.status_code for answer in held] == [200] * 10
    assert all(answer.headers["content-type"].startswith("text/event-stream") for answer in held)

    assert_refused(open_stream(streams, key), "credential_streams", 10)
    assert_refused(open_stream(streams, key), "credential_streams", 10)  # refusing took no slot either

    held[0].close()  # the client goes away: its stream ends and gives its slot back
    reopened = waited(lambda: streams.keep(open_stream(streams, key)), lambda answer: answer.status_code == 200,
                      timeout=20)
    assert reopened.status_code == 200
    assert_refused(open_stream(streams, key), "credential_streams", 10)  # and it is the only one given back


def test_a_tenants_keys_share_its_cap_and_another_tenant_is_unaffected(local_stack, streams, small_caps):
    base = local_stack.base_url
    owner = new_owner(base, "127.0.32.8")
    first, second = new_key(base, owner, "first"), new_key(base, owner, "second")
    elsewhere = new_key(base, new_owner(base, "127.0.32.9"), "elsewhere")

    assert [streams.keep(open_stream(streams, first)).status_code for _ in range(3)] == [200] * 3
    assert_refused(open_stream(streams, first), "credential_streams", 3)
    assert streams.keep(open_stream(streams, second)).status_code == 200  # the tenant's 4th
    assert_refused(open_stream(streams, second), "tenant_streams", 4)
    assert streams.keep(open_stream(streams, elsewhere)).status_code == 200


def test_every_stream_route_of_the_document_is_capped(local_stack, streams, small_caps):
    document = httpx.get(local_stack.base_url + "/api/v1/openapi.json", timeout=30).json()
    stream_paths = [path for path, item in document["paths"].items()
                    if "text/event-stream" in item.get("get", {}).get("responses", {}).get("200", {}).get("content", {})]
    assert {EVENTS, "/api/v1/chat/sessions/{id}/stream"} <= set(stream_paths)
    key = new_key(local_stack.base_url, new_owner(local_stack.base_url, "127.0.32.10"), "routes")
    for _ in range(3):
        assert streams.keep(open_stream(streams, key)).status_code == 200
    for path in stream_paths:  # a slot is asked for before the stream looks at anything else
        assert_refused(open_stream(streams, key, re.sub(r"\{[^}]+\}", "chs_none", path)), "credential_streams", 3)
