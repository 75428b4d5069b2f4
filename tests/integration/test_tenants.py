"""Tenants: list, create, read, settings; plans set by operators; the IP allowlist of API keys;
a suspended tenant; the plan's rate limit; and every tenant endpoint across tenants."""

from __future__ import annotations

import json

import pytest

from ops.__main__ import main as ops
from tests.support.functions import call

PASSWORD = "correct horse battery staple"


def signed_in(email: str, tenant_id: str | None = None) -> dict:
    """Register (once) and sign in; the token pair with user and tenant."""
    call("auth", "Auth-Register", body={"email": email, "password": PASSWORD, "name": email.split("@")[0]})
    body = {"email": email, "password": PASSWORD, **({"tenantId": tenant_id} if tenant_id else {})}
    return call("auth", "Auth-Login", body=body).data


def tenants_api(event: str, token: str, **kwargs):
    return call("tenants", f"Tenants-{event}", token=token, **kwargs)


def operator(*argv: str) -> int:
    return ops(list(argv))


def stored(stack, tenant_id: str) -> dict:
    return stack.client("dynamodb").get_item(TableName="TenantsTable", Key={"id": {"S": tenant_id}})["Item"]


def test_a_user_creates_a_tenant_owns_it_and_lists_both(stack):
    ada = signed_in("ada@example.com")
    made = tenants_api("CreateTenant", ada["accessToken"], body={"name": "  Analytical Engines  "})
    assert made.status == 201, made
    assert made.data["name"] == "Analytical Engines" and made.data["role"] == "owner"
    assert made.data["plan"] == "free" and made.data["planDetails"]["limits"]["seats"] == 3
    assert made.data["settings"]["ipAllowlist"] == [] and made.data["settings"]["timezone"] == "UTC"
    listed = tenants_api("ListTenants", ada["accessToken"]).data
    assert [t["id"] for t in listed["items"]] == [ada["tenant"]["id"], made.data["id"]]
    assert listed["nextCursor"] is None
    from svc_core.adapters.dynamo import from_item
    events = [from_item(e) for e in stack.client("dynamodb").scan(TableName="OutboxTable")["Items"]]
    assert made.data["id"] in [e["data"]["id"] for e in events if e["type"] == "tenant.created"]
    # the new tenant is one the user may now get a token for
    assert call("auth", "Auth-Refresh", body={"refreshToken": ada["refreshToken"], "tenantId": made.data["id"]}
                ).data["tenant"]["id"] == made.data["id"]


def test_an_api_key_sees_only_its_own_tenant_and_cannot_create_one(stack):
    tenant_id, key = stack.tenant_with_key()
    listed = tenants_api("ListTenants", key).data["items"]
    assert [(t["id"], t["role"]) for t in listed] == [(tenant_id, "api_key")]
    refused = tenants_api("CreateTenant", key, body={"name": "Shadow"})
    assert refused.status == 403 and refused.error["code"] == "FORBIDDEN"
    assert stack.client("dynamodb").scan(TableName="TenantsTable")["Count"] == 1


def test_owners_change_settings_members_may_not_and_null_resets(stack):
    ada = signed_in("ada@example.com")
    tenant_id = ada["tenant"]["id"]
    changed = tenants_api("UpdateTenantSettings", ada["accessToken"], path_params={"id": tenant_id},
                          body={"displayName": "Ada's Lab", "timezone": "Europe/Berlin",
                                "billingEmail": "billing@example.com", "defaultProjectLanguage": "python"})
    assert changed.status == 200, changed
    assert changed.data["settings"] == {"displayName": "Ada's Lab", "timezone": "Europe/Berlin",
                                        "billingEmail": "billing@example.com", "defaultProjectLanguage": "python",
                                        "ipAllowlist": []}
    reset = tenants_api("UpdateTenantSettings", ada["accessToken"], path_params={"id": tenant_id},
                        body={"timezone": None})
    assert reset.data["settings"]["timezone"] == "UTC" and reset.data["settings"]["displayName"] == "Ada's Lab"
    read = tenants_api("GetTenant", ada["accessToken"], path_params={"id": tenant_id}).data
    assert read["settings"] == reset.data["settings"]

    _, member_key = stack.tenant_with_key(["tenants:read"])  # a key without tenants:write
    refused = tenants_api("UpdateTenantSettings", member_key, path_params={"id": tenant_id},
                          body={"displayName": "x"})
    assert refused.status == 403 and refused.error["details"]["requiredScope"] == "tenants:write"


