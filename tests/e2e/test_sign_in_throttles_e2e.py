"""Sign-in throttles over real HTTP: the gateway passes the TCP peer as sourceIp, and every
127.x.y.z address is this machine, so a client bound to 127.0.0.2 is another caller than one
bound to 127.0.0.3."""

from __future__ import annotations

import secrets
import time

import httpx
import pytest

PASSWORD = "a long enough e2e password"


def client_from(stack, address: str) -> httpx.Client:
    return httpx.Client(base_url=stack.base_url, timeout=10, transport=httpx.HTTPTransport(local_address=address))


def sign_in(http: httpx.Client, email: str, password: str = PASSWORD) -> httpx.Response:
    return http.post("/api/v1/auth/login", json={"email": email, "password": password})


def test_a_stranger_locks_out_only_their_own_address(local_stack):
    email = f"owner-{secrets.token_hex(4)}@example.com"
    with client_from(local_stack, "127.0.0.2") as stranger, client_from(local_stack, "127.0.0.3") as owner:
        made = owner.post("/api/v1/auth/register", json={"email": email, "password": PASSWORD, "name": "Owner"})
        assert made.status_code == 201, made.text
        for attempt in range(5):
            assert sign_in(stranger, email, f"wrong password {attempt}").status_code == 401
        seen = {e["requestContext"]["identity"]["sourceIp"] for e in local_stack.recorder.events[-5:]}
        assert seen == {"127.0.0.2"}
        refused = sign_in(stranger, email)  # the right password, from the stranger's address
        assert refused.status_code == 429, refused.text
        assert refused.json()["error"]["code"] == "RATE_LIMIT_EXCEEDED"
        assert refused.json()["error"]["details"]["counter"] == "account_address"
        assert 0 < int(refused.headers["retry-after"]) <= 15 * 60
        signed_in = sign_in(owner, email)  # the owner, from another address, is not locked out
        assert signed_in.status_code == 200, signed_in.text
        assert owner.get("/api/v1/auth/me", headers={
            "Authorization": f"Bearer {signed_in.json()['data']['accessToken']}"}).status_code == 200


@pytest.fixture
def three_per_address(monkeypatch):
    from svc_core.platform import config
    monkeypatch.setenv("ADDRESS_RATE_LIMIT_PER_WINDOW", "3")
    config.settings.cache_clear()
    yield 3
    config.settings.cache_clear()


def test_registrations_from_one_address_are_limited(local_stack, three_per_address):
    if time.time() % 60 > 50:  # the burst must not straddle two windows
        time.sleep(60 - time.time() % 60 + 0.1)
    with client_from(local_stack, "127.0.0.4") as busy, client_from(local_stack, "127.0.0.5") as other:
        for _ in range(three_per_address):
            answer = busy.post("/api/v1/auth/register", json={"email": "not-an-address"})
            assert answer.status_code == 400 and answer.headers["x-ratelimit-limit"] == "3"
        refused = busy.post("/api/v1/auth/register", json={"email": "not-an-address"})
        assert refused.status_code == 429, refused.text
        assert refused.json()["error"]["code"] == "RATE_LIMIT_EXCEEDED"
        assert refused.json()["error"]["details"]["counter"] == "address"
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        assert other.post("/api/v1/auth/register", json={"email": "not-an-address"}).status_code == 400
