"""docs/webhooks.md names the events the service sends: its table of events and the list of names a
webhook may subscribe to hold exactly the service's catalogue (svc_core.contracts.events)."""

from __future__ import annotations

import re
from pathlib import Path

from svc_core.contracts.events import EVENT_TYPES

DOC = (Path(__file__).resolve().parents[2] / "docs" / "webhooks.md").read_text()


def test_the_table_of_events_lists_every_event_the_service_sends():
    section = DOC.split("### Events", 1)[1]
    rows = re.findall(r"^\| ([a-z_]+\.[a-z_]+) \|", section, flags=re.MULTILINE)
    assert sorted(rows) == sorted(EVENT_TYPES)


def test_the_events_field_names_every_event_a_webhook_may_subscribe_to():
    field = DOC.split("- **events**:", 1)[1].split("\n- **", 1)[0]
    names = set(re.findall(r"`([a-z_]+\.[a-z_]+)`", field)) - {"webhook.test"}   # named as not subscribable
    assert sorted(names) == sorted(EVENT_TYPES)