@pytest.mark.parametrize("body, field", [
    ({"ipAllowlist": ["10.0.0.0/33"]}, "ipAllowlist"),
    ({"ipAllowlist": ["not-an-address"]}, "ipAllowlist"),
    ({"ipAllowlist": ["2001:db8::/129"]}, "ipAllowlist"),
    ({"ipAllowlist": ["10.0.0.0/8"] * 101}, "ipAllowlist"),
    ({"timezone": "Mars/Olympus_Mons"}, "timezone"),
    ({"billingEmail": "nobody"}, "billingEmail"),
    ({"displayName": "   "}, "displayName"),
    ({"colour": "blue"}, "colour"),
    ({}, None),
])
def test_bad_settings_are_400_naming_the_field_and_change_nothing(stack, body, field):
    tenant_id, key = stack.tenant_with_key()
    operator("tenants", "set-plan", tenant_id, "starter")
    before = stored(stack, tenant_id)
    answer = tenants_api("UpdateTenantSettings", key, path_params={"id": tenant_id}, body=body)
    assert answer.status == 400 and answer.error["code"] == "VALIDATION_ERROR", answer
    if field:
        assert field in [f["field"].split(".")[0] for f in answer.error["details"]["fields"]], answer
    assert stored(stack, tenant_id) == before


def test_the_allowlist_needs_its_plan_and_binds_api_keys_not_users(stack, capsys):
    ada = signed_in("ada@example.com")
    tenant_id = ada["tenant"]["id"]
    key = call("api_keys", "ApiKeys-CreateKey", token=ada["accessToken"],
               body={"name": "backend", "type": "sdk", "environment": "Production"}).data["key"]
    allowlist = {"ipAllowlist": ["203.0.113.0/24", "2001:db8::/32", "198.51.100.7"]}

    free = tenants_api("UpdateTenantSettings", ada["accessToken"], path_params={"id": tenant_id}, body=allowlist)
    assert free.status == 403 and free.error["details"]["requiredPlan"] == "starter"
    assert free.error["details"]["currentPlan"] == "free"

    assert operator("tenants", "set-plan", tenant_id, "starter") == 0
    assert json.loads(capsys.readouterr().out)["plan"] == "starter"
    applied = tenants_api("UpdateTenantSettings", ada["accessToken"], path_params={"id": tenant_id}, body=allowlist)
    assert applied.status == 200, applied
    assert applied.data["settings"]["ipAllowlist"] == ["203.0.113.0/24", "2001:db8::/32", "198.51.100.7/32"]

    def projects(credential, ip, **kwargs):
        return call("projects", "Projects-ListProjects", token=credential, source_ip=ip, **kwargs)

    assert projects(key, "203.0.113.77").status == 200
    assert projects(key, "198.51.100.7").status == 200
    assert projects(key, "2001:db8:1::5").status == 200
    assert projects(key, "::ffff:203.0.113.9").status == 200  # an IPv4 address in IPv6 form
    outside = projects(key, "192.0.2.1")
    assert outside.status == 403 and outside.error["details"]["reason"] == "ip_not_allowed"
    assert "x-ratelimit-limit" in outside.headers
    # A client's X-Forwarded-For is never believed: only API Gateway's sourceIp counts.
    assert projects(key, "192.0.2.1", headers={"X-Forwarded-For": "203.0.113.77"}).status == 403
    assert projects(key, "2001:db9::1").status == 403
    assert projects(ada["accessToken"], "192.0.2.1").status == 200  # users sign in from anywhere

    cleared = tenants_api("UpdateTenantSettings", ada["accessToken"], path_params={"id": tenant_id},
                          body={"ipAllowlist": None})
    assert cleared.data["settings"]["ipAllowlist"] == []
    assert projects(key, "192.0.2.1").status == 200


