"""The residency audit's core (ops/residency.py): every table has a rule that finds its items' owner, and
the audit places each item against the directory's regions, without AWS."""

from __future__ import annotations

import json

import pytest

from devstack.template import load
from ops.residency import (
    CELL,
    DIRECTORY,
    OPAQUE,
    QUEUE_RULES,
    TABLE_RULES,
    Audit,
    Directory,
    Links,
    Owner,
    QueueCount,
    message_owner,
    object_owner,
)

EU, US, US_WEST = "eu-central-1", "us-east-1", "us-west-2"


def test_every_table_of_the_template_has_a_rule():
    """A new table without a rule would be scanned by nobody: its tenants' items could sit anywhere."""
    tables = {k for k, v in load()["Resources"].items()
              if v["Type"] in ("AWS::DynamoDB::Table", "AWS::DynamoDB::GlobalTable")}
    assert sorted(tables - set(TABLE_RULES) - {DIRECTORY}) == []
    assert sorted(set(TABLE_RULES) - tables) == []
    assert DIRECTORY in tables and DIRECTORY not in TABLE_RULES


@pytest.mark.parametrize("table, item, owner", [
    ("TenantsTable", {"id": "t1", "name": "Acme"}, Owner("tenant", "t1")),
    ("UsersTable", {"pk": "USER#u1", "sk": "PROFILE", "email": "a@example.com"}, Owner("user", "u1")),
    ("UsersTable", {"pk": "USER#u1", "sk": "MEMBER#t1", "tenantId": "t1", "userId": "u1"}, Owner("tenant", "t1")),
    ("UsersTable", {"pk": "EMAIL#a@example.com", "sk": "EMAIL", "userId": "u1"}, Owner("user", "u1")),
    ("UsersTable", {"pk": "IDP#https://idp#sub", "sk": "IDP", "userId": "u1"}, Owner("user", "u1")),
    ("UsersTable", {"pk": "RESET#prt_1", "sk": "PASSWORD_RESET", "userId": "u1"}, Owner("user", "u1")),
    ("UsersTable", {"pk": "SOMETHING", "sk": "NEW"}, None),
    ("SessionsTable", {"id": "s1", "userId": "u1", "tenantId": "t1"}, Owner("user", "u1")),
    ("CliSessionsTable", {"loginId": "l1", "status": "pending"}, CELL),
    ("CliSessionsTable", {"loginId": "l1", "status": "approved", "userId": "u1", "tenantId": "t1"},
     Owner("user", "u1")),
    ("ApiKeysTable", {"pk": "SECRET#abc", "tenantId": "t1"}, Owner("tenant", "t1")),
    ("RateLimitsTable", {"pk": "tenant#t1", "hits": 3}, Owner("tenant", "t1")),
    ("RateLimitsTable", {"pk": "tenant#t1#3", "hits": 3}, Owner("tenant", "t1")),   # a shard of its counter
    ("RateLimitsTable", {"pk": "streams#tenant#t1", "leases": {}}, Owner("tenant", "t1")),
    ("RateLimitsTable", {"pk": "key_1", "hits": 3}, Owner("api_key", "key_1")),
    ("RateLimitsTable", {"pk": "streams#key_1", "leases": {}}, Owner("api_key", "key_1")),
    ("RateLimitsTable", {"pk": "ses_1", "revokedAt": 1}, Owner("session", "ses_1")),
    ("RateLimitsTable", {"pk": "usr_1", "hits": 1}, Owner("user_credential", "usr_1")),
    ("RateLimitsTable", {"pk": "login-account#a#b@example.com", "hits": 1}, Owner("email", "a#b@example.com")),
    ("RateLimitsTable", {"pk": "reset-mails#b@example.com", "hits": 1}, Owner("email", "b@example.com")),
    ("RateLimitsTable", {"pk": "login-slow#a@example.com", "hits": 1}, Owner("email", "a@example.com")),
    ("RateLimitsTable", {"pk": "login-address#a@example.com#10.0.0.1", "hits": 1}, Owner("email", "a@example.com")),
    ("RateLimitsTable", {"pk": "ip#10.0.0.1", "hits": 1}, CELL),
    ("RateLimitsTable", {"pk": "addr#register#10.0.0.1", "hits": 1}, CELL),
    ("RateLimitsTable", {"pk": "login-known#0af3", "ttl": 1}, OPAQUE),
    ("RateLimitsTable", {"pk": "something-new#1"}, None),
    ("IdempotencyTable", {"id": "hash", "status": "COMPLETED"}, OPAQUE),
    ("ChatMessagesTable", {"sessionKey": "t1#chs_1", "id": "msg_1"}, Owner("tenant", "t1")),
    ("ChatEventsTable", {"sessionKey": "t1#chs_1", "seq": 3}, Owner("tenant", "t1")),
    ("BillingTable", {"pk": "t1", "sk": "BALANCE"}, Owner("tenant", "t1")),
    ("BillingTable", {"pk": "giftcard#abc", "sk": "CARD", "redeemedBy": "t1"}, CELL),
    ("BillingTable", {"pk": "stripe-customer#cus_1", "sk": "CUSTOMER", "tenantId": "t1"}, Owner("tenant", "t1")),
    ("WebhookDeliveriesTable", {"webhookId": "wh_1", "attemptKey": "!delivered#evt_1"}, Owner("webhook", "wh_1")),
    ("ProjectsTable", {"tenantId": "t1", "id": "prj_1"}, Owner("tenant", "t1")),
    ("ProjectsTable", {"id": "prj_1"}, None),
])
def test_a_tables_rule_finds_the_owner(table, item, owner):
    assert TABLE_RULES[table].owner(item) == owner


