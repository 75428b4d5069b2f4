"""An HTTP proxy on loopback in front of the local stack that drops the first connection of each
chat stream after a few events, as a network would: what a client must survive by resuming with
Last-Event-ID. Everything else (preflights, JSON calls, the resumed streams) is relayed as it is."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler

from tests.support.relay_proxy import RelayProxy


class DroppingProxy(RelayProxy):
    def __init__(self, upstream: str, events_before_drop: int = 2) -> None:
        super().__init__(upstream)
        self.events_before_drop = events_before_drop
        self.streams: list[dict[str, str | None]] = []   # each stream request: its path and Last-Event-ID
        self._dropped: set[str] = set()

    def handle(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        path = handler.path.split("?")[0]
        if handler.command != "GET" or not path.endswith("/stream"):
            self.relay(handler, body)
            return
        with self.lock:
            self.streams.append({"path": path, "lastEventId": handler.headers.get("last-event-id")})
            first = path not in self._dropped
            self._dropped.add(path)
        self.relay(handler, body, cut_after_events=self.events_before_drop if first else None)
