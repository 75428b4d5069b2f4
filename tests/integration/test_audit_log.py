"""The audit log through the real handlers on the moto server: every security-relevant action writes
exactly one entry (actor, source address, target, the fields changed) in the transaction of its
change, a failed change writes none, no entry holds a secret used along the way, the reads filter
and page newest first, the export is for the plans that include it and downloads JSON Lines, and
only audit:read reads any of it."""

from __future__ import annotations

import json
import secrets
import urllib.request
from typing import Any

import pytest

from tests.integration.test_idp_exchange import provider  # noqa: F401  (the identity provider's fixture)
from tests.support.fake_keys import access_key_id
from tests.support.functions import call

PASSWORD = "correct horse battery staple"
ADDRESS = "198.51.100.23"


def stored_entries(tenant_id: str) -> list[dict[str, Any]]:
    """The tenant's entries as stored, oldest first (ttl included)."""
    from svc_core.adapters import aws
    from svc_core.adapters.dynamo import from_item
    from svc_core.platform.config import settings
    found, query = [], {"TableName": settings().audit_log_table, "KeyConditionExpression": "tenantId = :t",
                        "ExpressionAttributeValues": {":t": {"S": tenant_id}}, "ConsistentRead": True}
    while True:
        answer = aws.client("dynamodb").query(**query)
        found += [from_item(i) for i in answer.get("Items", [])]
        if "LastEvaluatedKey" not in answer:
            return found
        query["ExclusiveStartKey"] = answer["LastEvaluatedKey"]


def whole_log() -> str:
    """Every stored entry of every tenant, as the table's raw items in JSON."""
    from svc_core.adapters import aws
    from svc_core.platform.config import settings
    items = []
    for page in aws.client("dynamodb").get_paginator("scan").paginate(TableName=settings().audit_log_table):
        items += page.get("Items", [])
    return json.dumps(items)


class Log:
    """A tenant's log, read a step at a time: new() is what the last step wrote."""

    def __init__(self, tenant_id: str, from_the_start: bool = False) -> None:
        self.tenant_id = tenant_id
        self.seen = set() if from_the_start else {e["id"] for e in stored_entries(tenant_id)}

    def new(self) -> list[dict[str, Any]]:
        fresh = [e for e in stored_entries(self.tenant_id) if e["id"] not in self.seen]
        self.seen |= {e["id"] for e in fresh}
        return fresh

    def one(self, action: str, actor: dict[str, str], target: tuple[str, str], source_ip: str = ADDRESS
            ) -> dict[str, Any]:
        """The one entry the last step wrote, checked: its action, actor, address and target."""
        fresh = self.new()
        assert [e["action"] for e in fresh] == [action], fresh
        (entry,) = fresh
        assert entry["actor"] == actor and entry["sourceIp"] == source_ip
        assert (entry["target"]["type"], entry["target"]["id"]) == target
        assert entry["tenantId"] == self.tenant_id and entry["id"].startswith("aud_")
        return entry


def ok(reply, status: int = 200):
    assert reply.status == status, reply
    return reply.data


def api(function: str, event: str, token: str, **kwargs):
    return call(function, event, token=token, source_ip=kwargs.pop("source_ip", ADDRESS), **kwargs)


def enterprise_tenant(stack) -> tuple[str, dict[str, Any], Log]:
    """A tenant on the enterprise plan (set by an operator: the service's own entry) and a key of all scopes."""
    from svc_core.domain import tenants
    tenant_id = stack.new_tenant()
    key = stack.new_key(tenant_id)
    log = Log(tenant_id)
    tenants.set_plan(tenant_id, "enterprise")
    entry = log.one("billing.plan_changed", {"type": "service", "id": "service"}, ("tenant", tenant_id), "")
    assert entry["changes"] == {"plan": {"old": "free", "new": "enterprise"}}
    return tenant_id, key, log


# ---- what the log records ------------------------------------------------------------------

