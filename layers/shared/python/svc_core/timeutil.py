"""Time in one place, so tests can travel in time without sleeping."""

from __future__ import annotations

import time
from datetime import datetime, timezone


def now() -> float:
    return time.time()


def iso(epoch_seconds: float | int | None) -> str | None:
    if epoch_seconds is None:
        return None
    moment = datetime.fromtimestamp(epoch_seconds, timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
