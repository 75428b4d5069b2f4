"""The EventBridge bus: events put on it in as few PutEvents calls as its limits allow.

A call carries at most 10 entries and 256 KB, counted as EventBridge counts an entry (the UTF-8
bytes of its Source, DetailType, Detail and Resources, 14 more with a Time). Entries go in their
order; one that would not fit beside those before it starts the next call, so an entry too large
to share a call still goes (alone). EventBridge answers per entry: an entry it refused, or every
entry of a call that failed whole (after the client's retries), is reported by its error code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from svc_core.adapters import aws
from svc_core.platform.config import settings

MAX_ENTRIES = 10
MAX_REQUEST_BYTES = 256 * 1024
_TIME_BYTES = 14


def entry(detail_type: str, detail: str) -> dict[str, Any]:
    """A PutEvents entry on the service's bus, from its source (detail: JSON text)."""
    cfg = settings()
    return {"EventBusName": cfg.event_bus_name, "Source": cfg.event_source, "DetailType": detail_type,
            "Detail": detail, "Resources": []}


def entry_size(put: dict[str, Any]) -> int:
    """An entry's size as EventBridge counts it against a call's 256 KB."""
    size = _TIME_BYTES if put.get("Time") is not None else 0
    for name in ("Source", "DetailType", "Detail"):
        size += len((put.get(name) or "").encode())
    return size + sum(len(resource.encode()) for resource in put.get("Resources") or ())


def calls(entries: Sequence[dict[str, Any]]) -> list[range]:
    """The entries' positions, cut into PutEvents calls in order: each call at most MAX_ENTRIES
    entries and MAX_REQUEST_BYTES (an entry larger than that alone)."""
    cut: list[range] = []
    start, size = 0, 0
    for index, put in enumerate(entries):
        grown = size + entry_size(put)
        if index > start and (index - start == MAX_ENTRIES or grown > MAX_REQUEST_BYTES):
            cut.append(range(start, index))
            start, grown = index, entry_size(put)
        size = grown
    if start < len(entries):
        cut.append(range(start, len(entries)))
    return cut


def put(entries: Sequence[dict[str, Any]]) -> list[str | None]:
    """Put the entries on the bus, in order; for each, None when EventBridge took it, else the
    error code it was refused with."""
    refused: list[str | None] = [None] * len(entries)
    client = aws.client("events")
    for call in calls(entries):
        try:
            answer = client.put_events(Entries=[entries[i] for i in call])
        except Exception as exc:  # the whole call failed: each of its events is tried again later
            for index in call:
                refused[index] = aws.error_code(exc) or type(exc).__name__
            continue
        if answer.get("FailedEntryCount"):
            # The answer's entries are in the request's order, an ErrorCode on each refused one.
            for index, result in zip(call, answer["Entries"], strict=True):
                refused[index] = result.get("ErrorCode")
    return refused
