"""Chat without AWS: the bodies' rules, the messages list as the document says it, the coalescing of
text deltas (and the redaction of a secret cut between two of them), the conversation sent to the
model, and a tool input's clipping."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from devstack import openapi
from svc_core.data import chat_events_table, chat_messages_table
from svc_core.domain import chat_turns
from svc_core.domain.fields.chat import MAX_CONTENT
from svc_core.domain.models.chat import ChatMessageCreate, ChatSessionCreate


@pytest.mark.parametrize("content", ["", " ", "\u3000\n", "x" * (MAX_CONTENT + 1), "\ud800", 5, None])
def test_a_message_must_be_1_to_20000_characters_with_one_visible(content):
    with pytest.raises(ValidationError):
        ChatMessageCreate.model_validate({"content": content})


def test_a_message_of_exactly_the_limit_and_a_session_with_nothing_are_accepted():
    assert ChatMessageCreate.model_validate({"content": "é" * MAX_CONTENT}).projectId is None
    assert ChatSessionCreate.model_validate({}).model_dump() == {"title": None, "projectId": None, "agentId": None}
    assert ChatSessionCreate.model_validate({"title": "  Notes "}).title == "Notes"
    with pytest.raises(ValidationError):
        ChatSessionCreate.model_validate({"title": "Notes", "model": "x"})


def test_the_messages_list_is_documented_as_the_sessions_list_is():
    """GET /chat/sessions/{id}/messages takes the sessions list's query parameters (limit, the id
    cursor) and answers a page of messages under the same scope, or 404 for a session not the caller's."""
    paths = json.loads(openapi.DOCUMENT.read_text())["paths"]
    listed, sessions = paths["/api/v1/chat/sessions/{id}/messages"]["get"], paths["/api/v1/chat/sessions"]["get"]
    assert listed["operationId"] == "list_chat_messages" and "oldest first" in listed["summary"]
    assert [p for p in listed["parameters"] if p["in"] == "query"] == sessions["parameters"]
    assert [p["name"] for p in listed["parameters"] if p["in"] == "path"] == ["id"]
    assert listed["security"] == sessions["security"] == [{"bearerAuth": ["chat:read"]}]
    page = listed["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert page == "#/components/schemas/ChatMessagePageResponse"
    assert {"400", "401", "403", "404", "429", "500"} <= set(listed["responses"])


class Stored:
    def __init__(self, monkeypatch) -> None:
        self.events: list[dict] = []
        monkeypatch.setattr(chat_events_table, "append", lambda _t, _s, events: self.events.extend(events))

    @property
    def texts(self) -> list[str]:
        return [e["data"]["text"] for e in self.events if e["event"] == "content_delta"]


def events(secrets: dict[str, str] | None = None) -> chat_turns._Events:
    secrets = secrets or {}

    def redact(text):
        for value, name in secrets.items():
            text = text.replace(value, f"[secret {name}]")
        return text
    return chat_turns._Events("ten_A", "chs_1", "msg_1", 7, redact, lambda: secrets)


def test_deltas_are_coalesced_by_size_and_time_and_ids_follow_on(monkeypatch):
    stored = Stored(monkeypatch)
    clock = [100.0]
    monkeypatch.setattr(chat_turns.time, "monotonic", lambda: clock[0])
    out = events()
    out.text("first ")            # nothing written yet this turn: goes at once
    for _ in range(30):
        out.text("abcdefgh")      # 240 characters within a millisecond: one write at 200
    clock[0] += 0.05
    out.text("late")              # 40 ms since the last write: written
    out.emit("usage", {"inputTokens": 1})
    assert stored.texts == ["first ", "abcdefgh" * 25, "abcdefgh" * 5 + "late"]
    assert [e["id"] for e in stored.events] == [7, 8, 9, 10] and stored.events[-1]["event"] == "usage"
    assert all(e["data"]["messageId"] == "msg_1" for e in stored.events)
    assert out.content == "".join(stored.texts) and out.last_id == 10


def test_a_secret_cut_between_two_deltas_never_reaches_an_event(monkeypatch):
    stored = Stored(monkeypatch)
    monkeypatch.setattr(chat_turns.time, "monotonic", lambda: 1e9)   # every delta would go at once
    out = events({"hunter2-value": "db"})
    for piece in ("The password is hun", "ter2-va", "lue, keep it safe."):
        out.text(piece)
    out.flush(final=True)
    joined = "".join(stored.texts)
    assert "hunter2" not in joined and joined == "The password is [secret db], keep it safe."


def test_the_conversation_skips_failed_answers_and_merges_neighbours(monkeypatch):
    history = [
        {"id": "msg_0", "role": "assistant", "status": "completed", "content": "orphan"},
        {"id": "msg_1", "role": "user", "status": "completed", "content": "one"},
        {"id": "msg_2", "role": "assistant", "status": "failed", "content": "half"},
        {"id": "msg_3", "role": "user", "status": "completed", "content": "two"},
    ]
    monkeypatch.setattr(chat_messages_table, "newest", lambda *_a, **_k: (history, False))
    conversation = chat_turns._conversation("ten_A", "chs_1", {"id": "msg_4", "userMessageId": "msg_3"})
    assert conversation == [{"role": "user", "content": [{"text": "one"}, {"text": "two"}]}]


def test_a_long_tool_input_is_clipped_in_its_event():
    clipped = chat_turns._clipped({"path": "a.md", "content": "z" * 5000, "n": [1.5, "short"]})
    assert clipped["path"] == "a.md" and clipped["n"] == [1.5, "short"]
    assert clipped["content"].startswith("z" * chat_turns.MAX_STORED_INPUT) and "4000 more characters" in clipped["content"]