def test_another_container_applies_an_allowlist_within_the_cache_time(stack, monkeypatch):
    from svc_core.auth import tenant_policy
    from svc_core.platform import timeutil
    tenant_id, key = stack.tenant_with_key()
    operator("tenants", "set-plan", tenant_id, "starter")
    now = [timeutil.now()]
    monkeypatch.setattr(timeutil, "now", lambda: now[0])
    assert call("projects", "Projects-ListProjects", token=key, source_ip="192.0.2.1").status == 200  # cached
    from svc_core.data import tenants_table
    tenants_table.set_section(tenant_id, "settings", {"ipAllowlist": ["203.0.113.0/24"]}, "2026-01-01T00:00:00Z")
    from devstack import iam
    with iam.acting_as("ProjectsFunction"):  # the projects function's container still holds the old policy
        assert tenant_policy.policy_of(tenant_id).allowlist == ()
    now[0] += 61
    assert call("projects", "Projects-ListProjects", token=key, source_ip="192.0.2.1").status == 403


def test_a_suspended_tenant_is_refused_and_the_plan_sets_the_rate_limit(stack):
    tenant_id, key = stack.tenant_with_key()
    base = int(call("projects", "Projects-ListProjects", token=key).headers["x-ratelimit-limit"])
    operator("tenants", "set-plan", tenant_id, "growth")
    assert int(call("projects", "Projects-ListProjects", token=key).headers["x-ratelimit-limit"]) == base * 5
    operator("tenants", "suspend", tenant_id)
    refused = call("projects", "Projects-ListProjects", token=key)
    assert refused.status == 403 and refused.error["details"]["reason"] == "tenant_suspended"
    operator("tenants", "activate", tenant_id)
    assert call("projects", "Projects-ListProjects", token=key).status == 200
    assert operator("tenants", "suspend", "ten_nosuchtenant") == 1


def test_every_tenant_endpoint_refuses_another_tenants_id_and_credential(stack):
    ada, bob = signed_in("ada@example.com"), signed_in("bob@example.com")
    ada_tenant, bob_tenant = ada["tenant"]["id"], bob["tenant"]["id"]
    _, bob_key = stack.tenant_with_key()
    before = stored(stack, ada_tenant)
    for token in (bob["accessToken"], bob_key):
        read = tenants_api("GetTenant", token, path_params={"id": ada_tenant})
        assert read.status == 404 and read.error["code"] == "RESOURCE_NOT_FOUND"
        write = tenants_api("UpdateTenantSettings", token, path_params={"id": ada_tenant},
                            body={"displayName": "taken over"})
        assert write.status == 404
        assert ada_tenant not in [t["id"] for t in tenants_api("ListTenants", token).data["items"]]
    assert stored(stack, ada_tenant) == before
    # A user's token for one tenant does not change another of theirs: refresh for it first.
    second = tenants_api("CreateTenant", ada["accessToken"], body={"name": "Second"}).data["id"]
    assert tenants_api("GetTenant", ada["accessToken"], path_params={"id": second}).status == 200
    assert tenants_api("UpdateTenantSettings", ada["accessToken"], path_params={"id": second},
                       body={"displayName": "x"}).status == 404
    assert bob_tenant != ada_tenant


# ---- the tenants one user may create; tenant.created where a webhook hears it -----------------

def outbox(stack) -> list[dict]:
    from svc_core.adapters.dynamo import from_item
    return [from_item(e) for e in stack.client("dynamodb").scan(TableName="OutboxTable")["Items"]]


def profile(user_id: str) -> dict:
    from svc_core.data import users_table
    return users_table.get(user_id)


