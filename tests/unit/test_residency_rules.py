"""The residency audit's core (ops/residency.py): every table has a rule that finds its items' owner, and
the audit places each item against the directory's regions, without AWS."""

from __future__ import annotations

import pytest

from devstack.template import load
from ops.residency import CELL, DIRECTORY, OPAQUE, TABLE_RULES, Audit, Directory, Owner, object_owner

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
    ("UsersTable", {"pk": "SOMETHING", "sk": "NEW"}, None),
    ("SessionsTable", {"id": "s1", "userId": "u1", "tenantId": "t1"}, Owner("user", "u1")),
    ("CliSessionsTable", {"loginId": "l1", "status": "pending"}, CELL),
    ("CliSessionsTable", {"loginId": "l1", "status": "approved", "userId": "u1", "tenantId": "t1"},
     Owner("user", "u1")),
    ("ApiKeysTable", {"pk": "SECRET#abc", "tenantId": "t1"}, Owner("tenant", "t1")),
    ("RateLimitsTable", {"pk": "key_1", "hits": 3}, CELL),
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
    audit.item(US, "RateLimitsTable", {"pk": "x"}, {})
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
        (US, "tenant t_eu", "outside its allowed regions"), (US, "?", "no rule finds its tenant")]


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
