"""The outbox publisher's rule: a batch of events goes into the event log, then onto the bus.

Every event is in its tenant's log (domain/events.record) before it is on the bus, so what a
webhook receives can already be read, replayed and streamed. The log writes are independent
conditional puts (a retried event writes nothing twice), made at once; the events kept go on the
bus in their order, as few PutEvents calls as its limits allow (adapters/event_bus.py).
"""

from __future__ import annotations

from typing import Any

from svc_core.adapters import event_bus
from svc_core.contracts.events import Event
from svc_core.domain import events
from svc_core.platform import parallel


def bus_entry(event: Event) -> dict[str, Any]:
    """An event's entry on the bus: detail-type = its type, detail = its envelope."""
    return event_bus.entry(event.type, event.to_json())


def publish(batch: list[Event]) -> list[str | None]:
    """Log each event, then put those logged on the bus; for each event, None when it is on the
    bus, else why not (an event whose log write failed is not put on the bus)."""
    written = parallel.each([lambda event=event: events.record(event) for event in batch])
    failed: list[str | None] = [f"event log: {type(w).__name__}: {w}" if isinstance(w, Exception) else None
                                for w in written]
    logged = [i for i, reason in enumerate(failed) if reason is None]
    for index, refused in zip(logged, event_bus.put([bus_entry(batch[i]) for i in logged]), strict=True):
        if refused:
            failed[index] = f"EventBridge refused it: {refused}"
    return failed
