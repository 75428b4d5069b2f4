"""Time in one place, so tests can travel in time without sleeping."""

from __future__ import annotations

import time
from datetime import UTC, datetime


def now() -> float:
    return time.time()


def iso(epoch_seconds: float | int | None) -> str | None:
    if epoch_seconds is None:
        return None
    moment = datetime.fromtimestamp(epoch_seconds, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def iso_after(now: float, previous: str) -> str:
    """The ISO time of now, or a millisecond later than `previous` if now does not pass it: an
    updated_at that guards a version must never repeat the stamp it replaces."""
    stamp = iso(now)
    while stamp <= previous:
        now += 0.001
        stamp = iso(now)
    return stamp
