"""Secrets Manager values cached per container for a few minutes.

Powertools Parameters does this too but imports boto3 (see aws.py); this is the few lines of
it we need. A rotated secret is picked up when its cache entry ages out.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from svc_core.adapters import aws
from svc_core.platform import snapshot
from svc_core.platform.config import settings

_cache: dict[str, tuple[float, Any]] = {}
_lock = threading.Lock()


def get_json_secret(secret_id: str, *, force_fetch: bool = False) -> Any:
    now = time.monotonic()
    hit = _cache.get(secret_id)
    if hit and not force_fetch and now - hit[0] < settings().secrets_cache_seconds:
        return hit[1]
    with _lock:
        raw = aws.client("secretsmanager").get_secret_value(SecretId=secret_id)["SecretString"]
        value = json.loads(raw)
        _cache[secret_id] = (now, value)
        return value


@snapshot.forget_on_restore  # no secret read before a snapshot outlives the restore
def clear() -> None:
    _cache.clear()
