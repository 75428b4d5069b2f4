"""API keys end to end: create, list, read, revoke, rotate, expiry, scopes and tenants."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta

import httpx
import pytest

from devstack.gateway import Gateway, Router
from devstack.runtime import load_functions
from devstack.template import Resolver
from svc_core.auth import authenticate, key_format
from svc_core.data import api_keys_table
from svc_core.platform import timeutil
from svc_core.platform.config import settings
from tests.support.auth_helpers import KEY_RE, Clock
from tests.support.functions import call
from tests.support.stack import DEFAULT_PARAMETERS

ADMIN = ["keys:read", "keys:write", "projects:read", "projects:write"]


def create(token, **body):
    body = {"name": "CI deploys", "type": "ci", "environment": "Production", **body}
    return call("api_keys", "ApiKeys-CreateKey", token=token, body=body)


def get(token, key_id):
    return call("api_keys", "ApiKeys-GetKey", token=token, path_params={"id": key_id})


def revoke(token, key_id):
    return call("api_keys", "ApiKeys-RevokeKey", token=token, path_params={"id": key_id})


def rotate(token, key_id, body=None):
    return call("api_keys", "ApiKeys-RotateKey", token=token, path_params={"id": key_id}, body=body)


def works(key) -> bool:
    """A request with the key to a different function (projects) than the one that manages keys."""
    reply = call("projects", "Projects-ListProjects", token=key)
    assert reply.status in (200, 401), reply
    return reply.status == 200


def stored_items(stack) -> list[dict]:
    return stack.client("dynamodb").scan(TableName=settings().api_keys_table)["Items"]


def test_create_returns_the_value_once_and_never_again(stack):
    _, admin = stack.tenant_with_key(ADMIN)
    created = create(admin, scopes=["projects:read"])
    assert created.status == 201, created
    value = created.data["key"]
    assert KEY_RE.match(value) and value.startswith("svc_ci_")
    assert key_format.parse_type(value) == "ci"
    assert created.data["hint"] == f"svc_ci_...{value[-4:]}"
    assert created.data["status"] == "active" and created.data["scopes"] == ["projects:read"]
    assert works(value)

    hashes = [i["pk"]["S"].removeprefix("SECRET#") for i in stored_items(stack) if i["pk"]["S"].startswith("SECRET#")]
    assert authenticate.hash_key(value) in hashes
    one = get(admin, created.data["id"])
    listed = call("api_keys", "ApiKeys-ListKeys", token=admin)
    assert one.status == 200 and listed.status == 200
    assert "key" not in one.data and "secrets" not in one.data
    assert all("key" not in item for item in listed.data["items"])
    for text in (one.text, listed.text):
        assert value not in text and value[8:40] not in text
        assert not any(h in text for h in hashes)


def test_only_an_hmac_of_the_value_is_stored(stack):
    tenant, admin = stack.tenant_with_key(ADMIN)
    values = [admin] + [create(admin, type=t).data["key"] for t in ("sdk", "cli")]
    dump = json.dumps(stored_items(stack))
    for value in values:
        assert value not in dump and value[8:40] not in dump
        assert hashlib.sha256(value.encode()).hexdigest() not in dump  # not an unkeyed hash either
        assert f"SECRET#{authenticate.hash_key(value)}" in dump


@pytest.mark.parametrize("key_type", ["sdk", "cli", "ci", "int", "mkt"])
def test_every_key_type_can_be_created_and_used(stack, key_type):
    _, admin = stack.tenant_with_key(ADMIN)
    created = create(admin, type=key_type, scopes=["keys:read"])
    assert created.status == 201, created
    assert created.data["type"] == key_type and created.data["key"].startswith(f"svc_{key_type}_")
    assert KEY_RE.match(created.data["key"])
    assert get(created.data["key"], created.data["id"]).status == 200


@pytest.mark.parametrize("environment", ["Development", "Staging", "Production"])
def test_each_environment_is_accepted(stack, environment):
    _, admin = stack.tenant_with_key(ADMIN)
    created = create(admin, environment=environment)
    assert created.status == 201 and created.data["environment"] == environment


@pytest.mark.parametrize("body", [{"environment": "production"}, {"environment": "Prod"}, {"environment": ""},
                                  {"environment": None}, {"type": "xyz"}, {"type": "SDK"}])
def test_environment_and_type_outside_their_lists_are_400(stack, body):
    _, admin = stack.tenant_with_key(ADMIN)
    reply = create(admin, **body)
    assert reply.status == 400 and reply.error["code"] == "VALIDATION_ERROR"
    assert [f["field"] for f in reply.error["details"]["fields"]] == list(body)
    assert len(call("api_keys", "ApiKeys-ListKeys", token=admin).data["items"]) == 1  # nothing stored


def test_unknown_scope_is_400(stack):
    _, admin = stack.tenant_with_key(ADMIN)
    reply = create(admin, scopes=["projects:read", "root:everything"])
    assert reply.status == 400 and reply.error["code"] == "VALIDATION_ERROR"
    fields = reply.error["details"]["fields"]
    assert len(fields) == 1 and fields[0]["field"] in ("scopes", "scopes.1") and fields[0]["reason"]
    assert len(call("api_keys", "ApiKeys-ListKeys", token=admin).data["items"]) == 1  # nothing stored


def test_a_key_cannot_hold_a_scope_its_creator_lacks(stack):
    _, creator = stack.tenant_with_key(["keys:read", "keys:write", "projects:read"])
    refused = create(creator, scopes=["projects:read", "projects:write"])
    assert refused.status == 403 and refused.error["code"] == "FORBIDDEN"
    assert refused.error["details"]["scopes"] == ["projects:write"]
    assert create(creator, scopes=["billing:read"]).status == 403
    assert len(call("api_keys", "ApiKeys-ListKeys", token=creator).data["items"]) == 1

    subset = create(creator, scopes=["projects:read"])
    assert subset.status == 201 and subset.data["scopes"] == ["projects:read"]
    inherited = create(creator)  # scopes omitted: exactly the creator's
    assert inherited.status == 201
    assert inherited.data["scopes"] == ["keys:read", "keys:write", "projects:read"]
    # ... and the new key, holding keys:write, still cannot mint itself a wider key
    assert create(inherited.data["key"], scopes=["projects:write"]).status == 403


def test_list_pages_with_a_cursor_newest_first_and_only_the_tenants_keys(stack):
    tenant, admin = stack.tenant_with_key(ADMIN)
    other_tenant, other_admin = stack.tenant_with_key(ADMIN)
    create(other_admin)
    made = [create(admin, name=f"key {i}").data["id"] for i in range(5)]
    first = call("api_keys", "ApiKeys-ListKeys", token=admin, query={"limit": "4"})
    assert first.status == 200, first
    assert len(first.data["items"]) == 4 and first.data["nextCursor"]
    second = call("api_keys", "ApiKeys-ListKeys", token=admin,
                  query={"limit": "4", "cursor": first.data["nextCursor"]})
    assert second.status == 200, second
    assert len(second.data["items"]) == 2 and second.data["nextCursor"] is None
    ids = [k["id"] for k in first.data["items"] + second.data["items"]]
    assert len(set(ids)) == 6 and set(made) < set(ids)
    assert ids == sorted(ids, reverse=True)
    assert {k["tenantId"] for k in first.data["items"] + second.data["items"]} == {tenant}

    bad = call("api_keys", "ApiKeys-ListKeys", token=admin, query={"cursor": "not-a-cursor"})
    assert bad.status == 400 and bad.error["details"]["fields"][0]["field"] == "cursor"


def test_revoke_refuses_the_next_use_everywhere_and_twice_is_harmless(stack):
    tenant, admin = stack.tenant_with_key(ADMIN)
    target = create(admin, scopes=["keys:read", "projects:read"]).data
    assert works(target["key"])
    first = revoke(admin, target["id"])
    assert first.status == 200, first
    assert first.data["status"] == "revoked" and first.data["revoked_at"]
    assert not works(target["key"])
    denied = get(target["key"], target["id"])
    assert denied.status == 401 and denied.error["code"] == "UNAUTHORIZED"
    second = revoke(admin, target["id"])
    assert second.status == 200 and second.data["revoked_at"] == first.data["revoked_at"]
    assert works(admin)


def test_a_cached_record_does_not_keep_a_revoked_key_alive(stack):
    """Another container revokes the key: this container's cache still holds its record."""
    tenant, admin = stack.tenant_with_key(ADMIN)
    target = create(admin, scopes=["projects:read"]).data
    assert works(target["key"])
    secret_hash = authenticate.hash_key(target["key"])
    assert secret_hash in {hashed for _function, hashed in authenticate._key_cache}
    api_keys_table.revoke(api_keys_table.get(tenant, target["id"]), int(timeutil.now()))
    assert secret_hash in {hashed for _function, hashed in authenticate._key_cache}  # nothing told this container
    assert not works(target["key"])
    assert works(admin)


