"""The rule on open streams (svc_core/auth/stream_slots.py): which routes it binds (every route
answering Server-Sent Events, found from the functions' Api objects), its numbers, and the refusal
it gives. The counting itself, in DynamoDB: tests/integration/test_stream_slots.py."""

from __future__ import annotations

import pytest

from devstack.template import Resolver
from svc_core.auth import stream_slots
from svc_core.auth.principal import Principal
from svc_core.data import rate_limits_table
from svc_core.http import streamed
from svc_core.http.api import Api
from svc_core.platform import timeutil
from svc_core.platform.config import settings
from svc_core.platform.errors import RateLimited
from tests.support.functions import load_function

NOW = 1_900_000_000
KEY = Principal(subject="key_1", tenant_id="ten_1", scopes=frozenset({"events:read"}), credential="api_key",
                token_id="key_1")


def event_stream_routes() -> dict[tuple[str, str], object]:
    """Every route of every function that answers text/event-stream, from the functions' Api objects."""
    resolver, found = Resolver({}), {}
    for logical_id in resolver.of_type("AWS::Serverless::Function"):
        api = getattr(load_function(resolver.function_code_dir(logical_id).name), "api", None)
        for route in getattr(api, "routes", []):
            if route.doc["media_type"] == "text/event-stream":
                found[(route.spec.method, route.spec.path)] = route.spec
    return found


def test_every_event_stream_route_holds_a_slot_per_request():
    routes = event_stream_routes()
    assert {("GET", "/api/v1/events/stream"), ("GET", "/api/v1/chat/sessions/{id}/stream")} <= set(routes)
    for where, spec in routes.items():
        assert spec.stream and not spec.public and spec.scope, where
    # And they are the routes API Gateway streams: none is served buffered only, unseen by this list.
    streamed_paths = {path for method, path in Resolver({}).streaming_routes()}  # GET and its ANY twin
    assert {path for _, path in routes} == streamed_paths


def test_a_public_stream_route_cannot_be_declared():
    with pytest.raises(ValueError, match="names a scope"):
        Api().get("/api/v1/anyone/stream", public=True, raw=True, media_type="text/event-stream", summary="x")


def test_the_numbers_by_default():
    cfg = settings()
    assert (cfg.stream_cap_per_credential, cfg.stream_cap_per_tenant, cfg.stream_lease_seconds) == (10, 50, 60)
    assert stream_slots.renew_every_seconds() == 20
    # What the stream routes' descriptions (the OpenAPI document) say of them.
    assert "hold 10 streams open at once and a tenant 50" in streamed.STREAM_CAP


@pytest.fixture
def full(monkeypatch):
    """take_lease refusing: which holder is full, and when its first lease runs out."""
    monkeypatch.setattr(timeutil, "now", lambda: float(NOW))
    answer: dict = {}

    def take_lease(holders, lease_id, expires_at, now):
        answer["holders"], answer["expires_at"], answer["now"] = holders, expires_at, now
        if "full" in answer:
            raise rate_limits_table.HolderFull(*answer["full"])

    monkeypatch.setattr(rate_limits_table, "take_lease", take_lease)
    return answer


def test_a_slot_is_counted_for_the_credential_and_its_tenant(full):
    slot = stream_slots.take(KEY)
    assert full["holders"] == [("streams#key_1", 10), ("streams#tenant#ten_1", 50)]
    assert slot.holders == ("streams#key_1", "streams#tenant#ten_1")
    assert (full["now"], full["expires_at"]) == (NOW, NOW + 60)


def test_a_user_is_counted_per_sign_in_session_as_for_its_rate_limit(full):
    user = Principal(subject="usr_1", tenant_id="ten_1", scopes=frozenset(), credential="user", token_id="jti",
                     claims={"sid": "ses_9"})
    stream_slots.take(user)
    assert full["holders"][0] == ("streams#ses_9", 10)


@pytest.mark.parametrize("index, expiry, counter, limit, retry_after", [
    (0, NOW + 42, "credential_streams", 10, "42"),
    (1, NOW + 7, "tenant_streams", 50, "7"),
    (0, NOW, "credential_streams", 10, "1"),           # due now: at least a second
    (1, NOW + 3600, "tenant_streams", 50, "60"),       # never longer than a lease
])
def test_a_full_holder_is_a_429_naming_its_cap(full, index, expiry, counter, limit, retry_after):
    full["full"] = (index, expiry)
    with pytest.raises(RateLimited) as refused:
        stream_slots.take(KEY)
    error = refused.value
    assert (error.status, error.code) == (429, "RATE_LIMIT_EXCEEDED")
    assert error.details == {"limit": limit, "counter": counter}
    assert error.headers == {"Retry-After": retry_after}
    assert f"{limit} streams are already open" in error.message


def test_a_slot_that_cannot_be_released_is_left_to_run_out(monkeypatch):
    def fails(*args):
        raise RuntimeError("the table did not answer")
    monkeypatch.setattr(rate_limits_table, "release_lease", fails)
    monkeypatch.setattr(rate_limits_table, "renew_lease", fails)
    slot = stream_slots.Slot("01LEASE", ("streams#key_1", "streams#tenant#ten_1"))
    stream_slots.release(slot)             # logged, not raised: the stream's end is not an error
    assert stream_slots.renew(slot) is True  # kept: the next renewal tries again