def run_keys_settings_webhooks_secrets_and_billing(stack, capsys) -> tuple[str, Log, list[str]]:
    """Every tenant action an API key can take that the log records, each checked as it is written;
    the tenant, its log and every secret value used or answered along the way."""
    from svc_core.domain import billing
    tenant_id, key, log = enterprise_tenant(stack)
    by_key = {"type": "api_key", "id": key["id"]}
    used = [key["key"]]

    made = ok(api("api_keys", "ApiKeys-CreateKey", key["key"], body={
        "name": "ci", "type": "sdk", "environment": "Production", "scopes": ["projects:read"]}), 201)
    used.append(made["key"])
    entry = log.one("api_key.created", by_key, ("api_key", made["id"]))
    assert entry["changes"]["name"] == {"old": None, "new": "ci"}
    assert entry["changes"]["scopes"] == {"old": None, "new": ["projects:read"]}
    rotated = ok(api("api_keys", "ApiKeys-RotateKey", key["key"], path_params={"id": made["id"]},
                     body={"overlapSeconds": 0}))
    used.append(rotated["key"])
    entry = log.one("api_key.rotated", by_key, ("api_key", made["id"]))
    assert entry["changes"]["generation"] == {"old": 1, "new": 2}
    ok(api("api_keys", "ApiKeys-RevokeKey", key["key"], path_params={"id": made["id"]}))
    entry = log.one("api_key.revoked", by_key, ("api_key", made["id"]))
    assert entry["changes"] == {"status": {"old": "active", "new": "revoked"}}

    ok(api("tenants", "Tenants-UpdateTenantSettings", key["key"], path_params={"id": tenant_id},
           body={"timezone": "Europe/Paris", "ipAllowlist": ["198.51.100.0/24"]}))
    entry = log.one("tenant.settings_changed", by_key, ("tenant", tenant_id))
    assert entry["changes"] == {"ipAllowlist": {"old": [], "new": ["198.51.100.0/24"]},
                                "timezone": {"old": "UTC", "new": "Europe/Paris"}}
    ok(api("regions", "Regions-UpdatePreferences", key["key"], path_params={"tenantId": tenant_id},
           body={"primaryRegion": "eu-west-1"}))
    entry = log.one("tenant.region_preferences_changed", by_key, ("tenant", tenant_id))
    assert entry["changes"] == {"primaryRegion": {"old": "us-east-1", "new": "eu-west-1"}}
    access, secret_key = access_key_id(), secrets.token_urlsafe(30)
    used += [access, secret_key]
    ok(api("regions", "Regions-PutStorage", key["key"], path_params={"tenantId": tenant_id}, body={
        "storageMode": "byos", "byosProvider": "s3", "byosBucket": "acme-audit", "byosRegion": "us-east-1",
        "byosAccessKey": access, "byosSecretKey": secret_key}))
    entry = log.one("tenant.storage_changed", by_key, ("tenant", tenant_id))
    assert entry["changes"]["storageMode"] == {"old": "platform", "new": "byos"}
    assert entry["changes"]["byosBucket"] == {"old": None, "new": "acme-audit"}
    assert entry["changes"]["byosKeys"] == {"old": "none", "new": "replaced"}

    first, second = (billing_secret() for _ in range(2))
    used += [first, second]
    hook = ok(api("webhooks", "Webhooks-CreateWebhook", key["key"], body={
        "url": "https://hooks.example.com/audit", "events": ["*"], "secret": first}), 201)
    entry = log.one("webhook.created", by_key, ("webhook", hook["id"]))
    assert entry["changes"]["url"] == {"old": None, "new": "https://hooks.example.com/audit"}
    assert entry["changes"]["secretSource"] == {"old": None, "new": "supplied"}
    ok(api("webhooks", "Webhooks-UpdateWebhook", key["key"], path_params={"id": hook["id"]},
           body={"description": "audited"}))
    entry = log.one("webhook.updated", by_key, ("webhook", hook["id"]))
    assert entry["changes"] == {"description": {"old": None, "new": "audited"}}
    ok(api("webhooks", "Webhooks-RotateWebhookSecret", key["key"], path_params={"id": hook["id"]},
           body={"secret": second, "overlapSeconds": 0}))
    entry = log.one("webhook.secret_rotated", by_key, ("webhook", hook["id"]))
    assert entry["changes"]["overlapSeconds"] == {"old": None, "new": 0}
    generated = ok(api("webhooks", "Webhooks-RotateWebhookSecret", key["key"], path_params={"id": hook["id"]},
                       body={"overlapSeconds": 60}))
    used.append(generated["secret"])
    log.one("webhook.secret_rotated", by_key, ("webhook", hook["id"]))
    ok(api("webhooks", "Webhooks-DeleteWebhook", key["key"], path_params={"id": hook["id"]}))
    entry = log.one("webhook.deleted", by_key, ("webhook", hook["id"]))
    assert entry["changes"]["url"] == {"old": "https://hooks.example.com/audit", "new": None}

    values = [secrets.token_urlsafe(24) for _ in range(2)]
    used += values
    kept = ok(api("secrets", "Secrets-CreateSecret", key["key"], body={"name": "STRIPE_KEY", "value": values[0]}),
              201)
    entry = log.one("secret.created", by_key, ("secret", kept["id"]))
    assert entry["changes"]["name"] == {"old": None, "new": "STRIPE_KEY"}
    ok(api("secrets", "Secrets-UpdateSecret", key["key"], path_params={"id": kept["id"]}, body={"value": values[1]}))
    entry = log.one("secret.updated", by_key, ("secret", kept["id"]))
    assert entry["changes"] == {"version": {"old": 1, "new": 2}}
    ok(api("secrets", "Secrets-DeleteSecret", key["key"], path_params={"id": kept["id"]}))
    log.one("secret.deleted", by_key, ("secret", kept["id"]))

    bought = ok(api("billing", "Billing-PurchaseCredits", key["key"], body={"pack": "credits_25"}), 201)
    entry = log.one("billing.credits_purchased", by_key, ("purchase", bought["id"]))
    assert entry["changes"]["credits"] == {"old": None, "new": 25}
    (card,) = billing.issue_gift_cards(5, 1, 30, "ops")
    used.append(card["code"])
    ok(api("billing", "Billing-RedeemGiftCard", key["key"], body={"code": card["code"]}))
    entry = log.one("billing.gift_card_redeemed", by_key, ("gift_card", card["id"]))
    assert entry["changes"] == {"credits": {"old": None, "new": 5}}
    ok(api("billing", "Billing-CreateSubscription", key["key"], body={"plan": "growth"}), 201)
    entry = log.one("billing.plan_changed", by_key, ("tenant", tenant_id))
    assert entry["changes"] == {"plan": {"old": "enterprise", "new": "growth"}}
    return tenant_id, log, used


