"""A chat answer streamed into a real browser: headless Chromium's EventSource against the local
stack's gateway (the whole stack: chat API, turn queue, the worker with the offline model, the
stream function's ASGI app), with a reconnect that resumes by Last-Event-ID.

The test page is served at the gateway's own origin (Playwright fulfils that one URL), so the
EventSource request itself goes to the real gateway, authenticated by the stream token in its URL.
The cut is made at the stream function: a wrapper around its ASGI app stops the first stream after
three events as a dropped connection would (the send fails); the gateway then closes the socket
mid-response, and the browser's EventSource reconnects on its own with Last-Event-ID.
"""

from __future__ import annotations

import json

import httpx
import pytest

PAGE = """<!doctype html><meta charset="utf-8"><title>chat stream</title>
<script>
window.seen = []; window.opens = 0; window.failures = 0;
const source = new EventSource(STREAM_URL);
window.source = source;
source.onopen = () => window.opens++;
for (const name of ["message_start", "content_delta", "tool_use", "tool_result", "usage", "message_stop",
                    "error", "done"]) {
  source.addEventListener(name, (event) => {
    if (!(event instanceof MessageEvent)) { window.failures++; return; }  // a network error, not an event
    window.seen.push({id: Number(event.lastEventId), name, data: JSON.parse(event.data)});
  });
}
</script>"""


class CutFirstStream:
    """Wraps the stream function's ASGI app: remembers each request's Last-Event-ID, and drops the
    first stream after `after` events."""

    def __init__(self, app, after: int) -> None:
        self.app, self.after = app, after
        self.requests: list[dict[str, str | None]] = []

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        self.requests.append({"last-event-id": headers.get("last-event-id")})
        if len(self.requests) > 1:
            return await self.app(scope, receive, send)
        sent = 0

        async def cutting_send(message):
            nonlocal sent
            body = message.get("body", b"")
            if message["type"] == "http.response.body" and body.startswith(b"id: "):
                if sent == self.after:
                    raise ConnectionResetError("the test drops this stream")
                sent += 1
            await send(message)

        return await self.app(scope, receive, cutting_send)


@pytest.fixture
def cut_stream(local_stack, monkeypatch):
    function = local_stack.gateway.functions["ChatStreamFunction"]
    wrapper = CutFirstStream(function.asgi_app(), after=3)
    monkeypatch.setattr(function, "_asgi", wrapper)
    return wrapper


def test_a_chat_answer_streams_into_the_browser_and_resumes_after_a_cut(local_stack, page, cut_stream):
    base = local_stack.base_url
    auth = {"Authorization": f"Bearer {local_stack.credentials['apiKey']}"}
    with httpx.Client(base_url=base, timeout=10, headers=auth) as http:
        session_id = http.post("/api/v1/chat/sessions", json={"title": "Browser"}).json()["data"]["id"]
        issued = http.post(f"/api/v1/chat/sessions/{session_id}/stream-token")
        assert issued.status_code == 201, issued.text
        stream_url = issued.json()["data"]["streamUrl"]
        assert stream_url.startswith(f"{base}/api/v1/chat/sessions/{session_id}/stream?token=")
        sent = http.post(f"/api/v1/chat/sessions/{session_id}/messages", json={"content": "Hello, browser."})
        assert sent.status_code == 202, sent.text
        assistant_id = sent.json()["data"]["assistantMessage"]["id"]

        page.route(f"{base}/chat-test.html", lambda route: route.fulfill(
            status=200, content_type="text/html", body=PAGE.replace("STREAM_URL", json.dumps(stream_url))))
        page.goto(f"{base}/chat-test.html")
        # The stream ends after done; EventSource reconnects once more, gets 204, and stops for good.
        page.wait_for_function("window.source.readyState === EventSource.CLOSED", timeout=30_000)
        seen = page.evaluate("window.seen")
        opens = page.evaluate("window.opens")

        stored = http.get(f"/api/v1/chat/sessions/{session_id}").json()["data"]
    ids = [event["id"] for event in seen]
    assert ids == list(range(1, stored["lastEventId"] + 1)), ids  # every event once, none missed
    assert seen[0]["name"] == "message_start" and seen[-1]["name"] == "done"
    assert all(event["data"]["messageId"] == assistant_id for event in seen)
    assert "".join(e["data"]["text"] for e in seen if e["name"] == "content_delta").startswith("[offline model]")
    # The first stream carried no Last-Event-ID; the browser's reconnect after the cut sent 3 and got the
    # rest; its reconnect after done sent the last id and got 204 (EventSource then stops).
    assert [r["last-event-id"] for r in cut_stream.requests] == [None, "3", str(stored["lastEventId"])]
    assert opens == 2
    assert page.problems == []
