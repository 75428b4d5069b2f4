"""An HTTP proxy on loopback that relays every request to one upstream server, the answer's body
passed on chunk by chunk as it arrives (a stream stays a stream); the base of the tests' proxies
(model_proxy.py records what model servers report, dropping_proxy.py cuts streams)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

import httpx

from devstack.loopback_server import LoopbackHTTPServer

HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "content-encoding"}


class RelayProxy:
    def __init__(self, upstream: str, timeout: float = 60) -> None:
        self.upstream = upstream.rstrip("/")
        self.lock = threading.Lock()
        self.http = httpx.Client(timeout=timeout)
        self._server = LoopbackHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self):
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self.http.close()

    def handle(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        """One request (the subclasses' hook): relayed as it is."""
        self.relay(handler, body)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _any(self) -> None:
                proxy.handle(self, self.rfile.read(int(self.headers.get("content-length") or 0)))

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _any

        return Handler

    def upstream_headers(self, handler: BaseHTTPRequestHandler) -> dict[str, str]:
        return {k: v for k, v in handler.headers.items() if k.lower() not in HOP_HEADERS}

    def relay(self, handler: BaseHTTPRequestHandler, body: bytes, *,
              cut_after_events: int | None = None) -> tuple[int, bytes]:
        """Relay the request; the answer's status and the bytes passed on (all of them, or up to the
        end of the `cut_after_events`th server-sent event, where the connection is cut)."""
        request = self.http.build_request(handler.command, self.upstream + handler.path, content=body or None,
                                          headers=self.upstream_headers(handler))
        response = self.http.send(request, stream=True)
        seen = bytearray()
        try:
            handler.send_response(response.status_code)
            for name, value in response.headers.items():
                if name.lower() not in HOP_HEADERS:
                    handler.send_header(name, value)
            handler.send_header("connection", "close")   # the body ends when the connection does
            handler.end_headers()
            for chunk in response.iter_raw():
                if cut_after_events is not None and seen.count(b"\n\n") >= cut_after_events:
                    break
                seen += chunk
                handler.wfile.write(chunk)
                handler.wfile.flush()
        finally:
            response.close()
        handler.close_connection = True
        return response.status_code, bytes(seen)
