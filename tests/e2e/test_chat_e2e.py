"""Chat on the local stack as a user runs it: real HTTP on loopback through the gateway, the turn
queued on ChatTurnQueue and answered by ChatTurnFunction, which the stack's SQS poller feeds."""

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
