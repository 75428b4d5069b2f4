"""The outbox publisher's rule: a batch of events goes into the event log, then onto the bus.

Every event is in its tenant's log (domain/events.record) before it is on the bus, so what a
webhook receives can already be read, replayed and streamed. The log writes are conditional puts
(a retried event writes nothing twice) made one after another in the stream's order: the event
stream (domain/event_stream.py) follows the log as it is written, and `svc listen` forwards in that
order (written at once, a later event was logged, streamed and forwarded before an earlier one).
The events logged go on the bus in their order, as few PutEvents calls as its limits allow
(adapters/event_bus.py).
"""

from __future__ import annotations

from typing import Any

from svc_core.adapters import event_bus
from svc_core.contracts.events import Event
from svc_core.domain import events


def bus_entry(event: Event) -> dict[str, Any]:
    """An event's entry on the bus: detail-type = its type, detail = its envelope."""
    return event_bus.entry(event.type, event.to_json())


def publish(batch: list[Event]) -> list[str | None]:
    """Log each event, then put those logged on the bus; for each event, None when it is on the
    bus, else why not (an event whose log write failed is not put on the bus)."""
    failed: list[str | None] = []
    for event in batch:
        try:
            events.record(event)
            failed.append(None)
        except Exception as exc:  # this event is not logged, so not put on the bus: the stream hands it back
            failed.append(f"event log: {type(exc).__name__}: {exc}")
    logged = [i for i, reason in enumerate(failed) if reason is None]
    for index, refused in zip(logged, event_bus.put([bus_entry(batch[i]) for i in logged]), strict=True):
        if refused:
            failed[index] = f"EventBridge refused it: {refused}"
    return failed