def test_rotate_overlap_keeps_the_old_value_until_it_ends(stack, monkeypatch):
    clock = Clock(monkeypatch)
    _, admin = stack.tenant_with_key(ADMIN)
    target = create(admin, type="sdk", scopes=["projects:read"]).data
    assert works(target["key"])
    rotated = rotate(admin, target["id"], {"overlapSeconds": 3600})
    assert rotated.status == 200, rotated
    new = rotated.data["key"]
    assert KEY_RE.match(new) and new.startswith("svc_sdk_") and new != target["key"]
    assert rotated.data["id"] == target["id"] and rotated.data["rotated_at"]
    assert rotated.data["hint"] == f"svc_sdk_...{new[-4:]}"
    assert works(new) and works(target["key"])
    clock.travel(3599)
    assert works(target["key"])
    clock.travel(2)
    assert not works(target["key"])
    assert works(new)
    assert get(admin, target["id"]).data["status"] == "active"


def test_a_rotated_key_names_its_earlier_values_and_when_each_stops(stack, monkeypatch):
    clock = Clock(monkeypatch)
    _, admin = stack.tenant_with_key(ADMIN)
    target = create(admin, scopes=["projects:read"]).data
    assert target["earlierValues"] == []
    rotated = rotate(admin, target["id"], {"overlapSeconds": 3600}).data
    ends = datetime.fromisoformat(rotated["rotated_at"]) + timedelta(seconds=3600)
    assert rotated["earlierValues"] == [{"hint": target["hint"], "worksUntil": timeutil.iso(ends.timestamp())}]
    assert get(admin, target["id"]).data["earlierValues"] == rotated["earlierValues"]
    clock.travel(3601)
    assert get(admin, target["id"]).data["earlierValues"] == []
    rotate(admin, target["id"], {"overlapSeconds": 60})
    assert revoke(admin, target["id"]).status == 200
    assert get(admin, target["id"]).data["earlierValues"] == []


