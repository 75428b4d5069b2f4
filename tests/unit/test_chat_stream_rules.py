"""The chat stream's rules (svc_core/domain/chat_stream.py) with the events table and the session
read replaced by in-memory stand-ins: where a stream starts, when it ends, what it looks like."""

from __future__ import annotations

import json

import pytest

from svc_core.auth.context import TenantContext
from svc_core.auth.principal import Principal
from svc_core.domain import chat_stream
from svc_core.platform.errors import NotFound, ValidationFailed

TENANT, SESSION, MESSAGE = "ten_a", "chs_a", "msg_a"


def session(last: int = 0, latest_first: int | None = None, active_first: int | None = None) -> dict:
    def turn(first: int | None) -> dict | None:
        return {"messageId": MESSAGE, "firstEventId": first} if first is not None else None
    return {"id": SESSION, "lastEventId": last, "latestTurn": turn(latest_first), "activeTurn": turn(active_first)}


@pytest.mark.parametrize("stored, last_event_id, expected", [
    (session(), None, None),                                   # no turn yet: 204
    (session(), 0, None),
    (session(6, latest_first=1), None, 0),                     # the newest turn, whole
    (session(12, latest_first=7), None, 6),
    (session(12, latest_first=7), 3, 3),                       # resume, across turns
    (session(12, latest_first=7), 12, None),                   # everything seen, no turn in progress
    (session(12, latest_first=7), 99, None),
    (session(12, latest_first=13, active_first=13), 12, 12),   # a turn in progress is always streamed
    (session(12, latest_first=13, active_first=13), None, 12),
    (session(12, latest_first=13, active_first=13), 40, 40),
])
def test_where_a_stream_starts(stored, last_event_id, expected):
    assert chat_stream.start_after(stored, last_event_id) == expected


@pytest.mark.parametrize("header, query, expected", [
    (None, None, None), ("0", None, 0), ("42", "7", 42), (None, "7", 7), ("9" * 18, None, int("9" * 18)),
    ("", None, None), ("5", "", 5), ("", "7", 7),   # an empty one is none: as if not sent
])
def test_last_event_id_from_the_header_then_the_query(header, query, expected):
    assert chat_stream.parse_last_event_id(header, query) == expected


@pytest.mark.parametrize("header, query, field", [
    ("-1", None, "last-event-id"), ("1.0", None, "last-event-id"),
    (" 1", None, "last-event-id"), ("٣", None, "last-event-id"), ("9" * 19, None, "last-event-id"),
    (None, "abc", "lastEventId"), ("x", "1", "last-event-id"),
    ("5", "x", "lastEventId"),   # the header wins, but a bad query is still refused
])
def test_a_bad_last_event_id_is_refused_naming_where_it_came_from(header, query, field):
    with pytest.raises(ValidationFailed) as caught:
        chat_stream.parse_last_event_id(header, query)
    assert caught.value.details["fields"][0]["field"] == field


def test_the_wire_format():
    event = {"id": 7, "event": "content_delta", "data": {"messageId": MESSAGE, "text": "a\nb ü"}}
    text = chat_stream.format_event(event)
    assert text == 'id: 7\nevent: content_delta\ndata: {"messageId":"msg_a","text":"a\\nb ü"}\n\n'
    # Lines that end no event block: no client sees an empty event for them.
    assert chat_stream.retry_line() == "retry: 2000\n" and chat_stream.HEARTBEAT == ": keep-alive\n"
    failure = chat_stream.failure_event()
    assert failure.startswith("event: error\ndata: ") and "id:" not in failure
    assert json.loads(failure.split("data: ", 1)[1])["code"] == "INTERNAL_ERROR"


class Store:
    """The events table's `after` and the session read, in memory."""

    def __init__(self, monkeypatch, stored: dict) -> None:
        self.events: list[dict] = []
        self.session = stored
        self.session_reads = 0
        monkeypatch.setattr(chat_stream.chat_events_table, "after", self.after)
        monkeypatch.setattr(chat_stream.chat, "get_session", self.get_session)

    def after(self, tenant_id, session_id, after_id, limit=200):
        assert (tenant_id, session_id) == (TENANT, SESSION)
        return [e for e in self.events if e["id"] > after_id][:limit]

    def get_session(self, ctx, session_id):
        self.session_reads += 1
        if self.session is None:
            raise NotFound()
        return dict(self.session)

    def add(self, first: int, names: list[str]) -> None:
        self.events += [{"id": first + i, "event": name, "data": {"messageId": MESSAGE}} for i, name in enumerate(names)]


