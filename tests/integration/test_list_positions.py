"""Every list continues after any position, on moto and on DynamoDB Local.

A cursor carries only a position (svc_core/contracts/cursors.py): the last item's id, or any id the caller
made up. Each table module builds its ExclusiveStartKey from that position, also for an item that
does not exist, and on an index (api keys, runs) with the table's key too. These tests page each
list and start it after positions that name no item, in one tenant's data among another's.
"""

from __future__ import annotations

import secrets
import time

import pytest

from devstack import routes
from svc_core.adapters import aws
from svc_core.adapters.dynamo import to_item
from svc_core.contracts import events
from svc_core.contracts.cursors import AttemptPosition
from svc_core.data import (
    agents_table,
    api_keys_table,
    audit_log_table,
    billing_table,
    chat_messages_table,
    chat_sessions_table,
    invitations_table,
    oauth_connections_table,
    projects_table,
    runs_table,
    secrets_table,
    sessions_table,
    tenants_table,
    users_table,
    webhook_deliveries_table,
    webhooks_table,
)
from svc_core.data.common import transact
from svc_core.platform import ids
from svc_core.platform.config import settings

STEP_MS = 10
AGENT = "agt_01JD2Q7ZB6V8S3K4X9W2M5N7PA"
SESSION = "chs_01JD2Q7ZB6V8S3K4X9W2M5N7PA"   # both tenants' messages under the same session id


def _project(tenant, item_id):
    if tenants_table.get_consistent(tenant) is None:  # a project is counted on its tenant's item
        transact([tenants_table.put_new({"id": tenant, "name": "T", "plan": "free", "status": "active"})])
    projects_table.create(tenant, {"id": item_id, "name": item_id},
                          events.new_event("project.created", tenant, {"id": item_id}), time.time())


def _connection(tenant, item_id):
    aws.client("dynamodb").put_item(TableName=settings().oauth_connections_table,
                                    Item=to_item({"tenantId": tenant, "id": item_id}))


def _key(tenant, item_id):
    api_keys_table.create({"id": item_id, "tenantId": tenant, "scopes": [], "type": "sdk", "environment": "test"},
                          secrets.token_hex(16))


def _audit_entry(tenant, item_id):
    transact([audit_log_table.put_entry({"id": item_id, "tenantId": tenant}, int(time.time()) + 86400)])


def _audit_page(tenant, limit, after):
    low, high = f"aud_{'0' * 26}", f"aud_7{'Z' * 25}"   # no since, no until
    return audit_log_table.query(tenant, low=low, high=high, limit=limit, now=time.time(), after=after)


def _message(tenant, item_id):
    transact([chat_messages_table.put_entry(tenant, SESSION, {"id": item_id, "role": "user", "content": item_id})])


def _run(tenant, item_id):
    runs_table.start(tenant, {"id": item_id, "agentId": AGENT},
                     events.new_event("agent.started", tenant, {"id": item_id}), time.time())


def _member(tenant, user_id):
    transact([users_table.put_membership(user_id, tenant, "member", "2026-11-26T00:00:00.000Z")])


def _session(user, session_id):
    sessions_table.create({"id": session_id, "userId": user, "tenantId": "ten_x", "tokenHash": "-", "generation": 1,
                           "created_at": "2026-11-26T00:00:00.000Z", "expiresAt": int(time.time()) + 86400})


def _members(tenant, limit, after):
    found, last = users_table.members_of(tenant, limit, after)
    return [{**m, "id": m["userId"]} for m in found], last


# Each list route: (id prefix, store one item of a tenant, one page of a tenant's items after an id);
# how to store an item is the one thing a route does not say. Every list route of the document is
# here or in PAGED_ELSEWHERE (test_every_list_route_is_paged_here_or_elsewhere).
LISTS = {
    "GET /api/v1/projects": ("proj", _project, projects_table.list_for_tenant),
    "GET /api/v1/agents": ("agt", lambda t, i: agents_table.create(t, {"id": i}), agents_table.list_for_tenant),
    "GET /api/v1/chat/sessions": ("chs", lambda t, i: chat_sessions_table.create(t, {"id": i}),
                                  chat_sessions_table.list_for_tenant),
    "GET /api/v1/oauth/connections": ("ocn", _connection, oauth_connections_table.list_for_tenant),
    "GET /api/v1/api-keys": ("key", _key, api_keys_table.list_for_tenant),   # on an index
    "GET /api/v1/agents/{id}/runs": ("run", _run,                               # on an index
                                     lambda t, limit, after: runs_table.list_for_agent(t, AGENT, limit, after)),
    "GET /api/v1/secrets": ("sec", lambda t, i: secrets_table.create(t, {"id": i, "name": i}),
                            secrets_table.list_for_tenant),
    "GET /api/v1/webhooks": ("whk", lambda t, i: webhooks_table.create(t, {"id": i}), webhooks_table.list_for_tenant),
    "GET /api/v1/billing/ledger": ("led", lambda t, i: billing_table.write([billing_table.put_entry(t, {"id": i})]),
                                   billing_table.list_entries),
    "GET /api/v1/billing/invoices": ("inv", lambda t, i: billing_table.write([billing_table.put_invoice(t, {"id": i})]),
                                     billing_table.list_invoices),
    "GET /api/v1/audit-log": ("aud", _audit_entry, _audit_page),
    "GET /api/v1/invitations": ("inv", lambda t, i: transact([invitations_table.put_new_entry(t, {"id": i})]),
                                invitations_table.list_for_tenant),
    "GET /api/v1/chat/sessions/{id}/messages": ("msg", _message,
                                                lambda t, limit, after: chat_messages_table.list_for_session(
                                                    t, SESSION, limit, after)),
    "GET /api/v1/members": ("usr", _member, _members),   # on an index, by user id
    # A person's own sessions: "the tenant" here is the user whose sessions they are (the byUser index).
    "GET /api/v1/auth/sessions": ("ses", _session,
                                  lambda user, limit, after: sessions_table.page_for_user(user, limit, after, time.time())),
}
# The lists that read oldest first; every other list is newest first.
OLDEST_FIRST = {"GET /api/v1/chat/sessions/{id}/messages", "GET /api/v1/members"}
# List routes whose positions are not ids of one table's items, and the test that pages them.
PAGED_ELSEWHERE = {
    "GET /api/v1/webhooks/{id}/deliveries": "test_delivery_attempts_continue_after_any_position_within_the_tenant",
    "GET /api/v1/events": "tests/integration/test_event_log.py::test_pages_newest_first_with_a_cursor_and_filters "
                          "(the log is paged by time: tests/integration/test_list_cursors.py, its range's ends)",
}