@pytest.mark.parametrize("key, owner", [
    ("tenants/t1/projects/prj_1/files/a.txt", Owner("tenant", "t1")),
    ("audit-exports/t1/exp_1.jsonl", Owner("tenant", "t1")),
    ("tenants/t1", None),
    ("elsewhere/t1/x", None),
])
def test_an_objects_owner_is_in_its_key(key, owner):
    assert object_owner(key) == owner


def _directory() -> Directory:
    directory = Directory()
    for item in ({"pk": "TENANT#t_eu", "sk": "HOME", "homeRegion": EU, "status": "active"},
                 {"pk": "TENANT#t_us", "sk": "HOME", "homeRegion": US, "secondaryRegion": US_WEST},
                 {"pk": "USER#u_eu", "sk": "HOME", "homeRegion": EU},
                 {"pk": "USER#u_eu", "sk": "MEMBER#t_us", "tenantId": "t_us"},
                 {"pk": "KEY#hash", "sk": "KEY", "tenantId": "t_eu", "keyId": "key_1"}):
        directory.add(item)
    return directory


def test_items_in_their_owners_regions_are_in_place():
    audit = Audit(_directory())
    audit.item(EU, "ProjectsTable", {"tenantId": "t_eu", "id": "p"}, {"tenantId": "t_eu", "id": "p"})
    audit.item(US, "ProjectsTable", {"tenantId": "t_us", "id": "p"}, {"tenantId": "t_us", "id": "p"})
    audit.item(US_WEST, "ProjectsTable", {"tenantId": "t_us", "id": "p"}, {})  # its secondary region
    audit.item(EU, "UsersTable", {"pk": "USER#u_eu", "sk": "PROFILE"}, {})
    audit.item(US, "UsersTable", {"pk": "USER#u_eu", "sk": "MEMBER#t_us", "tenantId": "t_us"}, {})
    audit.item(US, "RateLimitsTable", {"pk": "ip#10.0.0.1"}, {})
    audit.object(EU, "tenants/t_eu/projects/p/files/a.txt")
    assert audit.findings == []
    assert (audit.cells[US].items, audit.cells[US].cell_records, audit.cells[EU].objects) == (3, 1, 1)


def test_an_item_outside_its_owners_regions_is_found_with_what_was_allowed():
    audit = Audit(_directory())
    audit.item(US, "ProjectsTable", {"tenantId": "t_eu", "id": "p"}, {"tenantId": "t_eu", "id": "p"})
    audit.item(US, "SessionsTable", {"id": "s", "userId": "u_eu"}, {"id": "s"})
    audit.object(US, "tenants/t_eu/projects/p/files/a.txt", "v1")
    found = [(f.region, f.where, f.owner, f.problem, f.allowed) for f in audit.findings]
    assert found == [(US, "ProjectsTable", "tenant t_eu", "outside its allowed regions", [EU]),
                     (US, "SessionsTable", "user u_eu", "outside its allowed regions", [EU]),
                     (US, "bucket", "tenant t_eu", "outside its allowed regions", [EU])]
    assert audit.findings[2].key == {"key": "tenants/t_eu/projects/p/files/a.txt", "version": "v1"}
    assert audit.cells[US].out_of_place == 3
    assert audit.summary()["outOfPlace"] == 3