def billing_secret() -> str:
    import base64
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def run_sign_ups_and_sign_ins(stack) -> tuple[str, list[str]]:
    """Registration, tenants made by a user, sign-ins of an owner (password, device login) and of a
    member (not recorded), each checked; the first tenant and every secret used or answered."""
    from svc_core.data import users_table
    from svc_core.data.common import transact
    from tests.integration.test_device_login import exchange, start
    registered = ok(call("auth", "Auth-Register", source_ip=ADDRESS, body={
        "email": "ada@example.com", "password": PASSWORD, "name": "Ada"}), 201)
    tenant_id, ada = registered["tenant"]["id"], registered["user"]["id"]
    by_ada = {"type": "user", "id": ada}
    log = Log(tenant_id, from_the_start=True)
    entry = log.one("tenant.created", by_ada, ("tenant", tenant_id))
    assert entry["changes"]["name"] == {"old": None, "new": "Ada's workspace"}

    pair = ok(call("auth", "Auth-Login", source_ip="203.0.113.77",
                   body={"email": "ada@example.com", "password": PASSWORD}))
    entry = log.one("user.signed_in", by_ada, ("user", ada), "203.0.113.77")
    assert entry["changes"]["method"] == {"old": None, "new": "password"}
    assert entry["changes"]["role"] == {"old": None, "new": "owner"}
    used = [PASSWORD, pair["accessToken"], pair["refreshToken"]]

    second = ok(api("tenants", "Tenants-CreateTenant", pair["accessToken"], body={"name": "Second"}), 201)
    Log(second["id"], from_the_start=True).one("tenant.created", by_ada, ("tenant", second["id"]))
    assert log.new() == []  # recorded in the new tenant's log

    started, state, verifier = start()
    ok(call("auth", "Auth-CliComplete", token=pair["accessToken"],
            body={"loginId": started.data["loginId"], "state": state}))
    assert log.new() == []  # approving is no sign-in; the exchange is
    cli = exchange(started.data["loginId"], verifier)
    assert cli.status == 200, cli
    used.append(cli.data["token"])
    # The exchange comes from the CLI's machine (the test's default address), not the browser's.
    entry = log.one("user.signed_in", by_ada, ("user", ada), "203.0.113.10")
    assert entry["changes"]["method"] == {"old": None, "new": "device_login"}
    assert entry["changes"]["apiKeyId"] == {"old": None, "new": cli.data["keyId"]}

    # A member's sign-in is not recorded (only owners' and admins').
    bob = ok(call("auth", "Auth-Register", body={"email": "bob@example.com", "password": PASSWORD, "name": "Bob"}),
             201)["user"]
    transact([users_table.put_membership(bob["id"], tenant_id, "member", "2026-11-26T00:00:00Z",
                                         email=bob["email"], name=bob["name"])])
    member = ok(call("auth", "Auth-Login", body={"email": "bob@example.com", "password": PASSWORD,
                                                 "tenantId": tenant_id}))
    assert member["tenant"]["role"] == "member" and log.new() == []
    return tenant_id, used


