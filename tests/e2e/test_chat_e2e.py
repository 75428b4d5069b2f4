"""Chat on the local stack as a user runs it: real HTTP on loopback through the gateway, the turn
queued on ChatTurnQueue and answered by ChatTurnFunction, which the stack's SQS poller feeds, and
the session's messages read back page by page."""

from __future__ import annotations

import time

import httpx


def client(stack) -> httpx.Client:
    return httpx.Client(base_url=stack.base_url, headers={"Authorization": f"Bearer {stack.credentials['apiKey']}"},
                        timeout=10)


def wait_for_turn_end(http: httpx.Client, session_id: str, limit_seconds: float = 60) -> dict:
    """The session once no turn is active (a generous deadline, not a timing assertion)."""
    deadline = time.monotonic() + limit_seconds
    while time.monotonic() < deadline:
        session = http.get(f"/api/v1/chat/sessions/{session_id}").json()["data"]
        if session["activeTurn"] is None:
            return session
        time.sleep(0.05)
    raise AssertionError("the turn did not end")


def test_a_message_is_answered_by_the_worker_the_poller_feeds(local_stack):
    from svc_core.data import chat_events_table
    with client(local_stack) as http:
        created = http.post("/api/v1/chat/sessions", json={"title": "Local"})
        assert created.status_code == 201, created.text
        session_id = created.json()["data"]["id"]
        started = http.post(f"/api/v1/chat/sessions/{session_id}/messages", json={"content": "Hello, stack."})
        assert started.status_code == 202, started.text
        busy = http.post(f"/api/v1/chat/sessions/{session_id}/messages", json={"content": "Me again."})
        session = wait_for_turn_end(http, session_id)
        # The messages list through the gateway, a page of one at a time: the same messages, oldest first.
        first = http.get(f"/api/v1/chat/sessions/{session_id}/messages", params={"limit": 1})
        assert first.status_code == 200, first.text
        second = http.get(f"/api/v1/chat/sessions/{session_id}/messages",
                          params={"limit": 1, "cursor": first.json()["data"]["nextCursor"]})
    assert first.json()["data"]["items"] == session["messages"][:1]
    assert second.json()["data"]["items"] == session["messages"][1:2]
    assert busy.status_code in (202, 409)   # 409 unless the first turn had already ended
    answer = session["messages"][1]
    assert (answer["role"], answer["status"], answer["model"]) == ("assistant", "completed", "offline")
    assert answer["content"].startswith("[offline model]") and "Hello, stack." in answer["content"]
    assert answer["usage"]["microCredits"] > 0 and answer["usage"]["estimated"] is True
    tenant_id = local_stack.credentials["tenantId"]
    events = chat_events_table.after(tenant_id, session_id, 0)
    assert events[0]["event"] == "message_start" and events[-1]["event"] == "done"
    assert "".join(e["data"]["text"] for e in events if e["event"] == "content_delta"
                   and e["data"]["messageId"] == answer["id"]) == answer["content"]


def test_a_client_that_leaves_mid_answer_does_not_stop_the_turn_and_its_usage_is_recorded(local_stack):
    """The stream's reader goes away after the first event while the model is still answering (held
    by the test until then): the worker finishes the turn, stores the whole answer and meters it."""
    import threading

    from svc_core.adapters.models import registry
    from svc_core.adapters.models.scripted import ScriptedProvider, text_answer
    from svc_core.data import usage_table

    release = threading.Event()
    text = "A long answer that is still being written when the reader leaves."

    class HeldStream(ScriptedProvider):
        def converse_stream(self, request):
            for index, event in enumerate(super().converse_stream(request)):
                if index == 3:  # messageStart and two text chunks out; the rest waits for the test
                    assert release.wait(30), "the test never released the model"
                yield event

    held = HeldStream([text_answer(text, input_tokens=40, output_tokens=12)],
                      model_id="anthropic.claude-haiku-4-5-20251001-v1:0")  # a priced model
    with registry.scripted(held), \
            client(local_stack) as http:
        session_id = http.post("/api/v1/chat/sessions", json={"title": "Leaving"}).json()["data"]["id"]
        sent = http.post(f"/api/v1/chat/sessions/{session_id}/messages", json={"content": "Tell me a lot."})
        assert sent.status_code == 202, sent.text
        assistant_id = sent.json()["data"]["assistantMessage"]["id"]
        with http.stream("GET", f"/api/v1/chat/sessions/{session_id}/stream") as stream:
            assert stream.status_code == 200
            for line in stream.iter_lines():
                if line == "event: message_start":
                    break   # leaving the block closes the connection mid-answer
        during = http.get(f"/api/v1/chat/sessions/{session_id}").json()["data"]
        release.set()
        session = wait_for_turn_end(http, session_id)
    assert during["activeTurn"] is not None   # the reader left while the turn was still going on
    answer = next(m for m in session["messages"] if m["id"] == assistant_id)
    assert (answer["status"], answer["content"]) == ("completed", text)
    assert (answer["usage"]["inputTokens"], answer["usage"]["outputTokens"]) == (40, 12)
    records = usage_table.records_for(local_stack.credentials["tenantId"], assistant_id)
    assert len(records) == 1 and records[0]["microCredits"] == answer["usage"]["microCredits"] > 0


def test_deleting_a_session_on_the_local_stack_deletes_its_messages_and_events(local_stack):
    from svc_core.data import chat_events_table, chat_messages_table
    tenant_id = local_stack.credentials["tenantId"]
    with client(local_stack) as http:
        session_id = http.post("/api/v1/chat/sessions", json={"title": "Short-lived"}).json()["data"]["id"]
        assert http.post(f"/api/v1/chat/sessions/{session_id}/messages", json={"content": "Hi."}).status_code == 202
        wait_for_turn_end(http, session_id)
        assert chat_events_table.after(tenant_id, session_id, 0)
        assert http.delete(f"/api/v1/chat/sessions/{session_id}").status_code == 200
        assert http.get(f"/api/v1/chat/sessions/{session_id}").status_code == 404
    deadline = time.monotonic() + 30   # the stack's stream poller hands the removal to ChatCleanupFunction
    while time.monotonic() < deadline and (chat_events_table.after(tenant_id, session_id, 0)
                                           or chat_messages_table.newest(tenant_id, session_id, 10)[0]):
        time.sleep(0.1)
    assert chat_events_table.after(tenant_id, session_id, 0) == []
    assert chat_messages_table.newest(tenant_id, session_id, 10) == ([], False)
