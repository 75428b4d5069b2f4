"""Stand-ins for the service's cells on loopback, for the client libraries' tests of routing and retries:
real HTTP servers that answer each request with what a function of the test says, in the service's
envelope, and record every request they were sent (so a test counts them).

    with cell(lambda seen: wrong_region(other.url)) as us: ...
    closed_url(): the address of a port nothing listens on (a cell whose region is down)
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from devstack.loopback_server import LoopbackHTTPServer


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Answer:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


def data(value: Any, status: int = 200) -> Answer:
    return Answer(status, {"data": value, "meta": {"request_id": "req-1", "timestamp": "t"}})


def error(code: str, status: int, details: dict[str, Any] | None = None,
          headers: dict[str, str] | None = None) -> Answer:
    return Answer(status, {"error": {"code": code, "message": f"{code} said", "details": details or {}},
                           "meta": {"request_id": "req-err", "timestamp": "t"}}, dict(headers or {}))


def wrong_region(base_url: str, region: str = "eu-central-1") -> Answer:
    return error("WRONG_REGION", 421, {"region": region, "baseUrl": base_url, "tenantId": "ten_1"})


class CellServer:
    """Answers every request with answer(seen); `seen` lists the requests, in order."""

    def __init__(self, answer: Callable[[Seen], Answer]) -> None:
        self.answer = answer
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            # HTTP/1.0: the connection closes after each answer, so a stopped server is gone at once
            # (no kept-alive connection still served by its thread).
            def _serve(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw
                seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with server._lock:
                    server.seen.append(seen)
                reply = server.answer(seen)
                payload = json.dumps(reply.body).encode()
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

            def log_message(self, *args: Any) -> None:
                pass

        self._server = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def paths(self) -> list[str]:
        return [f"{s.method} {s.path}" for s in self.seen]

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def cell(answer: Callable[[Seen], Answer]) -> Iterator[CellServer]:
    server = CellServer(answer)
    try:
        yield server
    finally:
        server.stop()


def closed_url() -> str:
    """http://127.0.0.1:PORT where PORT was free a moment ago and nothing listens on it now: a
    connection there is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"
