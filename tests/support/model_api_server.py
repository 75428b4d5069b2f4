"""A model API on loopback for the provider tests: a real HTTP server that answers each POST with
the next of the replies it was given (recorded shapes of the OpenAI and Anthropic APIs, see
model_api_payloads.py), and records what it was sent.

A reply can be a whole JSON body, a server-sent event stream written piece by piece, or a failure:
a status with headers, a hang before anything is sent, a hang in the middle of a body, a body sent
a byte at a time. A hang waits on `release` (set when the server stops) and sets `hang_over` when
it ends, so a test can tell the client gave up while the server was still hanging.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from devstack.loopback_server import LoopbackHTTPServer


@dataclass
class Reply:
    status: int = 200
    body: Any = None                          # a dict / list is sent as JSON, bytes as they are
    headers: dict[str, str] = field(default_factory=dict)
    events: list[str] = field(default_factory=list)  # an SSE stream: each piece written and flushed alone
    hang_before: float = 0.0                  # seconds of silence before the status line
    hang_after_events: int | None = None      # a stream: hang (hang_seconds) after this many pieces
    hang_after_bytes: int | None = None       # a body: hang (hang_seconds) after this many bytes
    trickle_seconds: float = 0.0              # a body: one byte every this many seconds
    hang_seconds: float = 20.0


def json_reply(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status=status, body=body, headers=dict(headers or {}))


def sse_reply(events: list[str], **options: Any) -> Reply:
    return Reply(events=list(events), headers={"content-type": "text/event-stream", "cache-control": "no-cache"},
                 **options)


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: Any


class ModelAPIServer:
    def __init__(self, replies: list[Reply] | None = None) -> None:
        self.replies: list[Reply] = list(replies or [])
        self.received: list[Received] = []
        self.release = threading.Event()
        self.hang_over = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw
                server.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                reply = server.replies.pop(0) if server.replies else json_reply({"error": "no reply left"}, 500)
                try:
                    server._answer(self, reply)
                except OSError:
                    pass  # the client gave up (the timeout tests)

            def log_message(self, *args):
                pass

        self._server = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def _hang(self, seconds: float) -> None:
        self.release.wait(seconds)
        self.hang_over.set()

    def _answer(self, handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        if reply.hang_before:
            self._hang(reply.hang_before)
            return
        handler.send_response(reply.status)
        for name, value in reply.headers.items():
            handler.send_header(name, value)
        if reply.events:
            handler.send_header("Connection", "close")   # the stream's end is the connection's
            handler.end_headers()
            for number, piece in enumerate(reply.events):
                if reply.hang_after_events is not None and number == reply.hang_after_events:
                    self._hang(reply.hang_seconds)
                    return
                handler.wfile.write(piece.encode())
                handler.wfile.flush()
            return
        body = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
        if "content-type" not in {k.lower() for k in reply.headers}:
            handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if reply.trickle_seconds:
            for position in range(len(body)):
                handler.wfile.write(body[position:position + 1])
                handler.wfile.flush()
                if self.release.wait(reply.trickle_seconds):
                    return
            self.hang_over.set()
            return
        if reply.hang_after_bytes is not None:
            handler.wfile.write(body[:reply.hang_after_bytes])
            handler.wfile.flush()
            self._hang(reply.hang_seconds)
            return
        handler.wfile.write(body)

    def stop(self) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def serving(replies: list[Reply] | None = None) -> Iterator[ModelAPIServer]:
    server = ModelAPIServer(replies)
    try:
        yield server
    finally:
        server.stop()