def test_rotate_without_a_body_overlaps_one_day(stack, monkeypatch):
    clock = Clock(monkeypatch)
    _, admin = stack.tenant_with_key(ADMIN)
    target = create(admin, scopes=["projects:read"]).data
    rotated = rotate(admin, target["id"])
    assert rotated.status == 200, rotated
    clock.travel(86400 - 60)
    assert works(target["key"])
    clock.travel(61)
    assert not works(target["key"]) and works(rotated.data["key"])


def test_rotate_with_overlap_zero_ends_the_old_value_at_once(stack):
    _, admin = stack.tenant_with_key(ADMIN)
    target = create(admin, scopes=["projects:read"]).data
    assert works(target["key"])
    rotated = rotate(admin, target["id"], {"overlapSeconds": 0})
    assert rotated.status == 200, rotated
    assert not works(target["key"])
    assert works(rotated.data["key"])


def _chain(admin, *overlaps):
    """A key and the values it had: the created one, then one per rotation with these overlaps."""
    target = create(admin, scopes=["projects:read"]).data
    chain = [target["key"]]
    for overlap in overlaps:
        rotated = rotate(admin, target["id"], {"overlapSeconds": overlap})
        assert rotated.status == 200, rotated
        chain.append(rotated.data["key"])
    return target["id"], chain