def test_an_owner_the_directory_does_not_know_and_an_item_no_rule_places_are_found():
    audit = Audit(_directory())
    audit.item(US, "AgentsTable", {"tenantId": "t_gone", "id": "a"}, {})
    audit.item(US, "AgentsTable", {"id": "a"}, {})
    audit.object(US, "stray/object")
    assert [(f.owner, f.problem) for f in audit.findings] == [
        ("tenant t_gone", "its tenant is in no directory"), ("?", "no rule finds its tenant"),
        ("?", "no rule finds its tenant")]


def test_a_delivery_mark_is_its_webhooks_tenants():
    audit = Audit(_directory())
    audit.item(EU, "WebhooksTable", {"tenantId": "t_eu", "id": "wh_1"}, {})
    audit.item(EU, "WebhookDeliveriesTable", {"webhookId": "wh_1", "attemptKey": "!delivered#e"}, {})
    audit.item(US, "WebhookDeliveriesTable", {"webhookId": "wh_1", "attemptKey": "!delivered#f"}, {})
    audit.item(US, "WebhookDeliveriesTable", {"webhookId": "wh_unknown", "attemptKey": "!delivered#g"}, {})
    assert [(f.region, f.owner, f.problem) for f in audit.findings] == [
        (US, "tenant t_eu (webhook wh_1)", "outside its allowed regions"), (US, "?", "no rule finds its tenant")]


def test_directory_entries_without_a_home_or_outside_the_required_jurisdiction_are_found():
    directory = _directory()
    directory.add({"pk": "TENANT#t_strict", "sk": "HOME", "homeRegion": US})
    directory.add({"pk": "TENANT#t_nohome", "sk": "HOME", "status": "active"})
    directory.add({"pk": "TENANT#t_second", "sk": "HOME", "homeRegion": EU, "secondaryRegion": US})
    directory.add({"pk": "USER#u_nohome", "sk": "HOME"})
    audit = Audit(directory)
    required = {"regionPreferences": {"dataResidencyRequired": True, "dataResidencyRegion": "eu"}}
    audit.item(US, "TenantsTable", {"id": "t_strict", **required}, {"id": "t_strict"})
    audit.item(EU, "TenantsTable", {"id": "t_second", **required}, {"id": "t_second"})
    audit.item(EU, "TenantsTable", {"id": "t_eu", **required}, {"id": "t_eu"})  # home eu-central-1: fine
    audit.item(US, "TenantsTable", {"id": "t_us", "regionPreferences": {"dataResidencyRegion": "eu"}}, {})  # not required
    audit.directory_problems()
    directory_findings = sorted((f.owner, f.problem) for f in audit.findings if f.region == "directory")
    assert directory_findings == [
        ("tenant t_nohome", "no home region"),
        ("tenant t_second", "secondaryRegion us-east-1 is outside the required jurisdiction eu"),
        ("tenant t_strict", "homeRegion us-east-1 is outside the required jurisdiction eu"),
        ("user u_nohome", "no home region"),
    ]


def test_the_directory_keeps_the_latest_version_of_an_entry_seen_in_several_replicas():
    """A replica may lag: the tenant moved to the EU, the US replica does not know it yet."""
    directory = Directory()
    moved = {"pk": "TENANT#t1", "sk": "HOME", "homeRegion": EU, "updatedAt": "2026-01-02T00:00:00Z"}
    before = {"pk": "TENANT#t1", "sk": "HOME", "homeRegion": US, "updatedAt": "2026-01-01T00:00:00Z"}
    for first, second in ((moved, before), (before, moved)):
        directory.add(first)
        directory.add(second)
        assert directory.allowed(Owner("tenant", "t1")) == [EU]
    directory.add({"pk": "USER#u1", "sk": "HOME", "homeRegion": US})
    assert (directory.items, directory.allowed(Owner("user", "u1")), directory.allowed(Owner("user", "u2"))) == \
        (2, [US], None)



