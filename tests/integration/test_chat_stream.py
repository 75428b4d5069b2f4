"""The chat answer stream over real loopback HTTP: the local stack's gateway (devstack/gateway.py)
in this process, on the moto server, serving GET /api/v1/chat/sessions/{id}/stream through the
function's ASGI app as the Lambda Web Adapter would, parsed with httpx-sse.

Events are written with chat_events_table.append (what the chat turn worker does) and sessions made
through the chat API; a turn's state (activeTurn, latestTurn, lastEventId) is set on the session
item directly where a test needs a turn without the worker. Timing is never asserted: "delivered as
stored" is shown by writing the next event only after the client has received the previous one.
"""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
from httpx_sse import EventSource

from devstack.gateway import Gateway, Router
from devstack.runtime import load_functions
from devstack.template import Resolver
from svc_core.data import chat_events_table
from tests.support.auth_helpers import RATE_HEADERS, Clock
from tests.support.stack import DEFAULT_PARAMETERS, provisioned_stack

STREAM = "/api/v1/chat/sessions/{}/stream"
MISSING_SESSION = "chs_01JD2Q7ZB6V8S3K4X9W2M5N7PA"
MESSAGE = "msg_01JD2Q7ZB6V8S3K4X9W2M5N7PB"
TIMEOUT = httpx.Timeout(10.0)  # a stream that never sends what a test waits for fails, it does not hang


@pytest.fixture(scope="module")
def stack(emulator):
    with pytest.MonkeyPatch.context() as patch:
        # Heartbeats and polls short enough for tests (the settings are read per request).
        patch.setenv("CHAT_STREAM_HEARTBEAT_SECONDS", "0.2")
        patch.setenv("CHAT_STREAM_POLL_MS", "20")
        yield from provisioned_stack(emulator)


class Servers:
    """The gateway streaming (as in AWS) and one answering buffered (as where streaming is off)."""

    def __init__(self) -> None:
        resolver = Resolver(DEFAULT_PARAMETERS)
        self.functions = load_functions(resolver, containers=2)
        router = Router(resolver.api_routes(), resolver.streaming_routes())
        self.log: list[str] = []
        self.streamed = Gateway(router, self.functions, port=0, log=self.log.append).start()
        self.buffered = Gateway(router, self.functions, port=0, log=self.log.append, streaming=False).start()
        self.url = f"http://127.0.0.1:{self.streamed.port}"
        self.buffered_url = f"http://127.0.0.1:{self.buffered.port}"

    def stop(self) -> None:
        self.streamed.stop()
        self.buffered.stop()


@pytest.fixture(scope="module")
def servers(stack):
    with pytest.MonkeyPatch.context() as patch:
        running = Servers()
        patch.setenv("PUBLIC_BASE_URL", running.url)
        stack.forget_caches()
        yield running
        running.stop()


@pytest.fixture
def http(servers):
    with httpx.Client(base_url=servers.url, timeout=TIMEOUT) as client:
        yield client


# ---- helpers -----------------------------------------------------------------------------------

def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def new_session(http: httpx.Client, key: str) -> str:
    answer = http.post("/api/v1/chat/sessions", json={"title": "Stream test"}, headers=auth(key))
    assert answer.status_code == 201, answer.text
    return answer.json()["data"]["id"]


def set_turn(tenant: str, session_id: str, *, first: int, active: bool, last_event_id: int,
             message_id: str = MESSAGE) -> None:
    """The session's turn state as the chat API and the worker leave it."""
    from svc_core.adapters import aws
    from svc_core.adapters.dynamo import values
    from svc_core.platform.config import settings
    turn = {"messageId": message_id, "firstEventId": first}
    update = {"TableName": settings().chat_sessions_table,
              "Key": {"tenantId": {"S": tenant}, "id": {"S": session_id}},
              "UpdateExpression": "SET latestTurn = :turn, lastEventId = :last" + (", activeTurn = :turn" if active
                                                                                   else " REMOVE activeTurn"),
              "ExpressionAttributeValues": values(turn=turn, last=last_event_id)}
    aws.client("dynamodb").update_item(**update)


