"""The chat stream holds a slot of its credential's open streams (svc_core/auth/stream_slots.py) for
as long as it runs, over real loopback HTTP (the local gateway serving the function's ASGI app, and
its buffered handler): given back when the turn ends, when the stream fails, when there is nothing to
stream (204); kept past its lease by renewal; a stream token counts as the credential it was issued
for. One stream per credential here, so a second one shows whether the first still holds its slot."""

from __future__ import annotations

import time

import httpx
import pytest

from svc_core.data import chat_events_table
from tests.integration.test_chat_stream import (
    STREAM,
    TIMEOUT,
    Servers,
    auth,
    finished_turn,
    new_session,
    set_turn,
    turn_events,
)
from tests.support.stack import provisioned_stack

EVENTS = "/api/v1/events/stream"


@pytest.fixture(scope="module")
def stack(emulator):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CHAT_STREAM_HEARTBEAT_SECONDS", "0.2")
        patch.setenv("CHAT_STREAM_POLL_MS", "20")
        patch.setenv("STREAM_CAP_PER_CREDENTIAL", "1")
        yield from provisioned_stack(emulator)


@pytest.fixture(scope="module")
def servers(stack):
    running = Servers()
    stack.forget_caches()
    yield running
    running.stop()


@pytest.fixture
def http(servers):
    with httpx.Client(base_url=servers.url, timeout=TIMEOUT) as client:
        yield client


def attempt(client: httpx.Client, path: str, headers: dict[str, str]) -> httpx.Response:
    """A stream asked for and, when it opens, closed at once (its body is not waited for)."""
    answer = client.send(client.build_request("GET", path, headers=headers), stream=True)
    try:
        if answer.status_code != 200:
            answer.read()
    finally:
        answer.close()
    return answer


def refused(answer: httpx.Response) -> bool:
    return (answer.status_code == 429 and answer.json()["error"]["details"] == {"limit": 1, "counter": "credential_streams"}
            and int(answer.headers["Retry-After"]) >= 1)


def given_back(client: httpx.Client, url: str, headers: dict[str, str]) -> httpx.Response:
    """The first answer to url that is not a refusal, asked again while it is (the slot of a stream
    whose client went away is given back once the gateway has told the app)."""
    deadline = time.monotonic() + 20
    while (answer := client.get(url, headers=headers)).status_code == 429:
        assert time.monotonic() < deadline, "the slot was not given back"
        time.sleep(0.1)
    return answer


def running_turn(stack, http, key: str, tenant: str) -> str:
    """A session whose turn is in progress: its stream stays open until the turn ends."""
    session_id = new_session(http, key)
    set_turn(tenant, session_id, first=1, active=True, last_event_id=0)
    return session_id


def test_a_running_chat_stream_holds_its_slot_until_its_turn_ends(stack, http, monkeypatch):
    from svc_core.auth import stream_slots
    release = stream_slots.release

    def slow_release(slot):  # a slow table: the stream's end must still wait for its slot to be free
        time.sleep(0.5)
        release(slot)

    monkeypatch.setattr(stream_slots, "release", slow_release)
    tenant, key = stack.tenant_with_key()
    session_id = running_turn(stack, http, key, tenant)
    with http.stream("GET", STREAM.format(session_id), headers=auth(key)) as running:
        assert running.status_code == 200
        assert refused(attempt(http, EVENTS, auth(key)))                      # the event stream, and
        assert refused(attempt(http, STREAM.format(session_id), auth(key)))  # another chat stream
        events = turn_events(1)
        chat_events_table.append(tenant, session_id, events)
        set_turn(tenant, session_id, first=1, active=False, last_event_id=events[-1]["id"])
        assert "event: done" in running.read().decode()  # the stream ended by itself
    # Given back before the stream's last byte: a client that reconnects at once (on a new connection)
    # is not refused.
    with httpx.Client(base_url=str(http.base_url), timeout=TIMEOUT) as reconnecting:
        again = reconnecting.get(STREAM.format(session_id), headers={**auth(key), "Last-Event-ID": "0"})
    assert again.status_code == 200 and "event: done" in again.text


def test_a_stream_that_fails_gives_its_slot_back(stack, http, monkeypatch):
    tenant, key = stack.tenant_with_key()
    session_id = running_turn(stack, http, key, tenant)

    def failing(*args, **kwargs):
        raise RuntimeError("the table did not answer")

    with monkeypatch.context() as patch:
        patch.setattr(chat_events_table, "after", failing)
        failed = http.get(STREAM.format(session_id), headers=auth(key))
    assert failed.status_code == 200 and "event: error" in failed.text
    finished_turn(tenant, session_id)
    assert http.get(STREAM.format(session_id), headers=auth(key)).status_code == 200


def test_nothing_to_stream_takes_no_slot(stack, http):
    tenant, key = stack.tenant_with_key()
    session_id = new_session(http, key)  # no turn: 204
    assert [http.get(STREAM.format(session_id), headers=auth(key)).status_code for _ in range(2)] == [204, 204]
    finished_turn(tenant, session_id)
    assert http.get(STREAM.format(session_id), headers=auth(key)).status_code == 200


def test_a_stream_token_counts_as_the_credential_it_was_issued_for(stack, http):
    tenant, key = stack.tenant_with_key()
    session_id = running_turn(stack, http, key, tenant)
    token = http.post(f"/api/v1/chat/sessions/{session_id}/stream-token", headers=auth(key)).json()["data"]["token"]
    with http.stream("GET", STREAM.format(session_id) + f"?token={token}") as running:
        assert running.status_code == 200
        assert refused(attempt(http, EVENTS, auth(key)))
    finished_turn(tenant, session_id)
    assert given_back(http, STREAM.format(session_id), auth(key)).status_code == 200


def test_the_buffered_answer_holds_a_slot_too(stack, http, servers):
    tenant, key = stack.tenant_with_key()
    session_id = running_turn(stack, http, key, tenant)
    with httpx.Client(base_url=servers.buffered_url, timeout=TIMEOUT) as buffered:
        with http.stream("GET", STREAM.format(session_id), headers=auth(key)) as running:
            assert running.status_code == 200
            answer = attempt(buffered, STREAM.format(session_id), auth(key))
            assert refused(answer) and answer.json()["error"]["code"] == "RATE_LIMIT_EXCEEDED"
        finished_turn(tenant, session_id)
        assert given_back(buffered, STREAM.format(session_id), auth(key)).status_code == 200
        # Given back once answered: the next buffered answer is not refused either.
        assert buffered.get(STREAM.format(session_id), headers=auth(key)).status_code == 200


def test_a_stream_outliving_its_lease_keeps_its_slot(stack, http, monkeypatch):
    """Leases of 3 s, renewed every second: a stream open for three leases still holds its slot."""
    monkeypatch.setenv("STREAM_LEASE_SECONDS", "3")
    stack.forget_caches()
    try:
        tenant, key = stack.tenant_with_key()
        session_id = running_turn(stack, http, key, tenant)
        with http.stream("GET", STREAM.format(session_id), headers=auth(key)) as running:
            assert running.status_code == 200
            lines = running.iter_lines()
            started = time.monotonic()
            while time.monotonic() - started < 9:  # reading its heartbeats meanwhile
                next(lines)
            assert refused(attempt(http, EVENTS, auth(key)))
    finally:
        monkeypatch.delenv("STREAM_LEASE_SECONDS")
        stack.forget_caches()