def _secret_ends(stack, chain) -> list:
    """Each value's end as its SECRET# item says, the record every container authenticates by."""
    ends = {}
    for item in stored_items(stack):
        if item["pk"]["S"].startswith("SECRET#"):
            ends[item["pk"]["S"].removeprefix("SECRET#")] = int(item["notAfter"]["N"]) if "notAfter" in item else None
    return [ends[authenticate.hash_key(value)] for value in chain]


def test_rotate_with_overlap_zero_ends_every_earlier_value_of_the_key(stack):
    # An emergency rotation: values 1 and 2 were still in their hour of overlap, one of them leaked.
    _, admin = stack.tenant_with_key(ADMIN)
    key_id, chain = _chain(admin, 3600, 3600)
    assert [works(v) for v in chain] == [True, True, True]
    rotated = rotate(admin, key_id, {"overlapSeconds": 0})
    assert rotated.status == 200, rotated
    chain.append(rotated.data["key"])
    assert [works(v) for v in chain] == [False, False, False, True]
    now = int(timeutil.now())
    assert all(end <= now for end in _secret_ends(stack, chain)[:3])
    authenticate._key_cache.clear()  # as a container that had never seen the key
    assert [works(v) for v in chain] == [False, False, False, True]


def test_overlap_zero_ends_every_earlier_value_in_a_container_that_cached_them(stack):
    """Another container rotates the key: this container's cache still holds every earlier value's
    record, read before the rotation (a minute's worth), and must refuse them all the same."""
    tenant, admin = stack.tenant_with_key(ADMIN)
    key_id, chain = _chain(admin, 3600, 3600)
    assert [works(v) for v in chain] == [True, True, True]
    cached = dict(authenticate._key_cache)
    assert all(authenticate.hash_key(v) in {hashed for _function, hashed in cached} for v in chain)
    rotated = rotate(admin, key_id, {"overlapSeconds": 0})
    assert rotated.status == 200, rotated
    authenticate._key_cache.update(cached)  # as this container held them before the rotation
    chain.append(rotated.data["key"])
    assert [works(v) for v in chain] == [False, False, False, True]
    # A later rotation with an overlap keeps the ended values ended, and the one it replaces alive.
    cached = dict(authenticate._key_cache)
    again = rotate(admin, key_id, {"overlapSeconds": 3600})
    assert again.status == 200, again
    authenticate._key_cache.update(cached)
    chain.append(again.data["key"])
    assert [works(v) for v in chain] == [False, False, False, True, True]
    assert api_keys_table.get(tenant, key_id)["generation"] == 5


def test_a_shorter_overlap_also_shortens_the_older_values_overlap(stack, monkeypatch):
    clock = Clock(monkeypatch)
    _, admin = stack.tenant_with_key(ADMIN)
    _, chain = _chain(admin, 3600, 600)
    assert [works(v) for v in chain] == [True, True, True]
    clock.travel(599)
    assert [works(v) for v in chain] == [True, True, True]
    clock.travel(2)
    assert [works(v) for v in chain] == [False, False, True]


def test_a_longer_overlap_does_not_lengthen_an_older_values_overlap(stack, monkeypatch):
    clock = Clock(monkeypatch)
    _, admin = stack.tenant_with_key(ADMIN)
    _, chain = _chain(admin, 600, 3600)
    clock.travel(601)
    assert [works(v) for v in chain] == [False, True, True]
    clock.travel(3000)
    assert [works(v) for v in chain] == [False, False, True]