def test_every_list_route_is_paged_here_or_elsewhere():
    documented = {f"{r.method} {r.path}" for r in routes.list_routes()}
    assert not LISTS.keys() & PAGED_ELSEWHERE.keys()
    assert documented - LISTS.keys() - PAGED_ELSEWHERE.keys() == set(), \
        "a list route no test pages: add how to store one of its items to LISTS"
    assert (LISTS.keys() | PAGED_ELSEWHERE.keys()) - documented == set(), "no such list route"


def id_at(prefix: str, ms: int, random_bits: int = 0) -> str:
    """An id made at this instant; random_bits 0 makes it the first id of that millisecond."""
    return f"{prefix}_{ids.ulid_text(ms << 80 | random_bits)}"


def walk(read, limit: int, after=None) -> list[list]:
    """Every page from `after` on, following the position each page ends at."""
    pages = []
    while True:
        items, after = read(limit, after)
        pages.append(items)
        if after is None:
            return pages


@pytest.mark.parametrize("name", LISTS)
def test_a_list_continues_after_any_position_within_the_tenant(data_backend, name):
    prefix, store, page = LISTS[name]
    mine, theirs = ids.new_id("ten"), ids.new_id("ten")
    start = int(time.time() * 1000)
    made = [id_at(prefix, start + STEP_MS * n, 1 + n) for n in range(5)]           # at 0, 10, 20, 30, 40 ms
    foreign = [id_at(prefix, start + STEP_MS * n + 5, 1 + n) for n in range(5)]    # at 5, 15, ... 45 ms
    for own, other in zip(made, foreign, strict=False):
        store(mine, own)
        store(theirs, other)
    oldest_first = name in OLDEST_FIRST
    in_order = made if oldest_first else made[::-1]

    def read(limit, after):
        items, last = page(mine, limit, after)
        return [i["id"] for i in items], last

    def listed(limit, after=None):
        return [i for p in walk(read, limit, after) for i in p]

    for limit in (1, 2, 3):
        pages = walk(read, limit)
        assert [i for p in pages for i in p] == in_order, (name, limit)
        assert all(len(p) <= limit for p in pages)
    # A position between two items that names none: the items past it follow (older ones, newer ones
    # in a list read oldest first).
    assert listed(2, id_at(prefix, start + 25)) == (made[3:] if oldest_first else made[2::-1])
    # Another tenant's item is only a position in mine: nothing of theirs shows.
    assert listed(2, foreign[3]) == (made[4:] if oldest_first else made[3::-1])
    # Positions before the list's first item and after its last.
    lowest, highest = f"{prefix}_{'0' * 26}", f"{prefix}_7{'Z' * 25}"
    before_all, after_all = (lowest, highest) if oldest_first else (highest, lowest)
    assert listed(3, before_all) == in_order
    assert read(3, after_all) == ([], None)


def test_delivery_attempts_continue_after_any_position_within_the_tenant(data_backend):
    mine, theirs, webhook = ids.new_id("ten"), ids.new_id("ten"), ids.new_id("whk")
    start = time.time()

    def attempt(tenant, event_id, n, at):
        webhook_deliveries_table.record({"webhookId": webhook, "tenantId": tenant, "eventId": event_id,
                                         "eventType": "project.created", "attempt": n, "outcome": "retrying",
                                         "attemptedAt": "t"}, at)
    made = []
    for n in range(6):
        event_id, at = ids.new_id("evt"), start + n * STEP_MS / 1000
        attempt(mine, event_id, 1 + n % 2, at)
        made.append((event_id, 1 + n % 2))
        if n % 2:   # filed under this webhook by another tenant: filtered out, pages may be short
            attempt(theirs, ids.new_id("evt"), 1, at + 0.005)
    newest_first = made[::-1]

    def read(limit, after):
        items, last = webhook_deliveries_table.list_for_webhook(mine, webhook, limit, after)
        return [(i["eventId"], i["attempt"]) for i in items], last

    for limit in (1, 2, 3):
        pages = walk(read, limit)
        assert [i for p in pages for i in p] == newest_first, limit
        assert all(len(p) <= limit for p in pages)
    start_ms = int(start * 1000)
    between = AttemptPosition(start_ms + 25, ids.new_id("evt"), 1)
    assert [i for p in walk(read, 2, between) for i in p] == made[2::-1]
    assert [i for p in walk(read, 2, AttemptPosition(2 ** 42 - 1, f"evt_7{'Z' * 25}", 63)) for i in p] == newest_first
    assert read(2, AttemptPosition(0, f"evt_{'0' * 26}", 0)) == ([], None)