def turn_events(first: int, chunks: tuple[str, ...] = ("Hello, ", "world."), message_id: str = MESSAGE) -> list[dict]:
    """The events of one offline-looking assistant turn, ids from `first`, ending with done."""
    names = [("message_start", {"role": "assistant", "model": "offline", "userMessageId": "msg_user", "offline": True})]
    names += [("content_delta", {"text": chunk}) for chunk in chunks]
    names += [("usage", {"inputTokens": 3, "outputTokens": 4, "cacheReadTokens": 0, "cacheWriteTokens": 0,
                         "microCredits": 0, "estimated": True}),
              ("message_stop", {"stopReason": "end_turn"}), ("done", {"status": "completed"})]
    return [{"id": first + i, "event": name, "data": {"messageId": message_id, **data}}
            for i, (name, data) in enumerate(names)]


def finished_turn(tenant: str, session_id: str, first: int = 1, **kwargs) -> list[dict]:
    events = turn_events(first, **kwargs)
    chat_events_table.append(tenant, session_id, events)
    set_turn(tenant, session_id, first=first, active=False, last_event_id=events[-1]["id"],
             message_id=events[0]["data"]["messageId"])
    return events


def read_stream(client: httpx.Client, url: str, headers: dict[str, str] | None = None):
    """(response, [(id, event, data)]) of a whole stream."""
    with client.stream("GET", url, headers=headers or {}) as response:
        seen = []
        if response.status_code == 200:
            seen = [(int(e.id), e.event, e.json()) for e in EventSource(response).iter_sse()]
        else:
            response.read()
        return response, seen


def ids_of(seen) -> list[int]:
    return [event_id for event_id, _, _ in seen]


# ---- a whole turn, resumption, live delivery ---------------------------------------------------

def test_a_finished_turn_replays_whole_in_order_with_increasing_ids(stack, http):
    tenant, key = stack.tenant_with_key()
    session_id = new_session(http, key)
    events = finished_turn(tenant, session_id)
    with http.stream("GET", STREAM.format(session_id), headers=auth(key)) as response:
        assert response.status_code == 200
        raw = response.read().decode()
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-cache"
    assert response.headers["x-request-id"] and all(name in response.headers for name in RATE_HEADERS)
    assert raw.startswith("retry: ")
    assert "id: 1\nevent: message_start\ndata: {" in raw
    _, seen = read_stream(http, STREAM.format(session_id), auth(key))
    assert seen == [(e["id"], e["event"], e["data"]) for e in events]
    assert ids_of(seen) == list(range(1, len(events) + 1))
    assert seen[-1][1] == "done" and all(data["messageId"] == MESSAGE for _, _, data in seen)


def test_without_last_event_id_the_newest_turn_replays_from_its_first_event(stack, http):
    tenant, key = stack.tenant_with_key()
    session_id = new_session(http, key)
    first = finished_turn(tenant, session_id, 1)
    second = finished_turn(tenant, session_id, len(first) + 1, chunks=("Again.",), message_id="msg_second")
    _, seen = read_stream(http, STREAM.format(session_id), auth(key))
    assert ids_of(seen) == [e["id"] for e in second]
    assert {data["messageId"] for _, _, data in seen} == {"msg_second"}


@pytest.mark.parametrize("after", [0, 3, 6, 7, 10])
def test_last_event_id_resumes_exactly_after_the_given_id(stack, http, after):
    tenant, key = stack.tenant_with_key()
    session_id = new_session(http, key)
    events = finished_turn(tenant, session_id, 1) + finished_turn(tenant, session_id, 7, message_id="msg_second")
    assert [e["id"] for e in events] == list(range(1, 13))
    _, by_header = read_stream(http, STREAM.format(session_id), {**auth(key), "Last-Event-ID": str(after)})
    _, by_query = read_stream(http, STREAM.format(session_id) + f"?lastEventId={after}", auth(key))
    assert ids_of(by_header) == ids_of(by_query) == list(range(after + 1, 13))
    assert by_header == [(e["id"], e["event"], e["data"]) for e in events[after:]]


