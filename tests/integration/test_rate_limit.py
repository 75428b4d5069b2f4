"""Rate limits: N requests per credential per 60-second window, and 5 N per tenant, counted exactly
in DynamoDB; public sign-in routes are counted per source address."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from svc_core.auth import tokens
from tests.support.auth_helpers import RATE_HEADERS, Clock, atomic_dynamodb, invoke, unknown_route_event
from tests.support.functions import call

LIMIT = 20


@pytest.fixture
def limit(setting):
    setting("RATE_LIMIT_PER_WINDOW", str(LIMIT))
    return LIMIT


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
        assert reply.error["details"] == {"limit": limit, "resetAt": window_end(clock.value), "counter": "credential"}
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
    assert authenticate.hash_key(cached["key"]) in {hashed for _function, hashed in authenticate._key_cache}
    assert call("api_keys", "ApiKeys-RevokeKey", token=admin, path_params={"id": uncached["id"]}).status == 200
    for victim in (cached, uncached):
        reply = list_projects(victim["key"])
        assert reply.status == 401, reply
        for name in RATE_HEADERS:
            assert name in reply.headers, (victim["id"], reply.headers)


# ---- the tenant's ceiling -------------------------------------------------------------------

def test_a_tenants_keys_together_hit_its_ceiling_and_another_tenant_is_unaffected(stack, limit, clock):
    from svc_core.contracts import plans
    ceiling = limit * plans.TENANT_CEILING_MULTIPLE
    tenant, first = stack.tenant_with_key()
    keys = [first] + [stack.new_key(tenant)["key"] for _ in range(plans.TENANT_CEILING_MULTIPLE)]
    _, stranger = stack.tenant_with_key()
    # the first five keys each use their whole limit: the tenant's window is full
    for key in keys[:-1]:
        for _ in range(limit):
            reply = list_projects(key)
            assert reply.status == 200, reply
    assert reply.headers["x-ratelimit-remaining"] == "0"  # both the key's and the tenant's window are full
    # a sixth key, untouched, is refused by the tenant's ceiling, with the ceiling's headers
    refused = list_projects(keys[-1])
    assert refused.status == 429, refused
    assert refused.error["code"] == "RATE_LIMIT_EXCEEDED"
    assert refused.error["details"] == {"limit": ceiling, "resetAt": window_end(clock.value), "counter": "tenant"}
    assert refused.headers["x-ratelimit-limit"] == str(ceiling)
    assert refused.headers["x-ratelimit-remaining"] == "0"
    assert refused.headers["x-ratelimit-reset"] == str(window_end(clock.value))
    assert refused.headers["retry-after"] == "50"
    # another tenant is not affected
    other = list_projects(stranger)
    assert other.status == 200 and other.headers["x-ratelimit-remaining"] == str(limit - 1)
    assert other.headers["x-ratelimit-limit"] == str(limit)
    clock.travel(50)  # the next window: the tenant's keys work again
    assert list_projects(keys[-1]).status == 200


def test_a_ceiling_counted_on_several_items_is_never_exceeded_and_each_refusal_is_a_full_shard(stack, atomic_stack, limit,
                                                                                              clock, monkeypatch):
    """The enterprise plan's ceiling is counted on 4 items (rate_limit.tenant_counter_shards); here a small
    ceiling is, by lowering what one item is given to take. On DynamoDB Local: concurrent writers to one
    item lose a count on moto, which does not make a condition check and its write one step."""
    from svc_core.auth import rate_limit
    from svc_core.contracts import plans
    from svc_core.data import rate_limits_table
    ceiling = limit * plans.TENANT_CEILING_MULTIPLE                      # 100 a window
    monkeypatch.setattr(rate_limit, "COUNTER_WRITES_PER_SECOND", 0.45)   # 100 / 60 s / 0.45: 4 shards of 25
    assert rate_limit.tenant_counter_shards(ceiling, 60) == 4
    tenant, first = stack.tenant_with_key()
    keys = [first] + [stack.new_key(tenant)["key"] for _ in range(plans.TENANT_CEILING_MULTIPLE)]
    with ThreadPoolExecutor(8) as pool:   # 120 at once from 8 writers: each key within its own 20
        answers = list(pool.map(list_projects, [key for key in keys for _ in range(limit)]))
    start = rate_limit.window_start(clock.value, 60)
    hits = [rate_limits_table.hits_in(rate_limit.tenant_key(tenant, shard), start) for shard in range(4)]
    assert sum(hits) == len(answers) and all(hits), hits                 # every request counted on one shard
    accepted = [a for a in answers if a.status == 200]
    refused = [a for a in answers if a.status == 429]
    assert len(accepted) + len(refused) == len(answers)
    assert len(accepted) == sum(min(h, 25) for h in hits) <= ceiling      # a shard takes its share, no more
    assert len(refused) == sum(max(h - 25, 0) for h in hits) >= len(answers) - ceiling
    for answer in refused:
        assert answer.error["details"] == {"limit": ceiling, "resetAt": window_end(clock.value), "counter": "tenant"}
        assert answer.headers["x-ratelimit-remaining"] == "0"
    assert rate_limits_table.hits_in(rate_limit.tenant_key(tenant, 4), start) == 0   # no fifth shard


def test_the_headers_show_the_counter_with_the_fewest_remaining(stack, limit, clock):
    from svc_core.contracts import plans
    ceiling = limit * plans.TENANT_CEILING_MULTIPLE
    tenant, first = stack.tenant_with_key()
    second = stack.new_key(tenant)["key"]
    early = list_projects(first)  # the key's window binds first: limit - 1 left, the tenant's ceiling - 1
    assert early.headers["x-ratelimit-limit"] == str(limit)
    assert early.headers["x-ratelimit-remaining"] == str(limit - 1)
    for key in [stack.new_key(tenant)["key"] for _ in range(plans.TENANT_CEILING_MULTIPLE - 1)]:
        for _ in range(limit):
            list_projects(key)
    used = 1 + (plans.TENANT_CEILING_MULTIPLE - 1) * limit + 1
    late = list_projects(second)  # its key has limit - 1 left; the tenant fewer
    assert late.status == 200, late
    assert ceiling - used < limit - 1
    assert late.headers["x-ratelimit-limit"] == str(ceiling)
    assert late.headers["x-ratelimit-remaining"] == str(ceiling - used)


def test_a_key_refused_by_its_own_limit_does_not_use_up_its_tenants_ceiling(stack, limit, clock):
    tenant, first = stack.tenant_with_key()
    second = stack.new_key(tenant)["key"]
    for _ in range(limit * 10):
        list_projects(first)
    assert list_projects(first).error["details"]["counter"] == "credential"
    reply = list_projects(second)
    assert reply.status == 200, reply
    assert reply.headers["x-ratelimit-limit"] == str(limit)  # its own window still binds first


def test_a_revoked_key_is_still_refused_when_its_tenant_is_at_its_ceiling(stack, limit, clock):
    from svc_core.contracts import plans
    tenant, admin = stack.tenant_with_key()
    victim = stack.new_key(tenant, ["projects:read"])
    assert call("api_keys", "ApiKeys-RevokeKey", token=admin, path_params={"id": victim["id"]}).status == 200
    for key in [stack.new_key(tenant)["key"] for _ in range(plans.TENANT_CEILING_MULTIPLE)]:
        for _ in range(limit):
            list_projects(key)
    reply = list_projects(victim["key"])
    assert reply.status == 401 and reply.error["code"] == "UNAUTHORIZED", reply


# ---- public routes that create or check credentials: per source address -----------------------

ADDRESS_LIMIT = 3


@pytest.fixture
def address_limit(setting):
    setting("ADDRESS_SIGN_IN_FAILURES_PER_WINDOW", str(ADDRESS_LIMIT))  # every sign-in below fails
    setting("ADDRESS_RATE_LIMIT_PER_WINDOW", str(ADDRESS_LIMIT))
    return ADDRESS_LIMIT


SIGN_IN = {"email": "nobody@example.com", "password": "not the password"}


@pytest.mark.parametrize("event, body", [
    ("Auth-Register", {"email": "x"}),
    ("Auth-Login", SIGN_IN),
    ("Auth-Refresh", {"refreshToken": "rt_nonsense"}),
    ("Auth-Logout", {"refreshToken": "rt_nonsense"}),
    ("Auth-Exchange", {"token": "not-a-token"}),
    ("Auth-CliStart", {}),
    ("Auth-CliToken", {"loginId": "cli_nonsense", "codeVerifier": "x"}),
])
def test_each_public_credential_route_is_limited_per_address(stack, address_limit, clock, event, body):
    for _ in range(address_limit):
        reply = call("auth", event, body=body, source_ip="198.51.100.20")
        assert reply.status != 429, reply
        assert reply.headers["x-ratelimit-limit"] == str(address_limit)
    refused = call("auth", event, body=body, source_ip="198.51.100.20")
    assert refused.status == 429, refused
    assert refused.error["code"] == "RATE_LIMIT_EXCEEDED"
    assert refused.error["details"] == {"limit": address_limit, "resetAt": window_end(clock.value),
                                        "counter": "address"}
    assert refused.headers["retry-after"] == "50" and refused.headers["x-ratelimit-remaining"] == "0"
    assert call("auth", event, body=body, source_ip="198.51.100.21").status != 429  # another address
    clock.travel(50)
    assert call("auth", event, body=body, source_ip="198.51.100.20").status != 429  # the next window


def test_sign_in_counts_only_the_failures_of_an_address(stack, address_limit, clock):
    account = {"email": "office@example.com", "password": "correct horse battery staple"}
    assert call("auth", "Auth-Register", body={**account, "name": "Office"}, source_ip="198.51.100.29").status == 201
    for _ in range(address_limit + 2):  # people behind one address signing in: never counted
        signed_in = call("auth", "Auth-Login", body=account, source_ip="198.51.100.30")
        assert signed_in.status == 200, signed_in
        assert signed_in.headers["x-ratelimit-remaining"] == str(address_limit)
    invalid = call("auth", "Auth-Login", body={"email": "office@example.com"}, source_ip="198.51.100.30")
    assert invalid.status == 400 and invalid.headers["x-ratelimit-remaining"] == str(address_limit)
    remaining = [call("auth", "Auth-Login", body={**account, "password": f"wrong guess {n}!!"},
                      source_ip="198.51.100.30").headers["x-ratelimit-remaining"] for n in range(address_limit)]
    assert remaining == [str(n) for n in reversed(range(address_limit))]
    refused = call("auth", "Auth-Login", body=account, source_ip="198.51.100.30")  # even the right password
    assert refused.status == 429 and refused.error["details"]["counter"] == "address"
    assert refused.error["message"] == f"More than {address_limit} failed sign-ins in this window for this address."
    assert call("auth", "Auth-Login", body=account, source_ip="198.51.100.31").status == 200  # another address


def test_route_groups_are_counted_apart_and_credentials_are_not_charged(stack, address_limit, clock):
    _, key = stack.tenant_with_key()
    for _ in range(address_limit + 1):
        call("auth", "Auth-Login", body=SIGN_IN, source_ip="198.51.100.22")
    assert call("auth", "Auth-Login", body=SIGN_IN, source_ip="198.51.100.22").status == 429
    # registering from the same address is its own group
    made = call("auth", "Auth-Register", source_ip="198.51.100.22",
                body={"email": "grace@example.com", "password": "correct horse battery staple", "name": "Grace"})
    assert made.status == 201, made
    # the per-credential counter of a key used from that address is untouched
    assert list_projects(key, source_ip="198.51.100.22").headers["x-ratelimit-remaining"] == "999"
    # pages the device login polls are not counted
    for _ in range(address_limit + 2):
        status = call("auth", "Auth-CliStatus", query={"loginId": "cli_nonsense"}, source_ip="198.51.100.22")
        assert status.status != 429 and "x-ratelimit-limit" not in status.headers

