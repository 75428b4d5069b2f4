"""Chat through the client library and the CLI against the local stack over real HTTP: the turn's
typed events streamed as the worker stores them, resumption after a connection cut mid-stream
(the server's Last-Event-ID semantics, for real), the async client, another tenant's session,
and `svc chat`, one-shot and interactive."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from click.testing import CliRunner

from svc_client import (
    AsyncClient,
    Client,
    ContentDelta,
    Done,
    MessageStart,
    MessageStop,
    NotFound,
    Usage,
)
from svc_client.cli import cli


@pytest.fixture
def svc(account):
    with Client(account["baseUrl"], api_key=account["key"]) as client:
        yield client


def answer_text(events) -> str:
    return "".join(e.text for e in events if isinstance(e, ContentDelta))


def test_a_turn_streams_as_typed_events_and_matches_the_stored_answer(svc):
    project = svc.projects.create("Chatty")
    session = svc.chat.create_session(title="First", project_id=project.id)
    sent = svc.chat.send(session.id, "Say hello.")
    assert sent.assistant_message.status == "pending"
    assert sent.stream_url.endswith(f"/chat/sessions/{session.id}/stream")
    events = list(svc.chat.stream(session.id))
    assert isinstance(events[0], MessageStart) and events[0].message_id == sent.assistant_message.id
    assert isinstance(events[-1], Done) and events[-1].status == "completed"
    assert any(isinstance(e, Usage) for e in events) and any(isinstance(e, MessageStop) for e in events)
    ids = [e.id for e in events]
    assert ids == list(range(1, len(events) + 1))
    stored = svc.chat.get_session(session.id)
    assert stored.active_turn is None and stored.last_event_id == ids[-1]
    assistant = stored.messages[-1]
    assert assistant.status == "completed" and assistant.content == answer_text(events)
    page = svc.chat.list_messages(session.id, limit=1)
    assert [m.id for m in page.items] == [sent.user_message.id] and page.next_cursor
    assert [m.id for m in svc.chat.iter_messages(session.id, limit=1)] == [m.id for m in stored.messages]
    assert answer_text(events).startswith("[offline model]")

    # Resuming after an id gives exactly the rest; after the last one there is nothing (204).
    assert [e.id for e in svc.chat.stream(session.id, last_event_id=2)] == ids[2:]
    assert list(svc.chat.stream(session.id, last_event_id=ids[-1])) == []

    # The next turn's ids go on from there.
    svc.chat.send(session.id, "Again.")
    second = list(svc.chat.stream(session.id))
    assert second[0].id == ids[-1] + 1 and isinstance(second[-1], Done)


class CutAfter(httpx.HTTPTransport):
    """A real transport whose first stream answer breaks after `events` events, as a dropped
    connection would: the client must resume with Last-Event-ID."""

    def __init__(self, events: int) -> None:
        super().__init__()
        self.events, self.cut, self.last_event_ids = events, False, []

    def handle_request(self, request):
        response = super().handle_request(request)
        if not request.url.path.endswith("/stream"):
            return response
        self.last_event_ids.append(request.headers.get("last-event-id"))
        if self.cut:
            return response
        self.cut = True
        transport = self

        class Cut(httpx.SyncByteStream):
            def __iter__(self):
                seen = 0
                for chunk in response.stream:
                    yield chunk
                    seen += chunk.count(b"\nid: ") + chunk.startswith(b"id: ")
                    if seen >= transport.events:
                        raise httpx.ReadError("connection reset (cut by the test)")

            def close(self):
                response.stream.close()

        return httpx.Response(response.status_code, headers=response.headers, stream=Cut(),
                              extensions=response.extensions)


def test_a_stream_cut_mid_turn_resumes_from_the_last_event_without_gaps_or_repeats(account):
    cut = CutAfter(events=2)
    with Client(account["baseUrl"], api_key=account["key"], transport=cut) as svc:
        session = svc.chat.create_session()
        svc.chat.send(session.id, "Tell me a long story about the sea, please.")
        events = list(svc.chat.stream(session.id))
        stored = svc.chat.get_session(session.id)
    assert [e.id for e in events] == list(range(1, stored.last_event_id + 1))
    assert isinstance(events[-1], Done)
    assert cut.last_event_ids[0] is None and cut.last_event_ids[1] == "2"
    assert answer_text(events) == stored.messages[-1].content


def test_another_tenants_session_is_not_found(svc, local_stack):
    session = svc.chat.create_session()
    with Client(local_stack.base_url, api_key=local_stack.credentials["apiKey"]) as other:
        with pytest.raises(NotFound):
            other.chat.get_session(session.id)
        with pytest.raises(NotFound):
            other.chat.list_messages(session.id)
        with pytest.raises(NotFound):
            list(other.chat.stream(session.id))


def test_the_async_client_streams_a_turn(account):
    async def main():
        async with AsyncClient(account["baseUrl"], api_key=account["key"]) as svc:
            session = await svc.chat.create_session()
            await svc.chat.send(session.id, "Hello there.")
            events = [e async for e in svc.chat.stream(session.id)]
            token = await svc.chat.stream_token(session.id)
            return events, token

    events, token = asyncio.run(main())
    assert isinstance(events[0], MessageStart) and isinstance(events[-1], Done)
    assert token.stream_url and token.expires_at


def test_svc_chat_streams_the_answer_one_shot_and_interactively(account, tmp_path, monkeypatch):
    monkeypatch.setenv("SVC_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("SVC_API_KEY", account["key"])
    runner = CliRunner()
    base = ["--base-url", account["baseUrl"]]
    with Client(account["baseUrl"], api_key=account["key"]) as svc:
        project = svc.projects.create("Terminal chat")

    one_shot = runner.invoke(cli, [*base, "chat", "--project", project.id, "-m", "Hello!", "-o", "json"])
    assert one_shot.exit_code == 0, one_shot.stderr
    lines = [json.loads(line) for line in one_shot.stdout.splitlines()]
    assert lines[0]["event"] == "session" and lines[0]["data"]["projectId"] == project.id
    assert [line["event"] for line in lines[1:]][0] == "message_start" and lines[-1]["event"] == "done"
    assert [line["id"] for line in lines[1:]] == list(range(1, len(lines)))

    interactive = runner.invoke(cli, [*base, "chat", "--session", lines[0]["data"]["id"]],
                                input="What is this?\nAnd this?\n/exit\n")
    assert interactive.exit_code == 0, interactive.stderr
    assert interactive.stdout.count("[offline model]") == 2
    with Client(account["baseUrl"], api_key=account["key"]) as svc:
        messages = svc.chat.get_session(lines[0]["data"]["id"]).messages
    assert [m.role for m in messages] == ["user", "assistant"] * 3
    assert [m.content for m in messages if m.role == "user"] == ["Hello!", "What is this?", "And this?"]