def _linked_audit() -> Audit:
    """t_eu (EU) and t_us (US); usr_eu homed in the EU, a member of t_eu; usr_us homed in the US, a member
    of t_us and of t_eu; t_eu's keys (one known from the directory, one from its table) and a sign-in each."""
    directory, links = Directory(), Links()
    for item in ({"pk": "TENANT#t_eu", "sk": "HOME", "homeRegion": EU},
                 {"pk": "TENANT#t_us", "sk": "HOME", "homeRegion": US},
                 {"pk": "USER#usr_eu", "sk": "HOME", "homeRegion": EU},
                 {"pk": "USER#usr_us", "sk": "HOME", "homeRegion": US},
                 {"pk": "USER#usr_eu", "sk": "MEMBER#t_eu", "tenantId": "t_eu"},
                 {"pk": "USER#usr_us", "sk": "MEMBER#t_us", "tenantId": "t_us"},
                 {"pk": "USER#usr_us", "sk": "MEMBER#t_eu", "tenantId": "t_eu"},
                 {"pk": "KEY#hash", "sk": "KEY", "tenantId": "t_eu", "keyId": "key_dir"}):
        directory.add(item)
        links.learn_directory(item)
    audit = Audit(directory, links)
    audit.item(EU, "ApiKeysTable", {"pk": "KEY#key_tab", "id": "key_tab", "tenantId": "t_eu"}, {})
    audit.item(EU, "SessionsTable", {"id": "ses_eu", "userId": "usr_eu", "tenantId": "t_eu"}, {})
    audit.item(US, "SessionsTable", {"id": "ses_us", "userId": "usr_us", "tenantId": "t_us"}, {})
    audit.item(EU, "UsersTable", {"pk": "EMAIL#eu@example.com", "sk": "EMAIL", "userId": "usr_eu"}, {})
    return audit


def _counters(audit: Audit, region: str, *pks: str) -> None:
    for pk in pks:
        audit.item(region, "RateLimitsTable", {"pk": pk, "hits": 1}, {"pk": pk})


def test_rate_limit_items_of_a_tenant_homed_elsewhere_are_found_through_what_they_count():
    audit = _linked_audit()
    _counters(audit, US, "tenant#t_eu", "streams#tenant#t_eu", "key_dir", "streams#key_tab", "ses_eu", "usr_eu",
              "login-account#eu@example.com")
    assert [(f.region, f.where, f.key["pk"], f.owner, f.problem, f.allowed) for f in audit.findings] == [
        (US, "RateLimitsTable", "tenant#t_eu", "tenant t_eu", "outside its allowed regions", [EU]),
        (US, "RateLimitsTable", "streams#tenant#t_eu", "tenant t_eu", "outside its allowed regions", [EU]),
        (US, "RateLimitsTable", "key_dir", "tenant t_eu (api_key key_dir)", "outside its allowed regions", [EU]),
        (US, "RateLimitsTable", "streams#key_tab", "tenant t_eu (api_key key_tab)", "outside its allowed regions",
         [EU]),
        (US, "RateLimitsTable", "ses_eu", "session ses_eu (user usr_eu, tenant t_eu)", "outside its allowed regions",
         [EU]),
        (US, "RateLimitsTable", "usr_eu", "user_credential usr_eu (user usr_eu, tenant t_eu)",
         "outside its allowed regions", [EU]),
        (US, "RateLimitsTable", "login-account#eu@example.com", "user usr_eu (email eu@example.com)",
         "outside its allowed regions", [EU]),
    ]


def test_rate_limit_items_where_their_tenant_or_member_is_served_are_in_place():
    """A member homed in another cell is counted in the tenant's cell and revoked in their own: both in place."""
    audit = _linked_audit()
    _counters(audit, EU, "tenant#t_eu", "key_dir", "streams#key_tab", "ses_eu", "usr_eu", "ses_us", "usr_us",
              "login-account#eu@example.com", "ip#10.0.0.1")
    _counters(audit, US, "tenant#t_us", "ses_us", "usr_us", "addr#register#10.0.0.1", "login-known#0af3")
    assert audit.findings == []
    assert (audit.cells[EU].cell_records, audit.cells[US].cell_records, audit.cells[US].opaque) == (1, 1, 1)


def test_rate_limit_items_of_credentials_or_accounts_no_item_names_are_counted_not_found():
    """A revoked sign-in's mark outlives the sign-in's item; failed sign-ins to an address with no account
    are counted too."""
    audit = _linked_audit()
    _counters(audit, US, "key_gone", "ses_gone", "login-account#nobody@example.com")
    assert (audit.findings, audit.cells[US].unresolved, audit.summary()["cells"][-1]["unresolved"]) == ([], 3, 3)


def test_rate_limit_items_of_a_tenant_that_moved_out_are_found_whenever_written():
    """A move deletes the tenant's rate counters and marks in the cell it leaves (its own and its keys'):
    any left there is out of place, whether written before the move's end or after."""
    audit = _linked_audit()
    audit.directory.add({"pk": "TENANT#t_eu", "sk": "MOVE", "status": "done", "fromRegion": US, "toRegion": EU,
                         "finishedAt": "2026-01-01T00:00:00.000Z"})
    before, after = 1767225600 - 60, 1767225600 + 60   # the move's end, 2026-01-01, a minute either side
    audit.item(US, "RateLimitsTable", {"pk": "tenant#t_eu", "windowStart": before, "hits": 3}, {"pk": "tenant#t_eu"})
    audit.item(US, "RateLimitsTable", {"pk": "key_tab", "windowStart": after, "hits": 1}, {"pk": "key_tab"})
    assert [(f.where, f.owner) for f in audit.findings] == [
        ("RateLimitsTable", "tenant t_eu"), ("RateLimitsTable", "tenant t_eu (api_key key_tab)")]