def test_the_header_wins_over_the_query_parameter(stack, http):
    tenant, key = stack.tenant_with_key()
    session_id = new_session(http, key)
    finished_turn(tenant, session_id)
    _, seen = read_stream(http, STREAM.format(session_id) + "?lastEventId=1", {**auth(key), "Last-Event-ID": "4"})
    assert ids_of(seen) == [5, 6]


def test_events_are_delivered_as_they_are_stored(stack, http):
    """Each next event is written only after the client has received the previous one: a server
    that held events back until `done` would never send the first, and the read would time out."""
    tenant, key = stack.tenant_with_key()
    session_id = new_session(http, key)
    events = turn_events(1)
    set_turn(tenant, session_id, first=1, active=True, last_event_id=0)
    chat_events_table.append(tenant, session_id, events[:1])
    received = []
    with http.stream("GET", STREAM.format(session_id), headers=auth(key)) as response:
        assert response.status_code == 200
        for sse in EventSource(response).iter_sse():
            received.append(int(sse.id))
            written = received[-1]
            if written < len(events):
                chat_events_table.append(tenant, session_id, [events[written]])
            if events[written - 1]["event"] == "done":
                set_turn(tenant, session_id, first=1, active=False, last_event_id=written)
    assert received == [e["id"] for e in events]


def test_heartbeats_keep_an_idle_stream_open_until_the_turn_ends(stack, http):
    tenant, key = stack.tenant_with_key()
    session_id = new_session(http, key)
    set_turn(tenant, session_id, first=1, active=True, last_event_id=0)
    events = turn_events(1)
    heartbeats, received = 0, []
    with http.stream("GET", STREAM.format(session_id), headers=auth(key)) as response:
        assert response.status_code == 200
        lines = response.iter_lines()
        for line in lines:
            if line == ": keep-alive":
                heartbeats += 1
                if heartbeats == 2:  # idle long enough: now the worker answers
                    chat_events_table.append(tenant, session_id, events)
                    set_turn(tenant, session_id, first=1, active=False, last_event_id=events[-1]["id"])
            elif line.startswith("id: "):
                received.append(int(line[4:]))
    assert heartbeats >= 2
    assert received == [e["id"] for e in events]


def test_a_turn_that_ends_without_more_events_ends_the_stream(stack, http):
    """A client resuming at the end of an active turn is told nothing more when the turn ends (the
    session says so) instead of waiting for ever."""
    tenant, key = stack.tenant_with_key()
    session_id = new_session(http, key)
    finished_turn(tenant, session_id)
    set_turn(tenant, session_id, first=1, active=True, last_event_id=6)  # a turn in progress, nothing stored
    with http.stream("GET", STREAM.format(session_id), headers={**auth(key), "Last-Event-ID": "6"}) as response:
        assert response.status_code == 200  # open (its answer has begun): now the turn ends
        set_turn(tenant, session_id, first=1, active=False, last_event_id=6)
        seen = list(EventSource(response).iter_sse())
    assert seen == []


# ---- nothing to stream, bad input, other tenants -----------------------------------------------

def test_nothing_to_stream_is_204(stack, http):
    tenant, key = stack.tenant_with_key()
    fresh = new_session(http, key)
    answered = new_session(http, key)
    finished_turn(tenant, answered)
    cases = [(fresh, None), (fresh, ""), (fresh, "0"), (answered, "6"), (answered, "1000")]   # "": none
    for session_id, last in cases:
        headers = {**auth(key), **({"Last-Event-ID": last} if last is not None else {})}
        response = http.get(STREAM.format(session_id), headers=headers)
        assert response.status_code == 204, (session_id, last, response.text)
        assert response.content == b"" and response.headers["x-request-id"]
    set_turn(tenant, answered, first=7, active=True, last_event_id=6)  # a turn in progress: it streams
    timer = threading.Timer(0.2, lambda: chat_events_table.append(tenant, answered, turn_events(7)))
    timer.start()
    try:
        response, seen = read_stream(http, STREAM.format(answered), {**auth(key), "Last-Event-ID": "6"})
    finally:
        timer.join()
    assert response.status_code == 200 and ids_of(seen) == list(range(7, 13))