def test_at_most_five_values_live_at_once_and_overlap_zero_always_rotates(stack):
    _, admin = stack.tenant_with_key(ADMIN)
    key_id, chain = _chain(admin, 3600, 3600, 3600, 3600)
    reply = rotate(admin, key_id, {"overlapSeconds": 3600})
    assert reply.status == 409 and reply.error["code"] == "CONFLICT", reply
    assert reply.error["details"] == {"id": key_id, "limit": 5}
    assert all(works(v) for v in chain)
    rotated = rotate(admin, key_id, {"overlapSeconds": 0})
    assert rotated.status == 200, rotated
    assert [works(v) for v in chain + [rotated.data["key"]]] == [False] * 5 + [True]
    stored = api_keys_table.get(get(admin, key_id).data["tenantId"], key_id)
    assert len(stored["secrets"]) == 1  # ended values leave the key's record


@pytest.mark.parametrize("overlap", [604801, -1, 10**12, "a day", 1.5])
def test_rotate_overlap_outside_zero_to_seven_days_is_400(stack, overlap):
    _, admin = stack.tenant_with_key(ADMIN)
    target = create(admin, scopes=["projects:read"]).data
    reply = rotate(admin, target["id"], {"overlapSeconds": overlap})
    assert reply.status == 400 and reply.error["code"] == "VALIDATION_ERROR"
    assert [f["field"] for f in reply.error["details"]["fields"]] == ["overlapSeconds"]
    assert works(target["key"]) and get(admin, target["id"]).data["rotated_at"] is None


def test_rotate_accepts_exactly_seven_days(stack):
    _, admin = stack.tenant_with_key(ADMIN)
    target = create(admin).data
    assert rotate(admin, target["id"], {"overlapSeconds": 604800}).status == 200


def test_rotating_a_revoked_key_is_409(stack):
    _, admin = stack.tenant_with_key(ADMIN)
    target = create(admin, scopes=["projects:read"]).data
    assert revoke(admin, target["id"]).status == 200
    reply = rotate(admin, target["id"], {"overlapSeconds": 60})
    assert reply.status == 409 and reply.error["code"] == "CONFLICT"
    assert reply.error["details"]["status"] == "revoked"
    assert not works(target["key"])


def test_an_expired_key_is_401(stack, monkeypatch):
    clock = Clock(monkeypatch)
    tenant, admin = stack.tenant_with_key(ADMIN)
    created = create(admin, scopes=["projects:read"], expiresInDays=1)
    assert created.status == 201 and created.data["expires_at"]
    short = created.data
    assert works(short["key"])
    clock.travel(86400 - 10)
    assert works(short["key"])
    clock.travel(11)
    reply = call("projects", "Projects-ListProjects", token=short["key"])
    assert reply.status == 401 and reply.error["code"] == "UNAUTHORIZED"
    assert get(admin, short["id"]).data["status"] == "expired"
    assert rotate(admin, short["id"], {"overlapSeconds": 0}).status == 409
    assert works(admin)


def test_an_operator_issued_key_with_an_expiry_also_expires(stack, monkeypatch):
    clock = Clock(monkeypatch)
    tenant = stack.new_tenant()
    key = stack.new_key(tenant, ["projects:read"], key_type="int", expires_in_days=2)["key"]
    assert works(key)
    clock.travel(2 * 86400)
    assert not works(key)


def test_last_used_at_is_set_after_use(stack):
    _, admin = stack.tenant_with_key(ADMIN)
    target = create(admin, scopes=["projects:read"]).data
    before = get(admin, target["id"]).data
    assert (before["last_used_at"], before["lastUsedIp"]) == (None, None)
    assert works(target["key"])
    used = get(admin, target["id"]).data
    assert used["last_used_at"] is not None and used["last_used_at"].endswith("Z")
    assert used["lastUsedIp"] == "203.0.113.10"  # the sourceIp of call()'s events


