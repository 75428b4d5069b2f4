"""The `cursor` of every list: any string of the documented pattern is answered 200 (a position in
the caller's own list), any other string 400 VALIDATION_ERROR naming `cursor` (svc_core/rules/cursors.py).
Paging itself, on both engines: tests/integration/test_list_positions.py."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from svc_core.platform import ids
from svc_core.rules import cursors
from tests.support.functions import call
from tests.support.projects import assert_error
from tests.support.stack import provisioned_stack


@pytest.fixture(scope="module")
def stack(emulator):
    yield from provisioned_stack(emulator)


@pytest.fixture(scope="module")
def tenant(stack) -> dict:
    """A tenant with a project, an agent and a webhook (the lists under an agent and a webhook)."""
    from svc_core.data import webhooks_table
    tenant_id, key = stack.tenant_with_key()
    agent = call("agents", "Agents-CreateAgent", token=key,
                 body={"name": "Lister", "systemPrompt": "List.", "config": {"autonomyLevel": "suggest"}})
    assert agent.status == 201, agent
    webhook_id = ids.new_id("whk")
    webhooks_table.create(tenant_id, {"id": webhook_id, "url": "https://hooks.example.com/x", "events": ["*"],
                                      "enabled": True, "secrets": [], "version": 1, "created_at": "2026-01-01T00:00:00.000Z",
                                      "updated_at": "2026-01-01T00:00:00.000Z"})
    return {"key": key, "agent": agent.data["id"], "webhook": webhook_id}


# (function, event, path parameter: "agent" / "webhook" / None, the cursor's pattern)
LISTS = [
    ("projects", "Projects-ListProjects", None, cursors.ID_CURSOR),
    ("api_keys", "ApiKeys-ListKeys", None, cursors.ID_CURSOR),
    ("oauth", "OAuth-ListConnections", None, cursors.ID_CURSOR),
    ("secrets", "Secrets-ListSecrets", None, cursors.ID_CURSOR),
    ("webhooks", "Webhooks-ListWebhooks", None, cursors.ID_CURSOR),
    ("webhooks", "Webhooks-ListWebhookDeliveries", "webhook", cursors.ATTEMPT_CURSOR),
    ("agents", "Agents-ListAgents", None, cursors.ID_CURSOR),
    ("agents", "Agents-ListRuns", "agent", cursors.ID_CURSOR),
    ("chat", "Chat-ListChatSessions", None, cursors.ID_CURSOR),
    ("billing", "Billing-ListInvoices", None, cursors.ID_CURSOR),
    ("billing", "Billing-ListLedger", None, cursors.ID_CURSOR),
]
NAMES = [event for _, event, _, _ in LISTS]


def listed(tenant, function, event, parent, cursor):
    path = {"id": tenant[parent]} if parent else None
    return call(function, event, token=tenant["key"], path_params=path, query={"cursor": cursor, "limit": "2"})


@pytest.mark.parametrize("function, event, parent, pattern", LISTS, ids=NAMES)
def test_any_cursor_of_the_pattern_is_a_position(tenant, function, event, parent, pattern):
    @settings(max_examples=int(os.environ.get("CURSOR_EXAMPLES", "15")), deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.from_regex(pattern, fullmatch=True))
    def answered(cursor):
        reply = listed(tenant, function, event, parent, cursor)
        assert reply.status == 200, (cursor, reply)
        assert isinstance(reply.data["items"], list)
    answered()


MALFORMED = ["", "not-a-cursor", "A" * 21 + "B", "A" * 23, "A" * 21 + "=", "A" * 22 + "\n",
             "eyJhZnRlciI6InByb2pfMDFKRDJRN1pCNlY4UzNLNFg5VzJNNU43UEEifQ",   # the old {"after": id} form
             "A" * 7 + "A" * 21 + "B" + "A", "A" * 31, "c" * 600]


@pytest.mark.parametrize("function, event, parent, pattern", LISTS, ids=NAMES)
def test_a_cursor_off_the_pattern_is_400_naming_it(tenant, function, event, parent, pattern):
    for cursor in MALFORMED:
        reply = listed(tenant, function, event, parent, cursor)
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
