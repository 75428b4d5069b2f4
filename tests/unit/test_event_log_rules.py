"""The event log's rules without AWS: what objectId an event is about, time bounds as id bounds,
the stream's parameters, the replay step's order."""

from __future__ import annotations

import pytest

from svc_core.contracts.events import Event
from svc_core.domain import event_stream, events, webhook_replays
from svc_core.platform import ids
from svc_core.platform.errors import ValidationFailed


def event(event_type: str, data: dict) -> Event:
    return Event(id="evt_01JD2Q7ZB6V8S3K4X9W2M5N7PA", type=event_type, timestamp="2026-11-25T10:00:00.000Z",
                 tenantId="ten_1", data=data)


def test_the_object_of_an_event_is_its_run_for_agent_events_else_its_id():
    assert events.object_id_of(event("project.updated", {"id": "proj_1", "runId": "x"})) == "proj_1"
    assert events.object_id_of(event("agent.failed", {"runId": "run_1", "agentId": "agt_1"})) == "run_1"
    assert events.object_id_of(event("tenant.created", {"name": "no id"})) is None
    # A member's events are found by the person's user id, as user.created is.
    assert events.object_id_of(event("member.added", {"userId": "usr_1", "role": "member"})) == "usr_1"
    assert events.object_id_of(event("member.role_changed", {"userId": "usr_1", "role": "admin"})) == "usr_1"


def test_a_time_range_is_the_range_of_ids_of_its_milliseconds():
    low, high = events.id_range(1_795_000_000.123, 1_795_000_001.0)
    assert ids.ulid_value(low[4:]) >> 80 == 1_795_000_000_123 and ids.ulid_value(low[4:]) & ((1 << 80) - 1) == 0
    assert ids.ulid_value(high[4:]) >> 80 == 1_795_000_001_000
    assert ids.ulid_value(high[4:]) & ((1 << 80) - 1) == (1 << 80) - 1   # every id of that millisecond
    inside = f"evt_{ids.new_ulid(1_795_000_000_500)}"
    assert low <= inside <= high
    everything = events.id_range(None, None)
    assert everything[0] < inside < everything[1]


@pytest.mark.parametrize("text", ["2026-11-25T10:00:00Z", "2026-11-25T10:00Z", "2026-11-25T11:00:00.250+01:00"])
def test_times_with_an_offset_are_read(text):
    assert events.parse_time(text, "since") is not None


@pytest.mark.parametrize("text", ["2026-11-25", "2026-11-25T10:00:00", "yesterday", "2026-13-45T10:00:00Z"])
def test_other_times_are_refused_naming_the_field(text):
    with pytest.raises(ValidationFailed) as refused:
        events.parse_time(text, "until")
    assert refused.value.details["fields"][0]["field"] == "until"


def test_the_streams_parameters():
    assert event_stream.parse_types("project.created,project.created,agent.failed") == ["project.created",
                                                                                        "agent.failed"]
    assert event_stream.parse_types(None) is None and event_stream.parse_types("") is None
    with pytest.raises(ValidationFailed):
        event_stream.parse_types("project.created,webhook.test")
    known = "evt_01JD2Q7ZB6V8S3K4X9W2M5N7PA"
    assert event_stream.parse_last_event_id(known, None) == known
    assert event_stream.parse_last_event_id(None, known) == known
    with pytest.raises(ValidationFailed):
        event_stream.parse_last_event_id("12", None)
    with pytest.raises(ValidationFailed):   # the form of an id, but more than 128 bits: no event has it
        event_stream.parse_last_event_id(None, "evt_ZZZZZZZZZZZZZZZZZZZZZZZZZZ")
    text = event_stream.format_event({"id": known, "type": "project.created", "data": {"name": "a\\nb"}})
    assert text.startswith(f"id: {known}\nevent: project.created\ndata: {{") and text.endswith("}\n\n")
    assert text.count("\n") == 4   # one data line: the JSON never spans lines


def test_a_replay_step_ahead_of_the_replay_waits():
    first, later = "evt_01JD2Q7ZB6V8S3K4X9W2M5N7PA", "evt_01JD2Q7ZB6V8S3K4X9W2M5N7PB"
    assert webhook_replays._ahead(later, first) and webhook_replays._ahead(first, webhook_replays.START)
    assert not webhook_replays._ahead(first, first) and not webhook_replays._ahead(first, later)
    assert not webhook_replays._ahead(webhook_replays.START, first)