@pytest.fixture
def gateway_url(stack):
    """The local gateway in this process (as in test_cors): it passes the TCP peer as sourceIp."""
    resolver = Resolver(DEFAULT_PARAMETERS)
    gateway = Gateway(Router(resolver.api_routes(), resolver.streaming_routes()),
                      load_functions(resolver, containers=1), port=0, log=lambda _m: None).start()
    yield f"http://127.0.0.1:{gateway.port}/api/v1"
    gateway.stop()


def test_the_last_use_records_the_callers_source_address_not_a_forwarded_header(stack, gateway_url):
    """Over real loopback HTTP: a client bound to 127.0.0.2 is that address for the gateway; the
    X-Forwarded-For it sends (as any client can) is not what the key's last use says."""
    _, admin = stack.tenant_with_key(ADMIN)
    target = create(admin, scopes=["projects:read"]).data
    with httpx.Client(base_url=gateway_url, timeout=30,
                      transport=httpx.HTTPTransport(local_address="127.0.0.2")) as remote:
        used = remote.get("/projects", headers={"Authorization": f"Bearer {target['key']}",
                                                "X-Forwarded-For": "198.51.100.7"})
    assert used.status_code == 200, used.text
    shown = httpx.get(f"{gateway_url}/api-keys/{target['id']}", timeout=30,
                      headers={"Authorization": f"Bearer {admin}"})
    assert shown.status_code == 200, shown.text
    assert shown.json()["data"]["lastUsedIp"] == "127.0.0.2"
    assert shown.json()["data"]["last_used_at"] is not None
    listed = httpx.get(f"{gateway_url}/api-keys", timeout=30, headers={"Authorization": f"Bearer {admin}"})
    assert {k["id"]: k["lastUsedIp"] for k in listed.json()["data"]["items"]}[target["id"]] == "127.0.0.2"


def test_another_tenant_cannot_read_revoke_or_rotate_a_key(stack):
    tenant_a, admin_a = stack.tenant_with_key(ADMIN)
    _, admin_b = stack.tenant_with_key(ADMIN)
    target = create(admin_a, scopes=["projects:read"]).data
    for reply in (get(admin_b, target["id"]), revoke(admin_b, target["id"]),
                  rotate(admin_b, target["id"], {"overlapSeconds": 0}),
                  call("api_keys", "ApiKeys-GetKey", token=admin_b, path_params={"id": target["id"]},
                       headers={"X-Tenant-Id": tenant_a})):
        assert reply.status == 404 and reply.error["code"] == "RESOURCE_NOT_FOUND", reply
        assert reply.error["details"]["id"] == target["id"]
    missing = get(admin_b, "key_01J0000000000000000000000Z")
    assert missing.status == 404 and missing.error["details"]["id"] == "key_01J0000000000000000000000Z"
    assert target["id"] not in call("api_keys", "ApiKeys-ListKeys", token=admin_b).text
    assert works(target["key"])
    after = get(admin_a, target["id"]).data
    assert after["status"] == "active" and after["rotated_at"] is None and after["revoked_at"] is None