@pytest.mark.parametrize("header, query", [("abc", None), ("-1", None), ("1.5", None), ("1 2", None), ("1e3", None),
                                           ("9" * 19, None), (None, "x"), (None, "-2"), (None, " 1")])
def test_a_bad_last_event_id_is_400_naming_it(stack, http, servers, header, query):
    tenant, key = stack.tenant_with_key()
    session_id = new_session(http, key)
    finished_turn(tenant, session_id)
    url = STREAM.format(session_id) + (f"?lastEventId={query}" if query is not None else "")
    response = http.get(url, headers={**auth(key), **({"Last-Event-ID": header} if header is not None else {})})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert error["details"]["fields"] == [{"field": "last-event-id" if header is not None else "lastEventId",
                                           "in": "header" if header is not None else "query",
                                           "reason": "String should match pattern '^(?:[0-9]{1,18})?$'"}]
    with httpx.Client(base_url=servers.buffered_url, timeout=TIMEOUT) as buffered:  # the buffered handler agrees
        again = buffered.get(url, headers={**auth(key), **({"Last-Event-ID": header} if header is not None else {})})
    assert again.status_code == 400 and again.json()["error"]["details"] == error["details"]


def test_another_tenants_session_is_404_and_credentials_are_checked(stack, http):
    tenant, key = stack.tenant_with_key()
    session_id = new_session(http, key)
    finished_turn(tenant, session_id)
    _, other_key = stack.tenant_with_key()
    _, narrow_key = stack.tenant_with_key(["projects:read"])
    for target, credential, status, code in [
        (session_id, other_key, 404, "RESOURCE_NOT_FOUND"), (MISSING_SESSION, key, 404, "RESOURCE_NOT_FOUND"),
        ("not-an-id", key, 404, "RESOURCE_NOT_FOUND"), (session_id, None, 401, "UNAUTHORIZED"),
        (session_id, "svc_" + "sdk_madeup", 401, "UNAUTHORIZED"), (session_id, narrow_key, 403, "FORBIDDEN"),
    ]:
        response = http.get(STREAM.format(target), headers=auth(credential) if credential else {})
        assert response.status_code == status, (target, response.text)
        assert response.headers["content-type"].startswith("application/json")
        assert response.json()["error"]["code"] == code
        assert response.json()["meta"]["request_id"] == response.headers["x-request-id"]
    assert http.post(STREAM.format(session_id), headers=auth(key)).status_code == 405


# ---- the stream token --------------------------------------------------------------------------

def stream_token(http: httpx.Client, key: str, session_id: str) -> httpx.Response:
    return http.post(f"/api/v1/chat/sessions/{session_id}/stream-token", headers=auth(key))


def test_a_stream_token_streams_its_session_without_authorization(stack, http, servers):
    tenant, key = stack.tenant_with_key()
    session_id = new_session(http, key)
    events = finished_turn(tenant, session_id)
    answer = stream_token(http, key, session_id)
    assert answer.status_code == 201, answer.text
    issued = answer.json()["data"]
    assert set(issued) == {"token", "expires_at", "streamUrl"}
    assert issued["streamUrl"] == f"{servers.url}{STREAM.format(session_id)}?token={issued['token']}"
    _, seen = read_stream(http, issued["streamUrl"])
    assert ids_of(seen) == [e["id"] for e in events]
    _, again = read_stream(http, issued["streamUrl"], {"Last-Event-ID": "4"})  # a reconnect reuses it
    assert ids_of(again) == [5, 6]


