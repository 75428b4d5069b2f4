"""The response envelope: {data, meta} on success, {error, meta} on failure."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any


def utc_now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def meta(request_id: str) -> dict[str, str]:
    return {"request_id": request_id, "timestamp": utc_now_iso()}


def success_body(data: Any, request_id: str) -> str:
    return json.dumps({"data": data, "meta": meta(request_id)}, separators=(",", ":"))


def error_body(code: str, message: str, details: dict[str, Any] | None, request_id: str) -> str:
    error = {"code": code, "message": message, "details": details or {}}
    return json.dumps({"error": error, "meta": meta(request_id)}, separators=(",", ":"))
