"""Rotating a credential that keeps its earlier values for an overlap (API keys, webhook secrets).

One rule for both: a rotation's overlap caps the remaining life of every earlier value, not only
the one it replaces. A shorter overlap than an earlier rotation's shortens that one's too, a longer
one never lengthens it, and `overlapSeconds: 0` ends every earlier value at once (the emergency
rotation after a leak, whichever value leaked).

Each value is a dict whose `end` field (the caller names it) is its end as epoch seconds, or None
for a value that does not end (the current one of a credential without expiry).
"""

from __future__ import annotations

from typing import Any


def live(values: list[dict[str, Any]], now: float, end: str) -> list[dict[str, Any]]:
    """The values that still work at `now`: no end, or an end after now."""
    return [v for v in values if v.get(end) is None or v[end] > now]


def capped(values: list[dict[str, Any]], now: float, ends_by: int, end: str) -> list[dict[str, Any]]:
    """The live values, each ending at `ends_by` at the latest (ended ones included, with their new end)."""
    return [{**v, end: ends_by if v.get(end) is None else min(v[end], ends_by)} for v in live(values, now, end)]


def still_live(values: list[dict[str, Any]], now: float, ends_by: int, end: str) -> list[dict[str, Any]]:
    """The earlier values that still work after a rotation whose overlap ends at `ends_by`."""
    return live(capped(values, now, ends_by, end), now, end)


def rotated(values: list[dict[str, Any]], new: dict[str, Any], now: float, ends_by: int,
            end: str) -> list[dict[str, Any]]:
    """The new value first, then the earlier ones still live once capped at `ends_by`."""
    return [new] + still_live(values, now, ends_by, end)