def test_a_stream_token_is_refused_on_other_sessions_tenants_and_endpoints(stack, http):
    tenant, key = stack.tenant_with_key()
    session_id, other_session = new_session(http, key), new_session(http, key)
    finished_turn(tenant, session_id)
    finished_turn(tenant, other_session)
    other_tenant, other_key = stack.tenant_with_key()
    foreign_session = new_session(http, other_key)
    finished_turn(other_tenant, foreign_session)
    token = stream_token(http, key, session_id).json()["data"]["token"]
    refused = [
        ("GET", f"{STREAM.format(other_session)}?token={token}", {}),
        ("GET", f"{STREAM.format(foreign_session)}?token={token}", {}),
        ("GET", STREAM.format(session_id), auth(token)),  # not an access token
        ("GET", f"/api/v1/chat/sessions/{session_id}?token={token}", {}),
        ("GET", f"/api/v1/chat/sessions/{session_id}", auth(token)),
        ("GET", "/api/v1/projects", auth(token)),
        ("POST", f"/api/v1/chat/sessions/{session_id}/stream-token", auth(token)),
        ("GET", f"{STREAM.format(session_id)}?token={token[:-4]}AAAA", {}),  # tampered signature
    ]
    for method, url, headers in refused:
        response = http.request(method, url, headers=headers)
        assert response.status_code == 401, (method, url, response.text)
        assert response.json()["error"]["code"] == "UNAUTHORIZED"
    assert http.get(f"{STREAM.format(session_id)}?token={token}").status_code == 200  # its own session: yes
    assert stream_token(http, other_key, session_id).status_code == 404  # another tenant's session


def test_a_stream_token_expires_after_five_minutes(stack, http, monkeypatch):
    tenant, key = stack.tenant_with_key()
    session_id = new_session(http, key)
    finished_turn(tenant, session_id)
    clock = Clock(monkeypatch)
    issued = stream_token(http, key, session_id).json()["data"]
    from svc_core.platform import timeutil
    assert issued["expires_at"] == timeutil.iso(clock.value + 300)
    clock.travel(290)
    assert http.get(issued["streamUrl"]).status_code == 200
    clock.travel(20)
    expired = http.get(issued["streamUrl"])
    assert expired.status_code == 401 and "expired" in expired.json()["error"]["message"]


def test_a_stream_token_ends_with_the_api_key_it_was_issued_for(stack, http):
    tenant, admin_key = stack.tenant_with_key()
    issued_key = stack.new_key(tenant, ["chat:read"])
    session_id = new_session(http, admin_key)
    finished_turn(tenant, session_id)
    url = stream_token(http, issued_key["key"], session_id).json()["data"]["streamUrl"]
    assert http.get(url).status_code == 200
    assert http.delete(f"/api/v1/api-keys/{issued_key['id']}", headers=auth(admin_key)).status_code == 200
    revoked = http.get(url)
    assert revoked.status_code == 401 and "revoked" in revoked.json()["error"]["message"]


def test_an_access_token_as_query_token_is_refused(stack, http):
    from svc_core.auth import tokens
    tenant, key = stack.tenant_with_key()
    session_id = new_session(http, key)
    finished_turn(tenant, session_id)
    access, _ = tokens.mint(subject="key_x", tenant_id=tenant, scopes=["chat:read"], credential="api_key",
                            extra={"chs": session_id})
    response = http.get(f"{STREAM.format(session_id)}?token={access}")
    assert response.status_code == 401


# ---- the buffered answer, disconnects ----------------------------------------------------------

def test_the_buffered_handler_gives_the_same_events(stack, http, servers):
    tenant, key = stack.tenant_with_key()
    session_id = new_session(http, key)
    finished_turn(tenant, session_id)
    finished_turn(tenant, session_id, 7, message_id="msg_second")
    with httpx.Client(base_url=servers.buffered_url, timeout=TIMEOUT) as buffered:
        for headers in ({}, {"Last-Event-ID": "3"}):
            streamed_response = http.get(STREAM.format(session_id), headers={**auth(key), **headers})
            buffered_response = buffered.get(STREAM.format(session_id), headers={**auth(key), **headers})
            assert buffered_response.status_code == 200
            assert "transfer-encoding" not in buffered_response.headers  # one body, with its length
            assert buffered_response.headers["content-type"].startswith("text/event-stream")
            assert buffered_response.headers["cache-control"] == "no-cache"
            assert buffered_response.text == streamed_response.text
        assert buffered.get(STREAM.format(session_id), headers={**auth(key), "Last-Event-ID": "12"}).status_code == 204
        assert buffered.get(STREAM.format(session_id), headers={**auth(key), "Last-Event-ID": "x"}).status_code == 400
        _, seen = read_stream(buffered, STREAM.format(session_id), {**auth(key), "Last-Event-ID": "9"})
        assert ids_of(seen) == [10, 11, 12]


