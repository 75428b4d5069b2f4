"""A route's answer with its own status, type and body (a 202, a 204, an event stream), and the API
Gateway proxy answer every route's result becomes."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

JSON = "application/json"
EVENT_STREAM = "text/event-stream"  # a stream route's answer (svc_core.http.streamed): it takes a stream slot


@dataclass
class Response:
    status_code: int
    content_type: str | None = JSON  # None: no Content-Type (a response without a body)
    body: str | bytes = ""
    headers: dict[str, str] = field(default_factory=dict)

    def to_proxy(self) -> dict[str, Any]:
        """The REST API proxy integration's answer (multi-value headers, bytes in base64)."""
        body, encoded = self.body, False
        if isinstance(body, bytes):
            body, encoded = base64.b64encode(body).decode(), True
        headers = {"Content-Type": [self.content_type]} if self.content_type else {}
        for name, value in self.headers.items():
            headers[name] = [value]
        return {"statusCode": self.status_code, "multiValueHeaders": headers, "body": body, "isBase64Encoded": encoded}