@pytest.mark.parametrize("scopes, allowed", [
    (["keys:read"], {"list", "get"}),
    (["keys:write"], {"create", "revoke", "rotate"}),
    (["projects:read", "projects:write"], set()),
])
def test_keys_read_and_keys_write_guard_the_endpoints(stack, scopes, allowed):
    tenant, admin = stack.tenant_with_key(ADMIN)
    caller = stack.new_key(tenant, scopes)["key"]
    victim = create(admin, scopes=["keys:write"]).data["id"]  # no stronger than a keys:write caller
    attempts = {
        "list": ("keys:read", lambda: call("api_keys", "ApiKeys-ListKeys", token=caller)),
        "get": ("keys:read", lambda: get(caller, victim)),
        "create": ("keys:write", lambda: create(caller, scopes=[s for s in scopes if s.startswith("keys")] or None)),
        "rotate": ("keys:write", lambda: rotate(caller, victim, {"overlapSeconds": 60})),
        "revoke": ("keys:write", lambda: revoke(caller, victim)),
    }
    for name, (scope, attempt) in attempts.items():
        reply = attempt()
        if name in allowed:
            assert reply.status in (200, 201), (name, reply)
        else:
            assert reply.status == 403 and reply.error["code"] == "FORBIDDEN", (name, reply)
            assert reply.error["details"]["requiredScope"] == scope


# ---- who may rotate or revoke which key ----------------------------------------------------

def unchanged(admin, target) -> bool:
    """The target's old value still authenticates and it was neither rotated nor revoked."""
    after = get(admin, target["id"]).data
    return works(target["key"]) and after["rotated_at"] is None and after["revoked_at"] is None


def change(action, token, key_id):
    return rotate(token, key_id, {"overlapSeconds": 0}) if action == "rotate" else revoke(token, key_id)


def cli_key_of(stack, tenant, role="member"):
    """A user's CLI key as a device login issues it: createdBy is the user, the role's scopes."""
    from svc_core.auth.roles import ROLE_SCOPES
    from svc_core.platform import ids
    user = ids.new_id("usr")
    return user, stack.new_key(tenant, sorted(ROLE_SCOPES[role]), key_type="cli", created_by=user)


@pytest.mark.parametrize("action", ["rotate", "revoke"])
def test_a_weaker_key_cannot_rotate_or_revoke_a_stronger_one(stack, action):
    from svc_core.auth.scopes import ALL_SCOPES
    tenant, admin = stack.tenant_with_key()
    target = stack.new_key(tenant)  # every scope
    weak = stack.new_key(tenant, ["keys:write"])["key"]
    refused = change(action, weak, target["id"])
    assert refused.status == 403 and refused.error["code"] == "FORBIDDEN", refused
    assert refused.error["details"]["scopes"] == sorted(ALL_SCOPES - {"keys:write"})
    assert target["key"] not in refused.text
    assert unchanged(admin, target)
    nearly = stack.new_key(tenant, sorted(ALL_SCOPES - {"billing:write"}))["key"]  # one scope short
    assert change(action, nearly, target["id"]).error["details"]["scopes"] == ["billing:write"]
    assert unchanged(admin, target)


@pytest.mark.parametrize("action", ["rotate", "revoke"])
def test_a_key_of_another_user_cannot_rotate_or_revoke_a_users_cli_key(stack, action):
    tenant, admin = stack.tenant_with_key()
    _, target = cli_key_of(stack, tenant)
    other_user = stack.user_token(tenant, "owner", member=True)
    others_key = create(other_user, type="sdk").data["key"]  # every scope, made by another user
    refused = change(action, others_key, target["id"])
    assert refused.status == 403 and refused.error["details"]["reason"] == "cli_key_of_another_user", refused
    assert unchanged(admin, target)
    if action == "rotate":  # no one but its user rotates it, not even an owner's own token
        assert change(action, other_user, target["id"]).status == 403
        assert change(action, admin, target["id"]).status == 403  # nor an operator-issued all-scope key
        assert unchanged(admin, target)


def test_an_admin_or_owner_user_may_revoke_a_members_cli_key_but_not_rotate_it(stack):
    tenant, admin_key = stack.tenant_with_key()
    admin, owner = stack.user_token(tenant, "admin"), stack.user_token(tenant, "owner")
    _, first = cli_key_of(stack, tenant)
    rotated = rotate(admin, first["id"])
    assert rotated.status == 403 and rotated.error["details"]["reason"] == "cli_key_of_another_user"
    assert unchanged(admin_key, first)
    revoked = revoke(admin, first["id"])
    assert revoked.status == 200 and revoked.data["status"] == "revoked", revoked
    assert not works(first["key"])
    _, second = cli_key_of(stack, tenant)
    assert revoke(owner, second["id"]).status == 200 and not works(second["key"])