def test_each_action_writes_one_entry_with_its_actor_address_target_and_changes(stack, capsys):
    run_keys_settings_webhooks_secrets_and_billing(stack, capsys)


def test_sign_ups_tenants_and_sign_ins_of_owners_are_recorded_and_members_sign_ins_are_not(stack):
    run_sign_ups_and_sign_ins(stack)


def test_an_identity_provider_sign_in_of_an_owner_is_an_entry_of_its_own(stack, provider):  # noqa: F811
    first = ok(call("auth", "Auth-Exchange", source_ip=ADDRESS, body={"token": provider.token()}))
    tenant_id, user_id = first["tenant"]["id"], first["user"]["id"]
    by_user = {"type": "user", "id": user_id}
    log = Log(tenant_id, from_the_start=True)
    fresh = log.new()
    assert [e["action"] for e in fresh] == ["tenant.created", "user.signed_in"]
    assert all(e["actor"] == by_user and e["sourceIp"] == ADDRESS for e in fresh)
    ok(call("auth", "Auth-Exchange", source_ip="203.0.113.5", body={"token": provider.token()}))
    entry = log.one("user.signed_in", by_user, ("user", user_id), "203.0.113.5")
    assert entry["changes"]["method"] == {"old": None, "new": "identity_provider"}


def test_no_entry_holds_a_secret_value_used_by_any_of_the_actions(stack, capsys):
    _, _, used = run_keys_settings_webhooks_secrets_and_billing(stack, capsys)
    _, more = run_sign_ups_and_sign_ins(stack)
    logged = whole_log()
    assert json.loads(logged), "the actions wrote entries"
    for value in used + more:
        assert value not in logged
        assert value[4:-4] not in logged  # nor most of one (a prefix or hint is no value)


# ---- failed changes ------------------------------------------------------------------------

