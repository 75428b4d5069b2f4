"""Open streams are capped per credential and per tenant, counted in DynamoDB (leases in the
rate-limits table), on moto and on DynamoDB Local; exactly at the cap under concurrency on DynamoDB
Local. The streams themselves, over HTTP: tests/e2e/test_stream_caps_e2e.py and test_chat_stream.py."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from svc_core.auth import stream_slots
from svc_core.auth.principal import Principal
from svc_core.data import rate_limits_table
from svc_core.platform import config, timeutil
from svc_core.platform.errors import RateLimited

NOW = 1_900_000_000


@pytest.fixture
def caps(monkeypatch):
    """Small caps: 3 streams per credential, 4 per tenant; leases of 60 s."""
    monkeypatch.setenv("STREAM_CAP_PER_CREDENTIAL", "3")
    monkeypatch.setenv("STREAM_CAP_PER_TENANT", "4")
    monkeypatch.setenv("STREAM_LEASE_SECONDS", "60")
    config.settings.cache_clear()
    yield
    config.settings.cache_clear()


@pytest.fixture
def clock(monkeypatch):
    now = [float(NOW)]
    monkeypatch.setattr(timeutil, "now", lambda: now[0])
    return now


def principal(key: str, tenant: str = "ten_a") -> Principal:
    return Principal(subject=key, tenant_id=tenant, scopes=frozenset({"events:read"}), credential="api_key",
                     token_id=key)


def leases(data_backend, holder: str) -> dict:
    item = data_backend.item(config.settings().rate_limits_table, {"pk": holder}) or {}
    return item.get("leases", {})


def refusal(take) -> RateLimited:
    with pytest.raises(RateLimited) as raised:
        take()
    return raised.value


def test_a_credential_opens_its_cap_of_streams_and_no_more(data_backend, caps, clock):
    key = principal("key_one")
    slots = [stream_slots.take(key) for _ in range(3)]
    refused = refusal(lambda: stream_slots.take(key))
    assert refused.status == 429 and refused.code == "RATE_LIMIT_EXCEEDED"
    assert refused.details == {"limit": 3, "counter": "credential_streams"}
    assert refused.headers == {"Retry-After": "60"}  # the first lease runs out in 60 s unless renewed
    clock[0] += 25
    assert refusal(lambda: stream_slots.take(key)).headers == {"Retry-After": "35"}

    stream_slots.release(slots[0])
    stream_slots.take(key)  # the slot given back is taken again
    assert len(leases(data_backend, stream_slots.credential_holder(key))) == 3


def test_the_tenant_cap_binds_across_its_credentials_and_a_refusal_holds_nothing(data_backend, caps, clock):
    first, second, elsewhere = principal("key_one"), principal("key_two"), principal("key_three", "ten_b")
    for _ in range(3):
        stream_slots.take(first)
    stream_slots.take(second)  # the tenant's 4th
    refused = refusal(lambda: stream_slots.take(second))
    assert refused.details == {"limit": 4, "counter": "tenant_streams"}
    # Refused by the tenant, the stream took no slot of its credential either.
    assert len(leases(data_backend, stream_slots.credential_holder(second))) == 1
    stream_slots.take(elsewhere)  # another tenant's credential is not affected


def test_a_lease_nobody_renews_frees_its_slot_when_it_runs_out(data_backend, caps, clock):
    key = principal("key_one")
    held = [stream_slots.take(key) for _ in range(3)]  # a container that died holding them
    clock[0] += 40
    assert all(stream_slots.renew(slot) for slot in held[1:])  # the other two streams still run
    clock[0] += 30  # 70 s: the first lease ran out, the renewed ones did not
    fresh = stream_slots.take(key)
    holder = leases(data_backend, stream_slots.credential_holder(key))
    assert set(holder) == {held[1].lease_id, held[2].lease_id, fresh.lease_id}  # the expired one is gone
    assert stream_slots.renew(held[0]) is False  # its stream, were it still running, ends
    refusal(lambda: stream_slots.take(key))


def test_release_gives_back_both_counts(data_backend, caps, clock):
    key = principal("key_one")
    with stream_slots.held(key):
        assert len(leases(data_backend, stream_slots.tenant_holder("ten_a"))) == 1
    assert leases(data_backend, stream_slots.credential_holder(key)) == {}
    assert leases(data_backend, stream_slots.tenant_holder("ten_a")) == {}


def test_exactly_the_cap_under_concurrency(atomic_stack, caps, clock):
    key = principal("key_busy")
    outcomes = []

    def attempt(_):
        try:
            stream_slots.take(key)
            outcomes.append("taken")
        except RateLimited:
            outcomes.append("refused")

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(attempt, range(12)))
    assert outcomes.count("taken") == 3 and outcomes.count("refused") == 9
    assert len(leases(atomic_stack, stream_slots.credential_holder(key))) == 3


def test_the_data_module_reports_which_holder_is_full(data_backend):
    holders = [("streams#k", 1), ("streams#t", 5)]
    rate_limits_table.take_lease(holders, "01AAA", NOW + 60, NOW)
    with pytest.raises(rate_limits_table.HolderFull) as full:
        rate_limits_table.take_lease(holders, "01AAB", NOW + 60, NOW)
    assert (full.value.index, full.value.soonest_expiry) == (0, NOW + 60)