def test_an_admin_user_cannot_revoke_a_cli_key_holding_a_scope_the_admin_lacks(stack):
    tenant, admin_key = stack.tenant_with_key()
    _, owners = cli_key_of(stack, tenant, role="owner")  # holds billing:write, which an admin does not
    refused = revoke(stack.user_token(tenant, "admin"), owners["id"])
    assert refused.status == 403 and refused.error["details"]["scopes"] == ["billing:write"]
    assert unchanged(admin_key, owners)


def test_the_user_of_a_cli_key_may_rotate_it_by_token_by_itself_or_by_another_of_their_keys(stack):
    tenant, admin_key = stack.tenant_with_key()
    user = stack.user_token(tenant, "admin", user_id="usr_01J00000000000000000000ADA", member=True)
    target = stack.new_key(tenant, ["keys:write", "projects:read"], key_type="cli",
                           created_by="usr_01J00000000000000000000ADA")
    by_token = rotate(user, target["id"], {"overlapSeconds": 0})
    assert by_token.status == 200, by_token
    assert not works(target["key"]) and works(by_token.data["key"])
    by_itself = rotate(by_token.data["key"], target["id"], {"overlapSeconds": 0})
    assert by_itself.status == 200, by_itself
    sibling = create(user, type="ci", scopes=["keys:write", "projects:read"]).data
    assert sibling["createdBy"] == "usr_01J00000000000000000000ADA"
    by_sibling = rotate(sibling["key"], target["id"], {"overlapSeconds": 0})
    assert by_sibling.status == 200, by_sibling
    assert works(by_sibling.data["key"]) and not works(by_itself.data["key"])


def test_a_key_may_rotate_and_revoke_itself(stack):
    tenant, _ = stack.tenant_with_key()
    user, own = cli_key_of(stack, tenant, role="admin")  # as `svc login` leaves it
    rotated = rotate(own["key"], own["id"], {"overlapSeconds": 0})
    assert rotated.status == 200 and not works(own["key"]), rotated
    new = rotated.data["key"]
    revoked = revoke(new, own["id"])  # `svc logout`
    assert revoked.status == 200 and revoked.data["status"] == "revoked"
    assert not works(new)
    weak = stack.new_key(tenant, ["keys:write"])  # a plain key, however few its scopes
    assert rotate(weak["key"], weak["id"]).status == 200


def test_a_cli_key_made_through_the_api_belongs_to_its_caller(stack):
    """Any caller with keys:write may make a cli key (scopes within its own); it belongs to the
    caller, whose credentials alone rotate it."""
    tenant, operator_key = stack.tenant_with_key()
    user = stack.user_token(tenant, "admin", user_id="usr_01J00000000000000000000ADA", member=True)
    mine = create(user, type="cli", scopes=["projects:read"])
    assert mine.status == 201 and mine.data["createdBy"] == "usr_01J00000000000000000000ADA", mine
    assert rotate(user, mine.data["id"]).status == 200
    assert rotate(stack.user_token(tenant, "owner"), mine.data["id"]).status == 403

    by_key = create(operator_key, type="cli", scopes=["projects:read"]).data
    caller_id = [k for k in call("api_keys", "ApiKeys-ListKeys", token=operator_key).data["items"]
                 if k["name"] == "test key"][0]["id"]
    assert by_key["createdBy"] == caller_id
    assert rotate(operator_key, by_key["id"]).status == 200
    assert rotate(stack.new_key(tenant)["key"], by_key["id"]).status == 403  # every scope, another key
    assert create(stack.new_key(tenant, ["keys:write"])["key"], type="cli", scopes=["projects:read"]).status == 403