def test_the_buffered_handler_stops_at_its_time_budget(stack, http, servers, setting):
    tenant, key = stack.tenant_with_key()
    session_id = new_session(http, key)
    set_turn(tenant, session_id, first=1, active=True, last_event_id=0)
    chat_events_table.append(tenant, session_id, turn_events(1)[:2])  # a turn that stalls after two events
    setting("CHAT_STREAM_BUFFERED_SECONDS", "0.3")
    with httpx.Client(base_url=servers.buffered_url, timeout=TIMEOUT) as buffered:
        response, seen = read_stream(buffered, STREAM.format(session_id), auth(key))
    assert response.status_code == 200 and ids_of(seen) == [1, 2]


def test_a_client_that_goes_away_stops_the_stream(stack, http, servers, monkeypatch, setting):
    """The gateway tells the app the client is gone; its polling stops and nothing fails."""
    tenant, key = stack.tenant_with_key()
    session_id = new_session(http, key)
    set_turn(tenant, session_id, first=1, active=True, last_event_id=0)
    chat_events_table.append(tenant, session_id, turn_events(1)[:1])
    polls = {"count": 0}
    original = chat_events_table.after

    def counted(tenant_id, sid, *args, **kwargs):
        if sid == session_id:
            polls["count"] += 1
        return original(tenant_id, sid, *args, **kwargs)

    monkeypatch.setattr(chat_events_table, "after", counted)
    # No heartbeat within the test: only the gateway's notice of the disconnect can stop the stream
    # (not a failed write).
    setting("CHAT_STREAM_HEARTBEAT_SECONDS", "120")
    log_before = len(servers.log)
    with httpx.Client(base_url=servers.url, timeout=TIMEOUT) as client:
        with client.stream("GET", STREAM.format(session_id), headers=auth(key)) as response:
            first = next(EventSource(response).iter_sse())
            assert first.id == "1"
    # Closed: the stream must stop polling (it would poll every 20 ms for 300 s otherwise).
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        before = polls["count"]
        time.sleep(0.5)
        if polls["count"] == before:
            break
    else:
        pytest.fail("the stream kept polling after its client went away")
    assert any("(streamed)" in line for line in servers.log[log_before:])
    assert not any("Traceback" in line for line in servers.log[log_before:])


def test_a_failure_once_streaming_is_an_error_event_without_an_id_and_the_end(stack, http, monkeypatch):
    tenant, key = stack.tenant_with_key()
    session_id = new_session(http, key)
    set_turn(tenant, session_id, first=1, active=True, last_event_id=0)
    chat_events_table.append(tenant, session_id, turn_events(1)[:2])
    original, calls = chat_events_table.after, []

    def failing(*args, **kwargs):
        calls.append(args)
        if len(calls) > 1:
            raise RuntimeError("DynamoDB is unreachable (this text must not reach the client)")
        return original(*args, **kwargs)

    monkeypatch.setattr(chat_events_table, "after", failing)
    with http.stream("GET", STREAM.format(session_id), headers=auth(key)) as response:
        assert response.status_code == 200
        raw = response.read().decode()
    blocks = [b for b in raw.split("\n\n") if b.strip()]
    assert blocks[-1].startswith("event: error\ndata: ") and "id:" not in blocks[-1]
    error = json.loads(blocks[-1].split("data: ", 1)[1])
    assert error["code"] == "INTERNAL_ERROR" and "DynamoDB" not in raw
    assert [line for line in raw.splitlines() if line.startswith("id: ")] == ["id: 1", "id: 2"]


# ---- end to end: a message answered by the offline model ---------------------------------------

