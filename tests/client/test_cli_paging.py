"""How a list command collects pages (`_collect`): a filtered list's empty pages are followed to the
first match by default, --limit fills up to its count, --all takes every page, and the cursor shown
goes on after the last item shown."""

from __future__ import annotations

from svc_client.commands.base import _collect
from svc_client.models import Page


def pages(*contents: list[str]):
    """A fetch that answers these pages in turn (each but the last with a cursor), recording its calls."""
    calls: list[dict] = []

    def fetch(*, limit, cursor):
        index = int(cursor) if cursor else 0
        calls.append({"limit": limit, "cursor": cursor})
        more = str(index + 1) if index + 1 < len(contents) else None
        return Page[str](items=contents[index], nextCursor=more)
    fetch.calls = calls
    return fetch


def test_by_default_empty_filtered_pages_are_followed_to_the_first_match():
    fetch = pages([], [], ["member.removed"], ["older"])
    assert _collect(fetch, None, False, None) == {"items": ["member.removed"], "nextCursor": "3"}
    assert [c["cursor"] for c in fetch.calls] == [None, "1", "2"]


def test_by_default_nothing_anywhere_is_an_empty_list_without_a_cursor():
    assert _collect(pages([], [], []), None, False, None) == {"items": [], "nextCursor": None}


def test_by_default_a_page_with_items_is_one_call():
    fetch = pages(["a", "b"], ["c"])
    assert _collect(fetch, None, False, None) == {"items": ["a", "b"], "nextCursor": "1"}
    assert len(fetch.calls) == 1


def test_limit_fills_across_short_pages_and_all_takes_everything():
    assert _collect(pages([], ["a"], [], ["b"], ["c"]), 2, False, None) == {"items": ["a", "b"], "nextCursor": "4"}
    assert _collect(pages(["a"], [], ["b"]), None, True, None) == {"items": ["a", "b"], "nextCursor": None}