def test_tenant_created_is_recorded_in_the_new_tenant_and_the_creators_whose_webhook_receives_it(
        stack, path, receivers):
    from svc_core.contracts import events
    from tests.support.webhook_receiver import register
    ada = signed_in("ada@example.com")
    home = ada["tenant"]["id"]
    receiver = receivers()
    register(home, receiver.url, receiver.secret, events=["tenant.created"])
    made = tenants_api("CreateTenant", ada["accessToken"], body={"name": "Second"}).data
    recorded = [e for e in outbox(stack) if e["type"] == "tenant.created" and e["data"]["id"] == made["id"]]
    assert sorted(e["tenantId"] for e in recorded) == sorted([made["id"], home])
    assert recorded[0]["id"] != recorded[1]["id"]
    assert recorded[0]["data"] == recorded[1]["data"] == {k: made[k] for k in ("id", "name", "plan", "status",
                                                                                "created_at")}
    # The creator's tenant's copy takes the path every event takes, to that tenant's webhook.
    heard = next(e for e in recorded if e["tenantId"] == home)
    path.publish(events.Event.of({k: heard[k] for k in ("id", "type", "timestamp", "tenantId", "data")}))
    path.pump()
    [delivery] = receiver.deliveries
    assert delivery.verify_error is None
    assert (delivery.payload["type"], delivery.payload["tenantId"], delivery.payload["data"]["id"]) == (
        "tenant.created", home, made["id"])


def test_a_user_creates_at_most_the_ceiling_of_tenants_their_first_included(stack):
    ada = signed_in("ada@example.com")
    for n in range(4):   # TENANTS_PER_USER: 5, registration's the first
        assert tenants_api("CreateTenant", ada["accessToken"], body={"name": f"Tenant {n}"}).status == 201
    assert profile(ada["user"]["id"])["tenantsCreated"] == 5
    tenants_before = stack.client("dynamodb").scan(TableName="TenantsTable")["Count"]
    outbox_before = len(outbox(stack))
    refused = tenants_api("CreateTenant", ada["accessToken"], body={"name": "One too many"})
    assert refused.status == 403 and refused.error["code"] == "FORBIDDEN", refused
    assert refused.error["details"] == {"limit": 5, "reason": "tenant_limit"}
    assert stack.client("dynamodb").scan(TableName="TenantsTable")["Count"] == tenants_before
    assert len(outbox(stack)) == outbox_before
    assert len(tenants_api("ListTenants", ada["accessToken"]).data["items"]) == 5
    assert profile(ada["user"]["id"])["tenantsCreated"] == 5


def test_the_ceiling_is_a_setting(stack, setting):
    setting("TENANTS_PER_USER", "2")
    ada = signed_in("ada@example.com")
    assert tenants_api("CreateTenant", ada["accessToken"], body={"name": "Second"}).status == 201
    refused = tenants_api("CreateTenant", ada["accessToken"], body={"name": "Third"})
    assert refused.status == 403 and refused.error["details"] == {"limit": 2, "reason": "tenant_limit"}


def test_a_user_from_before_the_count_is_counted_by_the_tenants_they_own_and_had_their_welcome_credit(stack):
    ada = signed_in("ada@example.com")
    for n in range(2):
        tenants_api("CreateTenant", ada["accessToken"], body={"name": f"Tenant {n}"})
    stack.client("dynamodb").update_item(   # a profile written before tenants were counted
        TableName="UsersTable", Key={"pk": {"S": f"USER#{ada['user']['id']}"}, "sk": {"S": "PROFILE"}},
        UpdateExpression="REMOVE tenantsCreated, welcomeCreditTenant")
    fourth = tenants_api("CreateTenant", ada["accessToken"], body={"name": "Fourth"})
    assert fourth.status == 201, fourth
    assert profile(ada["user"]["id"])["tenantsCreated"] == 4   # the three they own, and this one
    assert "welcomeCreditTenant" not in profile(ada["user"]["id"])
    assert stored(stack, fourth.data["id"])["welcomeGrant"] == {"BOOL": False}   # the first had it
    assert tenants_api("CreateTenant", ada["accessToken"], body={"name": "Fifth"}).status == 201
    assert tenants_api("CreateTenant", ada["accessToken"], body={"name": "Sixth"}).status == 403


def test_a_token_of_a_user_who_no_longer_exists_creates_no_tenant(stack):
    tenant_id = stack.new_tenant()
    refused = tenants_api("CreateTenant", stack.user_token(tenant_id, "owner"), body={"name": "Ghost"})
    assert refused.status == 401, refused
    assert stack.client("dynamodb").scan(TableName="TenantsTable")["Count"] == 1