def test_a_message_is_answered_by_the_offline_model_and_streamed(stack, http):
    from svc_core.domain import chat_turns
    from svc_core.platform.config import settings
    from tests.support.queues import drain_queue
    _, key = stack.tenant_with_key()
    session_id = new_session(http, key)
    sent = http.post(f"/api/v1/chat/sessions/{session_id}/messages", json={"content": "Say hello."},
                     headers=auth(key))
    assert sent.status_code == 202, sent.text
    assistant_id = sent.json()["data"]["assistantMessage"]["id"]
    queue_name = settings().chat_turn_queue_url.rsplit("/", 1)[-1]
    bodies = drain_queue(queue_name)
    assert len(bodies) == 1
    worker = threading.Thread(target=chat_turns.process, args=(json.dumps(bodies[0]), 1))
    seen = []
    with http.stream("GET", STREAM.format(session_id), headers=auth(key)) as response:
        assert response.status_code == 200
        worker.start()  # the answer is written while the client is connected
        seen = [(int(e.id), e.event, e.json()) for e in EventSource(response).iter_sse()]
    worker.join(timeout=30)
    names = [name for _, name, _ in seen]
    assert names[0] == "message_start" and names[-1] == "done" and "content_delta" in names
    assert ids_of(seen) == list(range(1, len(seen) + 1))
    assert all(data["messageId"] == assistant_id for _, _, data in seen)
    assert seen[0][2]["offline"] is True
    text = "".join(data["text"] for _, name, data in seen if name == "content_delta")
    assert "offline" in text.lower()
    stored = http.get(f"/api/v1/chat/sessions/{session_id}", headers=auth(key)).json()["data"]
    assert stored["lastEventId"] == len(seen) and stored["activeTurn"] is None


# ---- the AWS entry point: run.sh under uvicorn, as the Lambda Web Adapter runs it --------------

