"""The `cursor` of every list: any string of the documented pattern is answered 200 (a position in
the caller's own list), any other string 400 VALIDATION_ERROR naming `cursor` (svc_core/contracts/cursors.py),
never 500. The lists and their patterns are read from the template and the OpenAPI document; the
property runs on moto and on DynamoDB Local, which refuses a start key outside a Query's key range.
Paging itself, on both engines: tests/integration/test_list_positions.py."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devstack import routes
from svc_core.contracts import cursors
from svc_core.platform import ids
from tests.support.functions import call
from tests.support.projects import assert_error
from tests.support.route_objects import PERSONAL, make_each, personal_token
from tests.support.stack import provisioned_stack


@pytest.fixture(scope="module")
def stack(emulator):
    yield from provisioned_stack(emulator)


# The collections the lists' path parameters name (/agents/{id}/runs: agents), one object of each made
# per tenant (tests/support/route_objects.py), so a new list under any of them is tested as it is.
PARENTS = sorted({parent for r in routes.list_routes() for parent in r.parents})


def make_tenant(stack) -> dict:
    """A tenant, its key, and one object of each collection a list is under (the agent's creation is
    an event too: the events list has something on each side of most positions)."""
    tenant_id, key = stack.tenant_with_key()
    return {"key": key, "tenantId": tenant_id, **make_each(PARENTS, tenant_id, key)}


@pytest.fixture(scope="module")
def tenant(stack) -> dict:
    return make_tenant(stack)


def documented_lists() -> list[tuple[str, str, str, str]]:
    """(function directory, event file stem, path, the cursor's pattern) of every route whose
    documented query parameters include `cursor` (devstack/routes.py), so a new list is tested as
    soon as it is routed and documented."""
    return sorted((r.directory, r.event, r.path, r.cursor_pattern) for r in routes.list_routes())


LISTS = documented_lists()
NAMES = [stem for _, stem, _, _ in LISTS]


def test_the_documented_lists_are_found():
    assert len(LISTS) >= 12 and "Events-ListEvents" in NAMES and "Webhooks-ListWebhookDeliveries" in NAMES
    assert {pattern for *_, pattern in LISTS} == {cursors.ID_CURSOR, cursors.ATTEMPT_CURSOR}


def listed(tenant, function, event, path, cursor, **query):
    # A path's parameter names the object of the collection just before it (/agents/{id}/runs).
    parents = [segment for segment, nxt in zip(path.split("/"), path.split("/")[1:], strict=False) if nxt.startswith("{")]
    assert all(p in tenant for p in parents), f"no object of {parents} to list under for {path}"
    path_params = {"id": tenant[parents[0]]} if parents else None
    if event in PERSONAL and event not in tenant:   # a person's own list: their token (made once per tenant)
        tenant[event] = personal_token(tenant["tenantId"])
    return call(function, event, token=tenant.get(event, tenant["key"]), path_params=path_params,
                query={"cursor": cursor, "limit": "2", **query})


def any_cursor(pattern: str):
    """Any string of the pattern, the lowest and the highest positions among them (the ends of a
    list's key range, where DynamoDB refuses a start key that a range condition excludes)."""
    return st.one_of(st.from_regex(pattern, fullmatch=True, alphabet="A"),
                     st.from_regex(pattern, fullmatch=True, alphabet="_w"),
                     st.from_regex(pattern, fullmatch=True))


def assert_every_cursor_is_a_position(tenant, function, event, path, pattern, examples: int):
    @settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(any_cursor(pattern))
    def answered(cursor):
        reply = listed(tenant, function, event, path, cursor)
        assert reply.status == 200, (cursor, reply)
        assert isinstance(reply.data["items"], list)
    answered()


EXAMPLES = int(os.environ.get("CURSOR_EXAMPLES", "15"))


@pytest.mark.parametrize("function, event, path, pattern", LISTS, ids=NAMES)
def test_any_cursor_of_the_pattern_is_a_position(tenant, function, event, path, pattern):
    assert_every_cursor_is_a_position(tenant, function, event, path, pattern, EXAMPLES)


@pytest.mark.parametrize("function, event, path, pattern", LISTS, ids=NAMES)
def test_any_cursor_of_the_pattern_is_a_position_on_dynamodb_local(atomic_stack, function, event, path, pattern):
    # DynamoDB Local checks a Query's start key as DynamoDB does (moto lets more through).
    assert_every_cursor_is_a_position(make_tenant(atomic_stack.stack), function, event, path, pattern, EXAMPLES)


@pytest.mark.parametrize("stack_kind", ["moto", "dynamodb-local"])
def test_an_events_cursor_at_either_end_of_the_time_range_is_a_position(request, stack, stack_kind):
    from svc_core.domain import events
    if stack_kind == "dynamodb-local":
        stack = request.getfixturevalue("atomic_stack").stack
    tenant = make_tenant(stack)
    since, until = "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"
    low, high = events.id_range(events.parse_time(since, "since"), events.parse_time(until, "until"))
    for position in (low, high):
        reply = listed(tenant, "events", "Events-ListEvents", "/api/v1/events", cursors.id_cursor(position),
                       since=since, until=until)
        assert reply.status == 200, (position, reply)
        assert reply.data == {"items": [], "nextCursor": None}


MALFORMED = ["", "not-a-cursor", "A" * 21 + "B", "A" * 23, "A" * 21 + "=", "A" * 22 + "\n",
             "eyJhZnRlciI6InByb2pfMDFKRDJRN1pCNlY4UzNLNFg5VzJNNU43UEEifQ",   # the old {"after": id} form
             "A" * 7 + "A" * 21 + "B" + "A", "A" * 31, "c" * 600]


@pytest.mark.parametrize("function, event, path, pattern", LISTS, ids=NAMES)
def test_a_cursor_off_the_pattern_is_400_naming_it(tenant, function, event, path, pattern):
    for cursor in MALFORMED:
        reply = listed(tenant, function, event, path, cursor)
        fields = assert_error(reply, 400, "VALIDATION_ERROR")["fields"]
        assert [(f["field"], f["in"]) for f in fields] == [("cursor", "query")], (cursor, reply)


def just_before(item_id: str) -> str:
    """The cursor of a position between this id and the one before it: a cursor never issued."""
    prefix, ulid = item_id.rsplit("_", 1)
    return cursors.id_cursor(f"{prefix}_{ids.ulid_text(ids.ulid_value(ulid) - 1)}")


def test_positions_go_by_time_and_stay_in_the_callers_tenant(stack):
    def names(key, cursor):
        reply = call("projects", "Projects-ListProjects", token=key, query={"cursor": cursor})
        assert reply.status == 200, reply
        return [p["name"] for p in reply.data["items"]]

    _, key_a = stack.tenant_with_key()
    _, key_b = stack.tenant_with_key()
    made = {}
    for name, key in (("B0", key_b), ("A0", key_a), ("B1", key_b), ("A1", key_a), ("B2", key_b)):
        reply = call("projects", "Projects-CreateProject", token=key, body={"name": name})
        made[name] = reply.data["id"]
    # A position no project has, just before B2: the ones made before it, newest first.
    assert names(key_b, just_before(made["B2"])) == ["B1", "B0"]
    # A's projects are only positions in B's list: B sees its own projects older than them.
    assert names(key_b, cursors.id_cursor(made["A1"])) == ["B1", "B0"]
    assert names(key_b, cursors.id_cursor(made["A0"])) == ["B0"]
    assert names(key_a, cursors.id_cursor(made["B2"])) == ["A1", "A0"]
    assert names(key_a, cursors.id_cursor(made["B0"])) == []
