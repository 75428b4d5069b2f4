"""Rate limits: N requests per credential per 60-second window, counted exactly in DynamoDB."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from svc_core import config
from svc_core.auth import tokens
from tests.support.auth_helpers import RATE_HEADERS, Clock, atomic_dynamodb, invoke, unknown_route_event
from tests.support.functions import call

LIMIT = 20


@pytest.fixture
def limit(monkeypatch):
    monkeypatch.setenv("RATE_LIMIT_PER_WINDOW", str(LIMIT))
    config.settings.cache_clear()
    yield LIMIT
    config.settings.cache_clear()


@pytest.fixture
def clock(monkeypatch):
    clock = Clock(monkeypatch)
    clock.mid_window()  # a burst never straddles two windows
    return clock


def window_end(now: float) -> int:
    return int(now) - int(now) % 60 + 60


def list_projects(key, **kwargs):
    return call("projects", "Projects-ListProjects", token=key, **kwargs)


def test_every_response_carries_the_headers_errors_included(stack, clock):
    tenant, key = stack.tenant_with_key()
    _, narrow = stack.tenant_with_key(["projects:read"])
    replies = {
        200: list_projects(key),
        201: call("projects", "Projects-CreateProject", token=key, body={"name": "A"}),
        400: call("projects", "Projects-CreateProject", token=key, body={"name": ""}),
        403: call("projects", "Projects-CreateProject", token=narrow, body={"name": "B"}),
        404: call("projects", "Projects-GetProject", token=key, path_params={"id": "proj_01J00000000000000000000000"}),
        405: call("projects", "Projects-GetProject", token=key, path_params={"id": "proj_x"}, method="PUT"),
        413: call("projects", "Projects-CreateProject", token=key, raw_body='{"name": "%s"}' % ("x" * 300_000)),
        415: call("projects", "Projects-CreateProject", token=key, raw_body="name=C",
                  headers={"Content-Type": "text/plain"}),
        401: list_projects("svc_sdk_nonsense"),
    }
    route_404 = invoke("meta", unknown_route_event(token=key))
    replies["404 route"] = route_404
    for expected, reply in replies.items():
        assert reply.status == int(str(expected)[:3]), (expected, reply)
        for name in RATE_HEADERS:
            assert name in reply.headers, (expected, name, reply.headers)
        assert reply.headers["x-ratelimit-limit"] == "1000"
        assert reply.headers["x-ratelimit-reset"] == str(window_end(clock.value))
        assert "retry-after" not in reply.headers
    # the key's own requests count down one by one, failures included
    own = [int(r.headers["x-ratelimit-remaining"]) for k, r in replies.items() if k not in (403, 401)]
    assert own == list(range(999, 999 - len(own), -1))
    assert replies[403].headers["x-ratelimit-remaining"] == "999"   # the other key: its own counter
    assert replies[401].headers["x-ratelimit-remaining"] == "999"   # failed auth: counted per address


def test_reset_is_the_epoch_second_the_window_ends(stack, clock):
    _, key = stack.tenant_with_key()
    clock.value = 1_900_000_037.5  # 1_900_000_020 is a multiple of 60: the window ends at 1_900_000_080
    reply = list_projects(key)
    assert reply.status == 200, reply
    assert int(reply.headers["x-ratelimit-reset"]) == 1_900_000_080
    assert int(reply.headers["x-ratelimit-reset"]) % 60 == 0


def test_exactly_n_answers_under_concurrency(stack, limit, clock, monkeypatch):
    _, key = stack.tenant_with_key()
    atomic_dynamodb(stack, monkeypatch)  # DynamoDB's per-request atomicity, which moto lacks
    with ThreadPoolExecutor(max_workers=8) as pool:
        replies = list(pool.map(lambda _: list_projects(key), range(limit + 100)))
    statuses = Counter(r.status for r in replies)
    assert statuses == {200: limit, 429: 100}, statuses
    remaining = sorted(int(r.headers["x-ratelimit-remaining"]) for r in replies if r.status == 200)
    assert remaining == list(range(limit))  # each count handed out exactly once
    for reply in (r for r in replies if r.status == 429):
        assert reply.error["code"] == "RATE_LIMIT_EXCEEDED"
        assert reply.error["details"] == {"limit": limit, "resetAt": window_end(clock.value)}
        assert reply.headers["retry-after"] == "50"  # clock is 10 s into the window
        assert reply.headers["x-ratelimit-remaining"] == "0"
        assert reply.headers["x-ratelimit-limit"] == str(limit)


def test_counting_is_per_credential(stack, limit, clock):
    tenant, first = stack.tenant_with_key()
    second = stack.new_key(tenant)["key"]
    token, _ = tokens.mint(subject="usr_bob", tenant_id=tenant, scopes=["projects:read"], credential="user")
    for _ in range(limit):
        assert list_projects(first).status == 200
    assert list_projects(first).status == 429
    other = list_projects(second)
    assert other.status == 200 and other.headers["x-ratelimit-remaining"] == str(limit - 1)
    user = list_projects(token)
    assert user.status == 200 and user.headers["x-ratelimit-remaining"] == str(limit - 1)
    assert list_projects(first).status == 429


def test_a_rejected_request_does_nothing(stack, limit, clock):
    _, key = stack.tenant_with_key()
    for _ in range(limit):
        list_projects(key)
    refused = call("projects", "Projects-CreateProject", token=key, body={"name": "Too many"})
    assert refused.status == 429
    clock.travel(50)  # the next window, so listing is allowed
    assert list_projects(key).data["items"] == []


def test_the_window_resets(stack, limit, clock):
    _, key = stack.tenant_with_key()
    for _ in range(limit):
        list_projects(key)
    assert list_projects(key).status == 429
    clock.travel(49)  # the window's last second
    assert list_projects(key).status == 429
    clock.travel(1)  # the next window
    fresh = list_projects(key)
    assert fresh.status == 200, fresh
    assert fresh.headers["x-ratelimit-remaining"] == str(limit - 1)
    assert fresh.headers["x-ratelimit-reset"] == str(window_end(clock.value))


def test_the_jwks_is_neither_limited_nor_counted(stack, limit, clock):
    _, key = stack.tenant_with_key()
    for _ in range(limit):
        list_projects(key)
    assert list_projects(key).status == 429
    for _ in range(limit + 5):
        for headers in ({}, {"Authorization": f"Bearer {key}"}):
            reply = call("meta", "Meta-Jwks", headers=headers, source_ip="198.51.100.7")
            assert reply.status == 200, reply
            assert not any(h.startswith("x-ratelimit") or h == "retry-after" for h in reply.headers)
    # nothing was counted for the address either
    assert list_projects("svc_sdk_bad", source_ip="198.51.100.7").headers["x-ratelimit-remaining"] == str(limit - 1)


def test_failed_authentication_is_limited_per_address(stack, limit, clock):
    for _ in range(limit):
        assert list_projects("svc_sdk_guess", source_ip="198.51.100.9").status == 401
    blocked = list_projects("svc_sdk_guess", source_ip="198.51.100.9")
    assert blocked.status == 429 and blocked.headers["retry-after"] == "50"
    assert list_projects("svc_sdk_guess", source_ip="198.51.100.10").status == 401
    _, key = stack.tenant_with_key()
    assert list_projects(key, source_ip="198.51.100.9").status == 200  # a real key is its own counter


def test_a_revoked_keys_401_carries_the_headers_too(stack, clock):
    """Whether this container still caches the key's record (another container revoked it: the
    counter's revocation mark refuses it) or not (the record refuses it), the 401 has the headers."""
    from svc_core.auth import authenticate
    from svc_core.data import api_keys_table
    tenant, admin = stack.tenant_with_key()
    cached, uncached = stack.new_key(tenant, ["projects:read"]), stack.new_key(tenant, ["projects:read"])
    assert list_projects(cached["key"]).status == 200
    api_keys_table.revoke(api_keys_table.get(tenant, cached["id"]), int(clock.value))
    assert authenticate.hash_key(cached["key"]) in authenticate._key_cache
    assert call("api_keys", "ApiKeys-RevokeKey", token=admin, path_params={"id": uncached["id"]}).status == 200
    for victim in (cached, uncached):
        reply = list_projects(victim["key"])
        assert reply.status == 401, reply
        for name in RATE_HEADERS:
            assert name in reply.headers, (victim["id"], reply.headers)