def test_every_queue_of_the_template_has_a_rule():
    """A new queue without a rule would be read by nobody: its tenants' messages could sit anywhere."""
    queues = {k for k, v in load()["Resources"].items() if v["Type"] == "AWS::SQS::Queue"}
    assert sorted(queues ^ set(QUEUE_RULES)) == []


@pytest.mark.parametrize("queue, body, owner", [
    ("WebhookQueue", {"detail-type": "project.created", "source": "svc", "detail": {"id": "evt_1", "tenantId": "t1"}},
     Owner("tenant", "t1")),
    ("WebhookDeadLetterQueue", {"detail": {"id": "evt_1", "tenantId": "t1"}}, Owner("tenant", "t1")),
    ("WebhookDeliveryQueue", {"event": {"id": "evt_1", "tenantId": "t1"}, "webhookId": "wh_1", "tenantId": "t1"},
     Owner("tenant", "t1")),
    ("WebhookDeliveryQueue", {"replayStep": {"replayId": "rpl_1", "webhookId": "wh_1", "tenantId": "t1",
                                             "position": "start"}}, Owner("tenant", "t1")),
    ("WebhookDeliveryDeadLetterQueue", {"event": {}, "webhookId": "wh_1", "tenantId": "t1"}, Owner("tenant", "t1")),
    ("ChatTurnQueue", {"tenantId": "t1", "sessionId": "chs_1", "messageId": "msg_1"}, Owner("tenant", "t1")),
    ("AgentRunDeadLetterQueue", {"tenantId": "t1", "runId": "run_1"}, Owner("tenant", "t1")),
    ("TenantMoveQueue", {"tenantId": "t1", "job": "replica"}, Owner("tenant", "t1")),
    ("ReplicaObjectsQueue", {"detail": {"object": {"key": "tenants/t1/projects/p/files/a.txt"}}},
     Owner("tenant", "t1")),
    ("TenantMoveDeadLetterQueue", {"detail": {"object": {"key": "tenants/t1/projects/p/files/a.txt"}}},
     Owner("tenant", "t1")),
    ("TenantMoveDeadLetterQueue", {"DDBStreamBatchInfo": {"shardId": "s"}, "requestContext": {}}, CELL),
    ("OutboxFailureQueue", {"DDBStreamBatchInfo": {"shardId": "s"}}, CELL),
    ("OutboxFailureQueue", {"tenantId": "t1"}, None),   # not a shape that queue carries
    ("ChatTurnQueue", {"sessionId": "chs_1"}, None),
])
def test_a_queues_rule_finds_the_messages_owner(queue, body, owner):
    assert message_owner(queue, json.dumps(body)) == owner


def test_a_body_that_is_not_json_has_no_owner():
    assert message_owner("ChatTurnQueue", "not json") is None


def test_messages_are_counted_by_tenant_and_those_out_of_place_found_once_per_queue_and_tenant():
    audit = _linked_audit()
    queue = QueueCount(US, "ChatTurnQueue", not_read=2)
    for n, tenant in enumerate(["t_eu", "t_us", "t_eu", "t_eu", "t_gone"]):
        audit.message(queue, f"m{n}", json.dumps({"tenantId": tenant, "sessionId": "s", "messageId": str(n)}))
    audit.message(queue, "m9", "{}")
    audit.queue_findings(queue)
    assert [(f.where, f.key, f.owner, f.problem) for f in audit.findings] == [
        ("ChatTurnQueue", {"messages": 3, "messageIds": ["m0", "m2", "m3"]}, "tenant t_eu", "outside its allowed regions"),
        ("ChatTurnQueue", {"messages": 1, "messageIds": ["m4"]}, "tenant t_gone", "its tenant is in no directory"),
        ("ChatTurnQueue", {"messages": 1, "messageIds": ["m9"]}, "?", "no rule finds its tenant"),
    ]
    assert audit.summary()["queues"] == [{"region": US, "queue": "ChatTurnQueue", "read": 6, "notRead": 2,
                                          "byOwner": {"?": 1, "tenant t_eu": 3, "tenant t_gone": 1, "tenant t_us": 1}}]
    assert (audit.cells[US].messages, audit.cells[US].out_of_place) == (6, 3)
