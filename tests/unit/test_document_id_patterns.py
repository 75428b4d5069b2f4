"""The document's id patterns are the server's: every value a pattern of the document admits, the
server takes where that value goes, and every value it refuses, the server refuses (a client or a
fuzzer that trusts the document is never told 400 for a value the document allows).

- An id (`<prefix>_<ULID>`, a body's reference to a record): a ULID is 26 Crockford digits of 128
  bits, so its first digit is 0 to 7; the server reads it as a number (ids.ulid_value).
- Where a stream resumes (Last-Event-ID, ?lastEventId=): the route's validation and its domain's
  parse_last_event_id, an empty value being none."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from devstack import openapi
from svc_core.domain import chat_stream, event_stream
from svc_core.http.binding import RequestInvalid
from svc_core.platform import ids
from svc_core.platform.errors import ValidationFailed
from tests.support.functions import load_function

DOCUMENT = json.loads(openapi.DOCUMENT.read_text())
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
RESUMING = ("last-event-id", "lastEventId")   # the parameters naming where a stream resumes


def _patterns(node: Any, where: str = "") -> list[tuple[str, str]]:
    found = []
    if isinstance(node, dict):
        if isinstance(node.get("pattern"), str):
            found.append((where, node["pattern"]))
        for key, value in node.items():
            found += _patterns(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _patterns(value, f"{where}/{i}")
    return found


def _resuming_parameters() -> list[tuple[str, str, str, str]]:
    """(path, where: header or query, name, the document's pattern) of each stream's resume point."""
    return [(path, parameter["in"], parameter["name"], parameter["schema"]["pattern"])
            for path, operations in DOCUMENT["paths"].items() for operation in operations.values()
            for parameter in operation.get("parameters", []) if parameter["name"].lower() in
            [name.lower() for name in RESUMING]]


ID_PATTERNS = sorted({(pattern, re.match(r"\^([a-z]+)_", pattern).group(1))   # a prefix and Crockford digits
                      for where, pattern in _patterns(DOCUMENT)
                      if re.match(r"\^[a-z]+_", pattern) and "HJKMNP" in pattern})
RESUMING_PARAMETERS = _resuming_parameters()


def _id_taken(value: str, prefix: str) -> bool:
    """Whether the server takes this as an id of the kind: its form, and its ULID read as a number."""
    if not ids.is_id(value, prefix):
        return False
    try:
        ids.ulid_value(value[len(prefix) + 1:])
    except ValueError:
        return False
    return True


def test_the_document_names_the_ids_and_resume_points_this_file_checks():
    assert {prefix for _, prefix in ID_PATTERNS} >= {"proj", "agt"}
    assert {(path.rsplit("/", 1)[-1], where) for path, where, _, _ in RESUMING_PARAMETERS} == {
        ("stream", "header"), ("stream", "query")} and len(RESUMING_PARAMETERS) == 4   # events' and chat's


@pytest.mark.parametrize("pattern, prefix", ID_PATTERNS)
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_every_id_the_document_admits_the_server_takes_and_no_other(pattern, prefix, data):
    admitted = data.draw(st.from_regex(pattern, fullmatch=True))
    assert _id_taken(admitted, prefix), admitted
    candidate = data.draw(st.builds(lambda first, rest: f"{prefix}_{first}{rest}", st.sampled_from(CROCKFORD),
                                    st.text(CROCKFORD, min_size=25, max_size=25)))
    assert (re.fullmatch(pattern, candidate) is not None) == _id_taken(candidate, prefix), candidate


def _route(path: str):
    module = load_function("event_stream" if path == event_stream.STREAM_PATH else "chat_stream")
    [route] = [r for r in module.api.routes if r.spec.path == path and r.spec.method == "GET"]
    return route


def _taken_by(route, where: str, name: str, read: Callable[[str], Any]) -> Callable[[str], bool]:
    """Whether the route takes the value, asked of both its entry points, which must agree: the
    buffered handler (its parameters' validation, then the domain's reading) and the streamed one
    (the domain's reading alone)."""
    def reads(value: str) -> bool:
        try:
            read(value)
        except (ValidationFailed, ValueError):
            return False
        return True

    def taken(value: str) -> bool:
        event = {"headers": {name: value}} if where == "header" else {"queryStringParameters": {name: value}}
        try:
            route.binder.bind({"id": "chs_01JD2Q7ZB6V8S3K4X9W2M5N7PA"}, event, None)
            validated = True
        except RequestInvalid:
            validated = False
        streamed = reads(value)
        assert (validated and streamed) == streamed, f"the buffered handler refuses {value!r}, the streamed takes it"
        return streamed
    return taken


def _resume_taken(path: str, where: str, name: str) -> Callable[[str], bool]:
    """Whether the route takes this value as where its stream resumes."""
    parse = event_stream.parse_last_event_id if path == event_stream.STREAM_PATH else chat_stream.parse_last_event_id

    def read(value: str) -> None:
        resumed = parse(value, None) if where == "header" else parse(None, value)
        if isinstance(resumed, str):
            ids.ulid_value(resumed.rsplit("_", 1)[1])   # where the stream resumes: the id's time
    return _taken_by(_route(path), where, name, read)


def _near_misses(pattern: str) -> st.SearchStrategy[str]:
    """Values around what the pattern admits: ids of any first digit, digits, and some noise."""
    return st.one_of(st.just(""), st.builds(lambda first, rest: f"evt_{first}{rest}", st.sampled_from(CROCKFORD),
                                            st.text(CROCKFORD, min_size=25, max_size=25)),
                     st.text("0123456789", max_size=20), st.text(CROCKFORD + "_evt -", max_size=32))


@pytest.mark.parametrize("path, where, name, pattern", RESUMING_PARAMETERS)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_every_resume_point_the_document_admits_the_stream_takes_and_no_other(path, where, name, pattern, data):
    taken = _resume_taken(path, where, name)
    admitted = data.draw(st.from_regex(pattern, fullmatch=True))
    assert taken(admitted), admitted
    candidate = data.draw(_near_misses(pattern))
    assert (re.fullmatch(pattern, candidate) is not None) == taken(candidate), candidate


@pytest.mark.parametrize("parse", [event_stream.parse_last_event_id, chat_stream.parse_last_event_id])
def test_an_empty_last_event_id_is_none_and_the_query_then_counts(parse):
    """A client that sends Last-Event-ID empty means no event (EventSource's empty last event id)."""
    assert parse("", None) is None and parse(None, "") is None and parse("", "") is None
    resumed = "evt_01JD2Q7ZB6V8S3K4X9W2M5N7PA" if parse is event_stream.parse_last_event_id else "7"
    assert parse("", resumed) == (resumed if parse is event_stream.parse_last_event_id else 7)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_the_event_types_the_document_admits_the_stream_takes_and_no_other(data):
    """?types= of the event stream: known names, comma-separated, or empty (every type)."""
    [pattern] = [p["schema"]["pattern"] for p in DOCUMENT["paths"][event_stream.STREAM_PATH]["get"]["parameters"]
                 if p["name"] == "types"]
    taken = _taken_by(_route(event_stream.STREAM_PATH), "query", "types", event_stream.parse_types)
    assert taken(data.draw(st.from_regex(pattern, fullmatch=True)))
    names = st.sampled_from([*event_stream.EVENT_TYPES, "webhook.test", "run.completed", ""])
    candidate = ",".join(data.draw(st.lists(names, max_size=4)))
    assert (re.fullmatch(pattern, candidate) is not None) == taken(candidate), candidate
