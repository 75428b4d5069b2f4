"""adapters/event_bus.calls: a batch's PutEvents calls, within EventBridge's 10 entries and 256 KB."""

from __future__ import annotations

from svc_core.adapters import event_bus


def entry_of(detail_bytes: int) -> dict:
    return {"Source": "svc.api", "DetailType": "project.updated", "Detail": "x" * detail_bytes, "Resources": []}


def test_an_entry_is_counted_as_eventbridge_counts_it():
    entry = event_bus.entry("project.created", '{"name":"Ünï"}')
    expected = len(entry["Source"].encode()) + len(b"project.created") + len('{"name":"Ünï"}'.encode())
    assert event_bus.entry_size(entry) == expected
    assert event_bus.entry_size({**entry, "Time": "2026-11-26", "Resources": ["arn:a"]}) == expected + 14 + 5


def test_ten_entries_a_call_in_order():
    assert [list(r) for r in event_bus.calls([entry_of(100)] * 25)] == [
        list(range(0, 10)), list(range(10, 20)), list(range(20, 25))]
    assert event_bus.calls([]) == []


def test_an_entry_that_does_not_fit_beside_the_others_starts_the_next_call():
    big = entry_of(140_000)
    cut = event_bus.calls([entry_of(100), big, big, entry_of(100), entry_of(100)])
    assert [list(r) for r in cut] == [[0, 1], [2, 3, 4]]
    # Exactly the limit fits; one byte more does not.
    fill = event_bus.MAX_REQUEST_BYTES - event_bus.entry_size(entry_of(0)) * 2
    assert len(event_bus.calls([entry_of(fill // 2), entry_of(fill - fill // 2)])) == 1
    assert len(event_bus.calls([entry_of(fill // 2), entry_of(fill - fill // 2 + 1)])) == 2


def test_an_entry_over_the_limit_goes_alone():
    huge = entry_of(event_bus.MAX_REQUEST_BYTES + 1)
    assert [list(r) for r in event_bus.calls([entry_of(10), huge, entry_of(10)])] == [[0], [1], [2]]