@pytest.fixture
def web_adapter_app(stack, servers):
    """functions/chat_stream/run.sh started as the adapter starts it (its port in AWS_LWA_PORT, the
    function's directory as the working directory, the shared layer importable), with the stack's
    environment."""
    import os
    import subprocess
    import sys
    import tempfile

    from devstack.processes import ChildExited, start_listening_child
    from devstack.template import ROOT
    code = ROOT / "functions" / "chat_stream"
    env = {**os.environ, "LAMBDA_TASK_ROOT": str(code), "LAMBDA_RUNTIME_DIR": "",
           "PATH": f"{os.path.dirname(sys.executable)}:{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(ROOT / "layers" / "shared" / "python")}
    log = tempfile.TemporaryFile()
    try:  # ready as the adapter's readiness check (AWS_LWA_READINESS_CHECK_PROTOCOL tcp) sees it: the port listens
        process, port = start_listening_child(
            lambda port: ["env", f"AWS_LWA_PORT={port}", "sh", str(code / "run.sh")], "run.sh",
            cwd=code, env=env, stdout=subprocess.DEVNULL, stderr=log)
    except (ChildExited, TimeoutError) as exc:
        log.seek(0)
        pytest.fail(f"{exc}: {log.read().decode()[-2000:]}")
    url = f"http://127.0.0.1:{port}"
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()


def test_run_sh_serves_the_stream_with_the_request_context_the_adapter_passes(stack, http, web_adapter_app):
    tenant, key = stack.tenant_with_key()
    session_id = new_session(http, key)
    events = finished_turn(tenant, session_id)
    context = {"requestId": "lwa-request-1", "stage": "v1", "resourcePath": STREAM.format("{id}"),
               "identity": {"sourceIp": "198.51.100.7"}}
    headers = {**auth(key), "x-amzn-request-context": json.dumps(context)}
    with httpx.Client(base_url=web_adapter_app, timeout=TIMEOUT) as adapter:
        response, seen = read_stream(adapter, STREAM.format(session_id), headers)
        assert response.status_code == 200 and response.headers["x-request-id"] == "lwa-request-1"
        assert response.headers["content-type"].startswith("text/event-stream")
        assert ids_of(seen) == [e["id"] for e in events]
        missing = adapter.get(STREAM.format(MISSING_SESSION), headers=headers)
        assert missing.status_code == 404 and missing.json()["meta"]["request_id"] == "lwa-request-1"
        assert adapter.get("/api/v1/projects", headers=headers).status_code == 404  # this app serves one route


def test_the_address_the_ip_allowlist_checks_is_api_gateways(stack, http, web_adapter_app):
    """The allowlist binds API keys to the sourceIp of the request context, never the socket's peer
    (the adapter's own loopback) nor a client's X-Forwarded-For."""
    from svc_core.adapters import aws
    from svc_core.adapters.dynamo import values
    from svc_core.platform.config import settings
    tenant, key = stack.tenant_with_key()
    session_id = new_session(http, key)
    finished_turn(tenant, session_id)
    token = stream_token(http, key, session_id).json()["data"]["token"]
    aws.client("dynamodb").update_item(
        TableName=settings().tenants_table, Key={"id": {"S": tenant}},
        UpdateExpression="SET settings = :s", ExpressionAttributeValues=values(s={"ipAllowlist": ["198.51.100.0/24"]}))
    stack.forget_caches()

    def context(ip: str) -> str:
        return json.dumps({"requestId": f"lwa-{ip}", "identity": {"sourceIp": ip}})

    with httpx.Client(base_url=web_adapter_app, timeout=TIMEOUT) as adapter:
        allowed = adapter.get(STREAM.format(session_id), headers={**auth(key), "x-amzn-request-context":
                                                                   context("198.51.100.9")})
        refused = adapter.get(STREAM.format(session_id), headers={**auth(key), "X-Forwarded-For": "198.51.100.9",
                                                                   "x-amzn-request-context": context("203.0.113.5")})
        # The key's stream token (issued before the allowlist was set) is bound by the same allowlist.
        by_token = [adapter.get(f"{STREAM.format(session_id)}?token={token}",
                                headers={"x-amzn-request-context": context(ip)}).status_code
                    for ip in ("198.51.100.9", "203.0.113.5")]
    assert allowed.status_code == 200
    assert refused.status_code == 403 and refused.json()["error"]["details"]["sourceIp"] == "203.0.113.5"
    assert by_token == [200, 403]


def test_a_keys_last_use_on_the_stream_records_api_gateways_address(stack, http, web_adapter_app):
    """The stream's own entry point records a key's last-use address as the REST routes do: the
    request context's sourceIp, not the X-Forwarded-For a client sends."""
    from svc_core.data import api_keys_table
    tenant, key = stack.tenant_with_key()
    session_id = new_session(http, key)
    finished_turn(tenant, session_id)
    streaming_only = stack.new_key(tenant)  # used on the stream and nowhere else
    context = json.dumps({"requestId": "lwa-last-use", "identity": {"sourceIp": "198.51.100.7"}})
    with httpx.Client(base_url=web_adapter_app, timeout=TIMEOUT) as adapter:
        response, _ = read_stream(adapter, STREAM.format(session_id), {
            **auth(streaming_only["key"]), "X-Forwarded-For": "203.0.113.5", "x-amzn-request-context": context})
    assert response.status_code == 200
    assert api_keys_table.get(tenant, streaming_only["id"])["lastUsedIp"] == "198.51.100.7"


# ---- the gateway's streaming, with apps that misbehave -----------------------------------------

class _Fn:
    def __init__(self, app) -> None:
        self._app = app

    def asgi_app(self):
        return self._app


def _toy_gateway(app) -> Gateway:
    router = Router([("GET", "/toy", "ToyFunction")], {("GET", "/toy")})
    return Gateway(router, {"ToyFunction": _Fn(app)}, port=0, log=lambda _m: None).start()


def test_the_gateway_survives_apps_that_fail_before_or_during_a_stream():
    async def fails_at_once(scope, receive, send):
        raise RuntimeError("boom")

    async def fails_midway(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"first", "more_body": True})
        raise RuntimeError("boom")

    for app in (fails_at_once, fails_midway):
        gateway = _toy_gateway(app)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{gateway.port}", timeout=TIMEOUT) as client:
                for _ in range(2):  # and again: the gateway is still serving
                    if app is fails_at_once:
                        answer = client.get("/toy")
                        assert answer.status_code == 502 and answer.json()["error"]["code"] == "INTERNAL_ERROR"
                    else:
                        with client.stream("GET", "/toy") as response:
                            chunks = response.iter_raw()
                            assert next(chunks) == b"first"
                            with pytest.raises(httpx.RemoteProtocolError):  # cut short, not a clean end
                                list(chunks)
        finally:
            gateway.stop()