def test_a_refused_or_failed_change_writes_no_entry(stack, monkeypatch):
    from svc_core.data import secrets_table, webhooks_table
    tenant_id, key, log = enterprise_tenant(stack)
    narrow = stack.new_key(tenant_id, ["keys:write", "keys:read"])
    refused = api("api_keys", "ApiKeys-CreateKey", narrow["key"], body={
        "name": "wide", "type": "sdk", "environment": "Production", "scopes": ["billing:write"]})
    assert refused.status == 403
    assert api("tenants", "Tenants-UpdateTenantSettings", key["key"], path_params={"id": tenant_id},
               body={"ipAllowlist": ["not an address"]}).status == 400
    assert call("auth", "Auth-Login", body={"email": "nobody@example.com", "password": "wrong"}).status == 401
    assert log.new() == []

    # A change whose own write fails (a lost update, a name taken meanwhile) takes its entry with it.
    hook = ok(api("webhooks", "Webhooks-CreateWebhook", key["key"], body={
        "url": "https://hooks.example.com/a", "events": ["*"], "secret": billing_secret()}), 201)
    log.new()
    real_replace = webhooks_table.replace

    def changed_meanwhile(tenant, record, expected_version, **options):
        return real_replace(tenant, record, expected_version - 1, **options)

    monkeypatch.setattr(webhooks_table, "replace", changed_meanwhile)
    assert api("webhooks", "Webhooks-UpdateWebhook", key["key"], path_params={"id": hook["id"]},
               body={"description": "lost"}).status == 409
    real_create = secrets_table.create

    def name_taken_meanwhile(tenant, record, **options):
        real_create(tenant, {**record, "id": "sec_01JD2Q7ZB6V8S3K4X9W2M5N7PB"})
        real_create(tenant, record, **options)

    monkeypatch.setattr(secrets_table, "create", name_taken_meanwhile)
    assert api("secrets", "Secrets-CreateSecret", key["key"], body={"name": "RACED", "value": "v"}).status == 409
    assert log.new() == []


# ---- reading ---------------------------------------------------------------------------------

def read(token: str, **query) -> Any:
    return api("audit", "Audit-ListAuditLog", token, query={k: str(v) for k, v in query.items()} or None)


def test_an_entry_made_outside_a_request_reads_with_request_id_null_as_the_document_requires(stack):
    """The service's own change (an operator's plan) has no request: its entry answers requestId null,
    a field the document requires, not an entry without it."""
    _, key, _ = enterprise_tenant(stack)
    (entry,) = [e for e in ok(read(key["key"]))["items"] if e["action"] == "billing.plan_changed"]
    assert "requestId" in entry and entry["requestId"] is None


def test_filters_and_pages_newest_first(stack):
    tenant_id, key, _ = enterprise_tenant(stack)
    owner = stack.user_token(tenant_id, "owner", "usr_01JD2Q7ZB6V8S3K4X9W2M5N7PA", member=True)
    made = []
    for n in range(3):
        made.append(ok(api("api_keys", "ApiKeys-CreateKey", key["key"], body={
            "name": f"k{n}", "type": "sdk", "environment": "Production", "scopes": ["projects:read"]}), 201))
    by_owner = ok(api("api_keys", "ApiKeys-CreateKey", owner, body={
        "name": "owner's", "type": "sdk", "environment": "Production", "scopes": ["projects:read"]}), 201)
    ok(api("api_keys", "ApiKeys-RevokeKey", owner, path_params={"id": made[0]["id"]}))
    everything = stored_entries(tenant_id)
    newest_first = sorted(everything, key=lambda e: e["id"], reverse=True)
    # As shown: without the ttl, and requestId null where none was stored (an entry made outside a request).
    shown = [{"requestId": None, **{k: v for k, v in e.items() if k != "ttl"}} for e in newest_first]

    assert ok(read(owner))["items"] == shown and ok(read(key["key"]))["nextCursor"] is None
    pages, cursor = [], None
    while True:
        page = ok(read(owner, limit=2, **({"cursor": cursor} if cursor else {})))
        pages.append(page["items"])
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert [e for p in pages for e in p] == shown and all(len(p) <= 2 for p in pages)

    def ids(**query):
        return [e["id"] for e in ok(read(owner, limit=100, **query))["items"]]

    assert ids(actor=key["id"], action="api_key.created") == [e["id"] for e in shown if e["actor"]["id"] == key["id"]
                                                                and e["action"] == "api_key.created"]
    assert len(ids(actor=key["id"], action="api_key.created")) == 3
    assert ids(actor="usr_01JD2Q7ZB6V8S3K4X9W2M5N7PA") == [e["id"] for e in shown if e["actor"]["type"] == "user"]
    assert ids(target=made[0]["id"]) == [e["id"] for e in shown if e["target"]["id"] == made[0]["id"]]
    assert [e["action"] for e in ok(read(owner, target=made[0]["id"]))["items"]] == ["api_key.revoked",
                                                                                    "api_key.created"]
    assert ids(target=by_owner["id"], action="api_key.revoked") == []
    middle = [e for e in shown if e["action"] == "api_key.created"][1]["created_at"]
    assert ids(since=middle) == [e["id"] for e in shown if e["created_at"] >= middle]
    assert ids(until=middle) == [e["id"] for e in shown if e["created_at"] <= middle]
    assert ids(since="2999-01-01T00:00:00Z") == []
    bad = read(owner, action="project.created")
    assert bad.status == 400 and bad.error["code"] == "VALIDATION_ERROR"
    assert read(owner, since="yesterday").status == 400 and read(owner, actor="someone").status == 400