def context() -> TenantContext:
    principal = Principal(subject="key_a", tenant_id=TENANT, scopes=frozenset({"chat:read"}), credential="api_key",
                          token_id="j")
    return TenantContext(tenant_id=TENANT, principal=principal, request_id="r")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_stream_ends_after_done_when_nothing_later_is_waiting(monkeypatch):
    store = Store(monkeypatch, session(6, latest_first=1))
    store.add(1, ["message_start", "content_delta", "usage", "message_stop", "done"])
    follower = chat_stream.open_stream(context(), SESSION, None)
    assert [e["id"] for e in follower.step()] == [1, 2, 3, 4, 5] and follower.finished


def test_a_done_followed_by_a_later_turn_goes_on_to_it(monkeypatch):
    store = Store(monkeypatch, session(10, latest_first=6))
    store.add(1, ["message_start", "done", "message_start", "content_delta", "done"])
    follower = chat_stream.Follower(context(), SESSION, 0)
    monkeypatch.setattr(chat_stream, "BATCH", 2)  # the done ends a full batch: more may wait
    assert [e["id"] for e in follower.step()] == [1, 2] and not follower.finished
    assert [e["id"] for e in follower.step()] == [3, 4] and not follower.finished
    assert [e["id"] for e in follower.step()] == [5] and follower.finished


def test_an_idle_stream_looks_at_the_session_at_most_once_a_second_and_ends_with_the_turn(monkeypatch):
    store = Store(monkeypatch, session(5, latest_first=6, active_first=6))
    clock = Clock()
    follower = chat_stream.Follower(context(), SESSION, 5)
    for _ in range(10):  # 10 polls within a second: one session read
        assert follower.step(clock) == [] and not follower.finished
        clock.sleep(0.05)
    assert store.session_reads == 1
    store.session = session(5, latest_first=6)  # the turn ended, nothing stored after 5
    clock.sleep(1)
    assert follower.step(clock) == [] and follower.finished


def test_an_idle_stream_whose_turn_ended_with_events_reads_them_before_it_ends(monkeypatch):
    store = Store(monkeypatch, session(5, latest_first=6, active_first=6))
    clock = Clock()
    follower = chat_stream.Follower(context(), SESSION, 5)
    assert follower.step(clock) == []
    store.session = session(7, latest_first=6)  # ended at 7, past the cursor: the stream must not end
    clock.sleep(2)
    assert follower.step(clock) == [] and not follower.finished
    store.add(6, ["message_start", "done"])
    assert [e["id"] for e in follower.step(clock)] == [6, 7] and follower.finished


def test_a_deleted_session_ends_an_idle_stream(monkeypatch):
    store = Store(monkeypatch, session(5, latest_first=6, active_first=6))
    follower = chat_stream.Follower(context(), SESSION, 5)
    store.session = None
    assert follower.step(Clock()) == [] and follower.finished


def test_the_buffered_answer_collects_until_done_or_its_budget(monkeypatch):
    store = Store(monkeypatch, session(0, latest_first=1, active_first=1))
    store.add(1, ["message_start", "content_delta"])
    clock = Clock()
    follower = chat_stream.Follower(context(), SESSION, 0)
    events, _ = chat_stream.collect(follower, 2.0, sleep=clock.sleep, clock=clock)
    assert [e["id"] for e in events] == [1, 2] and not follower.finished
    assert 2.0 <= clock.now - 1000.0 < 2.2  # it waited out its budget, polling, never sleeping past it
    store.add(3, ["done"])
    assert [e["id"] for e in chat_stream.collect(follower, 2.0, sleep=clock.sleep, clock=clock)[0]] == [3]
    assert follower.finished
