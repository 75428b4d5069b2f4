"""A webhook consumer on loopback for the tests: a real HTTP server that verifies every delivery
with the Standard Webhooks reference library (the `standardwebhooks` package, not our code),
and webhook subscriptions written straight into the table (secrets sealed as the API seals them).
"""

from __future__ import annotations

import base64
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from standardwebhooks import Webhook

from devstack.loopback_server import LoopbackHTTPServer


def new_secret() -> str:
    return "whsec_" + base64.b64encode(os.urandom(24)).decode()


@dataclass
class Delivery:
    path: str
    headers: dict[str, str]
    body: bytes
    received_at: float
    payload: Any = None            # the verified JSON, or None
    verify_error: str | None = None


# respond(delivery number (1-based), delivery) -> (status, headers) or (status, headers, seconds to wait first)
Responder = Callable[[int, Delivery], tuple]


@dataclass
class Receiver:
    secret: str
    respond: Responder = lambda n, d: (200, {})
    deliveries: list[Delivery] = field(default_factory=list)

    @property
    def key(self) -> str | bytes:
        """What the reference library is given: a whsec_ secret as is (it base64-decodes a str), a
        plain secret as its UTF-8 bytes (bytes are the HMAC key itself), as docs/webhooks.md says."""
        return self.secret if self.secret.startswith("whsec_") else self.secret.encode("utf-8")

    def __post_init__(self) -> None:
        receiver = self
        self._arrived = threading.Condition()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                delivery = Delivery(self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.time())
                try:
                    delivery.payload = Webhook(receiver.key).verify(body, dict(self.headers))
                except Exception as exc:  # recorded, and the test says so
                    delivery.verify_error = f"{type(exc).__name__}: {exc}"
                with receiver._arrived:
                    receiver.deliveries.append(delivery)
                    number = len(receiver.deliveries)
                    receiver._arrived.notify_all()
                status, headers, *wait = receiver.respond(number, delivery)
                if wait:
                    time.sleep(wait[0])
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"ok")
                except OSError:
                    pass  # the client gave up (a timeout test)

            def log_message(self, *args):
                pass

        self.server = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hooks"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def wait_for(self, count: int, timeout: float = 5.0) -> list[Delivery]:
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self.deliveries) < count and time.monotonic() < deadline:
                self._arrived.wait(deadline - time.monotonic())
            return list(self.deliveries)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def register(tenant_id: str, url: str, secrets: list[tuple[str, float | None]] | str, *,
             events: list[str] | None = None, enabled: bool = True, failing_since: int | None = None) -> str:
    """A subscription written into the webhooks table as the API writes it; returns its id.
    secrets: one secret, or [(secret, expiresAt or None)], newest last."""
    from svc_core.adapters import sealing
    from svc_core.data import webhooks_table
    from svc_core.platform import ids, timeutil
    if isinstance(secrets, str):
        secrets = [(secrets, None)]
    webhook_id = ids.new_id("whk")
    context = {"purpose": "webhook-secret", "tenantId": tenant_id, "webhookId": webhook_id}
    now = timeutil.now()
    webhooks_table.create(tenant_id, {
        "id": webhook_id, "url": url, "events": events or ["*"], "enabled": enabled, "description": None,
        "secrets": [{"sealed": sealing.seal(secret.encode(), context), "created_at": timeutil.iso(now + i),
                     "expiresAt": expires} for i, (secret, expires) in enumerate(secrets)],
        "failingSince": failing_since, "disabledReason": None, "disabledAt": None, "version": 1,
        "created_at": timeutil.iso(now), "updated_at": timeutil.iso(now)})
    return webhook_id