def test_an_entry_past_its_retention_is_not_shown(stack, monkeypatch):
    from svc_core.domain import audit
    from svc_core.platform import timeutil
    tenant_id, key, _ = enterprise_tenant(stack)
    assert len(ok(read(key["key"]))["items"]) == 1
    later = timeutil.now() + audit.RETENTION_DAYS * 86400 + 60
    monkeypatch.setattr(timeutil, "now", lambda: later)
    assert ok(read(stack.user_token(tenant_id, "owner")))["items"] == []


def test_members_and_keys_without_audit_read_are_refused(stack):
    tenant_id, key, _ = enterprise_tenant(stack)
    narrow = stack.new_key(tenant_id, ["keys:read", "projects:read"])["key"]
    member = stack.user_token(tenant_id, "member")
    admin = stack.user_token(tenant_id, "admin")
    for token in (narrow, member):
        for reply in (read(token), api("audit", "Audit-ExportAuditLog", token)):
            assert reply.status == 403 and reply.error["code"] == "FORBIDDEN", reply
    assert read(admin).status == 200 and api("audit", "Audit-ExportAuditLog", admin).status == 200


# ---- export ---------------------------------------------------------------------------------

def export(token: str, **query):
    return api("audit", "Audit-ExportAuditLog", token, query={k: str(v) for k, v in query.items()} or None)


def test_the_export_needs_the_plan_and_downloads_the_entries_as_json_lines(stack):
    from svc_core.domain import tenants
    tenant_id = stack.new_tenant()
    key = stack.new_key(tenant_id)
    refused = export(key["key"])
    assert refused.status == 403 and refused.error["details"] == {
        "feature": "audit_log_export", "requiredPlan": "enterprise", "currentPlan": "free"}
    tenants.set_plan(tenant_id, "enterprise")
    for n in range(2):
        ok(api("api_keys", "ApiKeys-CreateKey", key["key"], body={
            "name": f"k{n}", "type": "sdk", "environment": "Production", "scopes": ["projects:read"]}), 201)
    shown = ok(read(key["key"]))["items"]
    made = ok(export(key["key"]))
    assert made["entries"] == 3 and made["id"].startswith("aex_") and made["expires_at"]
    with urllib.request.urlopen(made["url"], timeout=10) as answer:
        lines = answer.read().decode().splitlines()
    assert [json.loads(line) for line in lines] == shown
    only_keys = ok(export(key["key"], action="api_key.created"))
    with urllib.request.urlopen(only_keys["url"], timeout=10) as answer:
        assert [json.loads(line)["action"] for line in answer.read().decode().splitlines()] == ["api_key.created"] * 2


def test_an_export_of_more_entries_than_its_cap_is_refused(stack, monkeypatch):
    from svc_core.domain import audit_log, tenants
    tenant_id = stack.new_tenant()
    key = stack.new_key(tenant_id)
    tenants.set_plan(tenant_id, "enterprise")
    ok(api("api_keys", "ApiKeys-CreateKey", key["key"], body={
        "name": "one", "type": "sdk", "environment": "Production", "scopes": ["projects:read"]}), 201)
    monkeypatch.setattr(audit_log, "EXPORT_LIMIT", 1)
    refused = export(key["key"])
    assert refused.status == 400 and refused.error["details"]["limit"] == 1
    assert ok(export(key["key"], action="api_key.created"))["entries"] == 1


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE"])
def test_no_route_changes_or_deletes_an_entry(stack, method):
    tenant_id, key, _ = enterprise_tenant(stack)
    reply = api("audit", "Audit-ListAuditLog", key["key"], method=method)
    assert reply.status == 405
    assert len(stored_entries(tenant_id)) == 1
