"""Sign-in throttles over real HTTP: the gateway passes the TCP peer as sourceIp, and every
127.x.y.z address is this machine, so a client bound to 127.0.0.2 is another caller than one
bound to 127.0.0.3."""

from __future__ import annotations

import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

pytestmark = pytest.mark.long_running   # minutes long: its test process starts with it (tests/conftest.py)

PASSWORD = "a long enough e2e password"


def client_from(stack, address: str, timeout: float = 10) -> httpx.Client:
    return httpx.Client(base_url=stack.base_url, timeout=timeout, transport=httpx.HTTPTransport(local_address=address))


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


def register(http: httpx.Client, email: str) -> httpx.Response:
    return http.post("/api/v1/auth/register", json={"email": email, "password": PASSWORD, "name": "Someone"})


def test_a_stranger_rotating_addresses_cannot_keep_the_owner_out(local_stack):
    """The attack as it was found: the account slowed by failures from many addresses (50 from 10,
    its hourly threshold), then a wrong password every 0.4 s from rotating addresses, which took the
    account's one shared attempt in each 5 seconds."""
    email = f"target-{secrets.token_hex(4)}@example.com"
    pool = ThreadPoolExecutor(6)
    # a busy machine hashes slowly: the timeouts are generous, the test is about 429s, not speed
    clients = [client_from(local_stack, f"127.0.1.{n}", timeout=120) for n in range(10, 70)]
    first, rotating = clients[:10], clients[10:]
    try:
        with client_from(local_stack, "127.0.1.1", timeout=120) as owner:
            assert register(owner, email).status_code == 201
            assert sign_in(owner, email).status_code == 200  # the owner's address is known from now on
            with ThreadPoolExecutor(2) as slowly:
                wrong = list(slowly.map(lambda n: sign_in(first[n // 5], email, f"wrong {n} password").status_code,
                                        range(50)))
            assert wrong == [401] * 50
            stop, attempts = threading.Event(), []

            def attack() -> None:
                due = time.monotonic()
                for n in range(10_000):
                    if stop.is_set():
                        return
                    attempts.append(pool.submit(sign_in, rotating[n % len(rotating)], email, f"guess {n} password"))
                    due += 0.4
                    time.sleep(max(0.0, due - time.monotonic()))

            attacker = threading.Thread(target=attack)
            attacker.start()
            try:
                time.sleep(2)  # the attack is under way: each 5-second slot is taken in its first 0.4 s
                started, owner_statuses = time.monotonic(), []
                for at in (0, 3, 6):  # three tries begun within 10 s, each of which must get in
                    time.sleep(max(0.0, started + at - time.monotonic()))
                    owner_statuses.append(sign_in(owner, email).status_code)
            finally:
                stop.set()
                attacker.join()
            answers = [future.result() for future in attempts]
    finally:
        pool.shutdown()
        for client in clients:
            client.close()
    slowed = [a for a in answers if a.status_code == 429]
    assert slowed and all(a.json()["error"]["details"]["counter"] == "account" for a in slowed)
    assert {a.status_code for a in answers} <= {401, 429}
    assert owner_statuses == [200, 200, 200]  # every time, at once


def test_a_hundred_people_behind_one_address_register_and_sign_in(local_stack):
    """An office behind one NAT address at 9 a.m.: registrations count per address, successful
    sign-ins not at all."""
    emails = [f"office-{n}-{secrets.token_hex(3)}@example.com" for n in range(100)]
    with client_from(local_stack, "127.0.2.1") as office:
        def arrive(email: str) -> tuple[httpx.Response, httpx.Response]:
            return register(office, email), sign_in(office, email)

        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(arrive, emails))
    assert [(made.status_code, signed.status_code) for made, signed in answers] == [(201, 200)] * 100
    made, signed = answers[-1]
    assert int(made.headers["x-ratelimit-limit"]) >= 100
    assert signed.headers["x-ratelimit-remaining"] == signed.headers["x-ratelimit-limit"]  # nothing counted


def test_failed_sign_ins_beyond_the_address_limit_are_refused(local_stack):
    """A guesser's burst from one address: eight at a time (one after another, a busy machine
    could spread 50 failures over more than the limit's minute, and no refusal would come)."""
    with client_from(local_stack, "127.0.2.2", timeout=120) as guesser, client_from(local_stack, "127.0.2.3") as other:
        def guess(n: int) -> httpx.Response:
            return sign_in(guesser, f"nobody-{n}-{secrets.token_hex(3)}@example.com", "a wrong guess here")

        answers: list[httpx.Response] = []
        with ThreadPoolExecutor(8) as pool:
            for burst in range(4):  # until refused: a new window (a minute) may begin on the way
                answers += pool.map(guess, range(60 * burst, 60 * burst + 60))
                if any(a.status_code == 429 for a in answers):
                    break
        assert {a.status_code for a in answers} <= {401, 429}
        refused = [a for a in answers if a.status_code == 429]
        assert refused, f"no refusal after {len(answers)} failures"
        answer = refused[0]
        assert answer.json()["error"]["details"]["counter"] == "address"
        assert answer.headers["x-ratelimit-limit"] == "50" and 1 <= int(answer.headers["retry-after"]) <= 60
        # The failures before the refusal counted down to it.
        counted = [a for a in answers if a.status_code == 401]
        assert {a.headers["x-ratelimit-limit"] for a in counted} == {"50"}
        assert "0" in {a.headers["x-ratelimit-remaining"] for a in counted}
        assert sign_in(other, f"nobody-{secrets.token_hex(3)}@example.com", "a wrong guess").status_code == 401
