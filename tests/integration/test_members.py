"""Members: the list, role changes, removal, leaving and the ownership's transfer, through the
handlers fed real API Gateway events; every rule of docs/organizations.md, what removal and a
demotion do to the person's sign-ins and command-line keys, the counters, events and audit entries."""

from __future__ import annotations

import threading

from svc_core.auth.roles import ROLE_SCOPES
from svc_core.auth.scopes import ALL_SCOPES
from svc_core.data import tenants_table, users_table
from svc_core.data.common import transact
from svc_core.domain.tenants import create_tenant_with_owner
from svc_core.platform import ids, timeutil
from svc_core.platform.config import settings
from tests.support.functions import call

PASSWORD = "correct horse battery staple"


# ---- people ----------------------------------------------------------------------------------


class Person:
    """A user with an account of their own (and its personal tenant), maybe a member of others."""

    def __init__(self, name: str) -> None:
        self.name, self.email = name, f"{name.lower()}.{ids.new_ulid()[-8:].lower()}@example.com"
        made = create_tenant_with_owner(tenant_name=f"{name}'s workspace", email=self.email, user_name=name,
                                        password=PASSWORD)
        self.id, self.personal = made["user"]["id"], made["tenant"]["id"]

    def join(self, tenant_id: str, role: str) -> Person:
        """A membership as an accepted invitation leaves it: a seat taken, an owner counted."""
        counts = [tenants_table.Count("seatsUsed", 1)] + ([tenants_table.Count("owners", 1)] if role == "owner" else [])
        transact([users_table.put_membership(self.id, tenant_id, role, timeutil.iso(timeutil.now()), email=self.email,
                                             name=self.name, only_new=True),
                  tenants_table.counts_entry(tenant_id, *counts)])
        return self

    def sign_in(self, tenant_id: str | None = None) -> dict:
        reply = call("auth", "Auth-Login", body={"email": self.email, "password": PASSWORD,
                                                 **({"tenantId": tenant_id} if tenant_id else {})})
        assert reply.status == 200, reply
        return reply.data

    def token(self, tenant_id: str) -> str:
        return self.sign_in(tenant_id)["accessToken"]


def org(*roles: str) -> tuple[str, Person, list[Person]]:
    """A tenant made by its owner, and one more person per role given."""
    owner = Person("Olga")
    others = [Person(f"P{i}").join(owner.personal, role) for i, role in enumerate(roles)]
    return owner.personal, owner, others


# ---- the routes ------------------------------------------------------------------------------


def listed(token, **query):
    return call("members", "Members-ListMembers", token=token, query={k: str(v) for k, v in query.items()} or None)


def change(token, user_id, role):
    return call("members", "Members-ChangeMemberRole", token=token, path_params={"userId": user_id}, body={"role": role})


def remove(token, user_id):
    return call("members", "Members-RemoveMember", token=token, path_params={"userId": user_id})


def leave(token):
    return call("members", "Members-LeaveTenant", token=token)


def transfer(token, user_id):
    return call("members", "Members-TransferOwnership", token=token, body={"userId": user_id})


def works(token) -> bool:
    """A request with the credential to another function (projects)."""
    reply = call("projects", "Projects-ListProjects", token=token)
    assert reply.status in (200, 401), reply
    return reply.status == 200


def refresh(refresh_token, tenant_id=None):
    return call("auth", "Auth-Refresh", body={"refreshToken": refresh_token, **({"tenantId": tenant_id} if tenant_id else {})})


def role_of(tenant_id, user_id):
    found = users_table.membership(user_id, tenant_id)
    return found and found["role"]


def counter(tenant_id, name):
    tenant = tenants_table.get_consistent(tenant_id)
    return tenant.get(name, tenants_table.COUNTER_DEFAULTS[name])


def outbox(stack, event_type):
    from svc_core.adapters.dynamo import from_item
    items = stack.client("dynamodb").scan(TableName=settings().outbox_table)["Items"]
    return [e for e in map(from_item, items) if e["type"] == event_type]


def audit_entries(stack, action):
    from svc_core.adapters.dynamo import from_item
    items = stack.client("dynamodb").scan(TableName=settings().audit_log_table)["Items"]
    return [e for e in map(from_item, items) if e["action"] == action]


def refused(reply, status, reason):
    assert reply.status == status, reply
    assert reply.error["details"].get("reason") == reason, reply
    return reply


# ---- the list ----------------------------------------------------------------------------------


def test_the_list_pages_through_every_member_once_in_user_id_order(stack):
    tenant_id, owner, others = org("admin", "member", "member", "member")
    outsider = Person("Out")  # a member elsewhere only
    member_token = others[1].token(tenant_id)  # a member reads the list (members:read)
    seen, cursor = [], None
    while True:
        page = listed(member_token, limit=2, **({"cursor": cursor} if cursor else {}))
        assert page.status == 200, page
        assert len(page.data["items"]) <= 2
        seen += page.data["items"]
        cursor = page.data["nextCursor"]
        if cursor is None:
            break
    everyone = [owner, *others]
    assert [m["userId"] for m in seen] == sorted(p.id for p in everyone)
    assert outsider.id not in [m["userId"] for m in seen]
    first = next(m for m in seen if m["userId"] == others[0].id)
    assert first["role"] == "admin" and first["email"] == others[0].email and first["name"] == others[0].name
    assert first["joined_at"].endswith("Z")
    assert next(m for m in seen if m["userId"] == owner.id)["role"] == "owner"
    assert listed(member_token, cursor="nope").status == 400
    assert listed(member_token, limit=0).status == 400


def test_reading_members_needs_members_read(stack):
    tenant_id, _, _ = org()
    key = stack.new_key(tenant_id, ["projects:read"])["key"]
    reply = listed(key)
    assert reply.status == 403 and reply.error["details"]["requiredScope"] == "members:read"


# ---- role changes --------------------------------------------------------------------------


def test_an_owner_and_an_admin_change_roles_below_owner(stack):
    tenant_id, owner, (admin, first, second) = org("admin", "member", "member")
    made = change(owner.token(tenant_id), first.id, "admin")
    assert made.status == 200, made
    assert made.data == {"userId": first.id, "email": first.email, "name": first.name, "role": "admin",
                         "joined_at": made.data["joined_at"]}
    admin_token = admin.token(tenant_id)
    assert change(admin_token, second.id, "admin").data["role"] == "admin"
    assert change(admin_token, first.id, "member").data["role"] == "member"
    assert (role_of(tenant_id, first.id), role_of(tenant_id, second.id)) == ("member", "admin")
    changed = outbox(stack, "member.role_changed")
    assert sorted((e["data"]["userId"], e["data"]["previousRole"], e["data"]["role"]) for e in changed) == sorted(
        [(first.id, "member", "admin"), (second.id, "member", "admin"), (first.id, "admin", "member")])
    entries = audit_entries(stack, "member.role_changed")
    assert len(entries) == 3 and all(e["tenantId"] == tenant_id for e in entries)
    by_admin = [e for e in entries if e["actor"] == {"type": "user", "id": admin.id}]
    assert {(e["target"]["id"], e["changes"]["role"]["new"]) for e in by_admin} == {(second.id, "admin"),
                                                                                   (first.id, "member")}


def test_an_admin_cannot_make_unmake_or_remove_an_owner(stack):
    tenant_id, owner, (admin, member, co_owner) = org("admin", "member", "owner")
    token = admin.token(tenant_id)
    refused(change(token, member.id, "owner"), 403, "owner_required")
    refused(change(token, admin.id, "owner"), 403, "owner_required")   # nor themselves
    refused(change(token, owner.id, "admin"), 403, "owner_required")
    refused(change(token, co_owner.id, "member"), 403, "owner_required")
    refused(remove(token, owner.id), 403, "owner_required")
    refused(transfer(token, admin.id), 403, "owner_required")
    assert [role_of(tenant_id, p.id) for p in (owner, admin, member, co_owner)] == ["owner", "admin", "member", "owner"]
    assert counter(tenant_id, "owners") == 2
    assert outbox(stack, "member.role_changed") == [] and outbox(stack, "member.removed") == []


def test_a_member_changes_no_roles(stack):
    tenant_id, owner, (member, other) = org("member", "member")
    token = member.token(tenant_id)
    for reply in (change(token, other.id, "member"), change(token, member.id, "admin"), remove(token, other.id)):
        assert reply.status == 403 and reply.error["details"]["requiredScope"] == "members:write", reply
    assert role_of(tenant_id, member.id) == "member" and role_of(tenant_id, other.id) == "member"


def test_a_credential_gives_or_takes_no_role_holding_more_than_it_holds(stack):
    tenant_id, _, (admin, member) = org("admin", "member")
    narrow = stack.new_key(tenant_id, ["members:read", "members:write"])["key"]
    denied = refused(change(narrow, member.id, "admin"), 403, "role_exceeds_caller")
    assert "projects:write" in denied.error["details"]["scopes"]
    refused(change(narrow, admin.id, "member"), 403, "role_exceeds_caller")  # taking away, too
    refused(remove(narrow, member.id), 403, "role_exceeds_caller")
    assert role_of(tenant_id, member.id) == "member" and role_of(tenant_id, admin.id) == "admin"
    as_admin = stack.new_key(tenant_id, sorted(ROLE_SCOPES["admin"]))["key"]  # an admin's scopes: enough
    assert change(as_admin, member.id, "admin").data["role"] == "admin"


def test_an_api_key_with_every_scope_makes_no_owner(stack):
    tenant_id, owner, (member,) = org("member")
    key = stack.new_key(tenant_id, sorted(ALL_SCOPES))["key"]
    refused(change(key, member.id, "owner"), 403, "owner_required")
    refused(change(key, owner.id, "admin"), 403, "owner_required")
    refused(remove(key, owner.id), 403, "owner_required")
    refused(transfer(key, member.id), 403, "owner_required")
    assert leave(key).status == 403
    assert role_of(tenant_id, member.id) == "member" and counter(tenant_id, "owners") == 1


def test_an_owner_makes_and_unmakes_owners_and_the_counter_follows(stack):
    tenant_id, owner, (member,) = org("member")
    token = owner.token(tenant_id)
    assert change(token, member.id, "owner").data["role"] == "owner"
    assert counter(tenant_id, "owners") == 2
    assert change(token, member.id, "admin").data["role"] == "admin"
    assert counter(tenant_id, "owners") == 1
    assert change(token, member.id, "admin").status == 200   # the same role again: nothing to do
    assert len(outbox(stack, "member.role_changed")) == 2


# ---- the last owner ----------------------------------------------------------------------------


def test_the_last_owner_is_not_demoted_removed_nor_leaves(stack):
    tenant_id, owner, (admin,) = org("admin")
    token = owner.token(tenant_id)
    refused(change(token, owner.id, "admin"), 409, "last_owner")
    refused(remove(token, owner.id), 409, "last_owner")
    refused(leave(token), 409, "last_owner")
    assert role_of(tenant_id, owner.id) == "owner" and counter(tenant_id, "owners") == 1
    assert counter(tenant_id, "seatsUsed") == 2
    assert works(token)  # nothing happened to the owner's sign-in
    assert outbox(stack, "member.removed") == [] and audit_entries(stack, "member.left") == []


def test_two_owners_demoting_each_other_at_once_leave_one(atomic_stack):
    tenant_id, first, (second,) = org("owner")
    tokens = {first.id: first.token(tenant_id), second.id: second.token(tenant_id)}
    start, replies = threading.Barrier(2), {}

    def demote(caller, target):
        start.wait()
        replies[caller.id] = change(tokens[caller.id], target.id, "admin")

    threads = [threading.Thread(target=demote, args=pair) for pair in ((first, second), (second, first))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = sorted(r.status for r in replies.values())
    assert statuses[0] == 200 and statuses[1] in (403, 409), replies
    # Overlapping, the loser meets the owners counter (409 last_owner); one after the other, the loser
    # is no longer an owner when its change is checked (403 owner_required). Either way one owner stays.
    loser = next(r for r in replies.values() if r.status != 200)
    assert loser.error["details"]["reason"] == {409: "last_owner", 403: "owner_required"}[loser.status]
    roles = sorted(role_of(tenant_id, p.id) for p in (first, second))
    assert roles == ["admin", "owner"] and counter(tenant_id, "owners") == 1


def test_an_owner_demoted_meanwhile_cannot_finish_an_owners_change(stack, monkeypatch):
    from svc_core.domain import members
    tenant_id, first, (second, member) = org("owner", "member")
    token, real, reads = second.token(tenant_id), members._signed_in_owner, []

    def demoted_after_the_read(ctx):
        reads.append(ctx)
        answer = real(ctx)
        if len(reads) == 1:  # the first owner demotes the second between its read and its write
            transact([users_table.set_role_entry(second.id, tenant_id, "admin", "owner", timeutil.iso(timeutil.now())),
                      tenants_table.count_entry(tenant_id, "owners", -1, at_least=1)])
        return answer

    monkeypatch.setattr(members, "_signed_in_owner", demoted_after_the_read)
    refused(change(token, member.id, "owner"), 403, "owner_required")
    assert role_of(tenant_id, member.id) == "member" and counter(tenant_id, "owners") == 1


# ---- the ownership's transfer ----------------------------------------------------------------


def test_the_owner_transfers_the_ownership_and_steps_down_to_admin(stack):
    tenant_id, owner, (member,) = org("member")
    session = owner.sign_in(tenant_id)
    cli_key = stack.new_key(tenant_id, sorted(ROLE_SCOPES["owner"]), key_type="cli", created_by=owner.id)["key"]
    done = transfer(session["accessToken"], member.id)
    assert done.status == 200, done
    assert done.data["previousOwner"]["userId"] == owner.id and done.data["previousOwner"]["role"] == "admin"
    assert done.data["newOwner"]["userId"] == member.id and done.data["newOwner"]["role"] == "owner"
    assert (role_of(tenant_id, owner.id), role_of(tenant_id, member.id)) == ("admin", "owner")
    assert counter(tenant_id, "owners") == 1
    # The old owner's tokens carried billing:write: that sign-in ends, and so does the owner-scoped CLI key.
    assert not works(session["accessToken"]) and refresh(session["refreshToken"]).status == 401
    assert not works(cli_key)
    again = owner.sign_in(tenant_id)
    assert again["tenant"]["role"] == "admin"
    assert {(e["data"]["userId"], e["data"]["role"]) for e in outbox(stack, "member.role_changed")} == {
        (owner.id, "admin"), (member.id, "owner")}
    entry, = audit_entries(stack, "ownership.transferred")
    assert entry["actor"]["id"] == owner.id and entry["target"] == {"type": "user", "id": member.id}
    assert entry["changes"] == {"previousOwner": owner.id, "newOwner": member.id}
    refused(transfer(again["accessToken"], owner.id), 403, "owner_required")  # an admin now


def test_a_transfer_to_oneself_or_to_no_member_is_refused(stack):
    tenant_id, owner, _ = org()
    stranger = Person("Stranger")
    token = owner.token(tenant_id)
    refused(transfer(token, owner.id), 409, "same_user")
    gone = transfer(token, stranger.id)
    assert gone.status == 404 and gone.error["details"]["resource"] == "member"
    assert role_of(tenant_id, owner.id) == "owner"


# ---- removal, leaving and the person's credentials ---------------------------------------------


def test_removal_ends_the_members_sign_ins_for_the_tenant_and_their_cli_keys_there(stack):
    tenant_id, owner, (member,) = org("member")
    here = member.sign_in(tenant_id)
    # A sign-in to their own tenant that a refresh moved here: it has minted a token for this tenant.
    moved = member.sign_in(member.personal)
    moved_here = refresh(moved["refreshToken"], tenant_id)
    assert moved_here.status == 200, moved_here
    elsewhere = member.sign_in(member.personal)          # never had a token for this tenant
    cli_here = stack.new_key(tenant_id, sorted(ROLE_SCOPES["member"]), key_type="cli", created_by=member.id)
    cli_there = stack.new_key(member.personal, sorted(ROLE_SCOPES["member"]), key_type="cli", created_by=member.id)
    their_ci_key = stack.new_key(tenant_id, ["projects:read"], key_type="ci", created_by=member.id)
    their_ci_key_there = stack.new_key(member.personal, ["projects:read"], key_type="ci", created_by=member.id)
    assert all(works(t) for t in (here["accessToken"], moved_here.data["accessToken"], cli_here["key"]))
    seats = counter(tenant_id, "seatsUsed")

    done = remove(owner.token(tenant_id), member.id)
    assert done.status == 200, done
    assert done.data == {"userId": member.id, "removed": True, "sessionsEnded": 2, "cliKeysRevoked": 1,
                         "apiKeysRevoked": 1}
    # At once: the next request with their access tokens is 401, their refresh tokens are refused.
    assert not works(here["accessToken"]) and not works(moved_here.data["accessToken"])
    assert refresh(here["refreshToken"]).status == 401
    assert refresh(moved_here.data["refreshToken"], member.personal).status == 401
    assert not works(cli_here["key"]) and not works(their_ci_key["key"])
    # What is not this tenant's stays: their own tenant's sign-in and keys.
    assert works(elsewhere["accessToken"]) and works(cli_there["key"]) and works(their_ci_key_there["key"])
    # A new sign-in or refresh into the tenant is refused: they are no member.
    assert refresh(elsewhere["refreshToken"], tenant_id).status == 403
    refused_login = call("auth", "Auth-Login", body={"email": member.email, "password": PASSWORD, "tenantId": tenant_id})
    assert refused_login.status == 403
    assert role_of(tenant_id, member.id) is None and counter(tenant_id, "seatsUsed") == seats - 1
    event, = outbox(stack, "member.removed")
    assert event["tenantId"] == tenant_id and event["data"] == {"userId": member.id, "role": "member", "reason": "removed"}
    entry, = audit_entries(stack, "member.removed")
    assert entry["actor"] == {"type": "user", "id": owner.id} and entry["target"]["id"] == member.id
    again = remove(owner.token(tenant_id), member.id)
    assert again.status == 404 and again.error["details"]["resource"] == "member"


def test_an_owner_removes_another_owner_and_both_counters_follow(atomic_stack):
    # On DynamoDB Local: a transaction touches the tenant's item once (both counters in one update).
    tenant_id, owner, (co_owner,) = org("owner")
    seats = counter(tenant_id, "seatsUsed")
    assert remove(owner.token(tenant_id), co_owner.id).status == 200
    assert counter(tenant_id, "owners") == 1 and counter(tenant_id, "seatsUsed") == seats - 1


def test_a_member_leaves_and_their_token_stops_at_once(stack):
    tenant_id, owner, (member,) = org("member")
    session = member.sign_in(tenant_id)
    seats = counter(tenant_id, "seatsUsed")
    left = leave(session["accessToken"])
    assert left.status == 200, left
    assert left.data == {"userId": member.id, "removed": True, "sessionsEnded": 1, "cliKeysRevoked": 0,
                         "apiKeysRevoked": 0}
    assert not works(session["accessToken"]) and refresh(session["refreshToken"]).status == 401
    assert role_of(tenant_id, member.id) is None and counter(tenant_id, "seatsUsed") == seats - 1
    assert outbox(stack, "member.removed")[0]["data"]["reason"] == "left"
    entry, = audit_entries(stack, "member.left")
    assert entry["actor"]["id"] == member.id and entry["target"]["id"] == member.id


def test_a_demotion_ends_the_sign_ins_and_the_cli_keys_above_the_new_role(stack):
    tenant_id, owner, (admin,) = org("admin")
    session = admin.sign_in(tenant_id)
    strong = stack.new_key(tenant_id, sorted(ROLE_SCOPES["admin"]), key_type="cli", created_by=admin.id)["key"]
    weak = stack.new_key(tenant_id, ["projects:read"], key_type="cli", created_by=admin.id)["key"]
    assert change(owner.token(tenant_id), admin.id, "member").status == 200
    assert not works(session["accessToken"]) and refresh(session["refreshToken"]).status == 401
    assert not works(strong) and works(weak)
    assert admin.sign_in(tenant_id)["tenant"]["role"] == "member"


def create_key(token, scopes, key_type="sdk"):
    reply = call("api_keys", "ApiKeys-CreateKey", token=token,
                 body={"name": "their key", "type": key_type, "environment": "Production", "scopes": scopes})
    assert reply.status == 201, reply
    return reply.data


def invite(token, email, role):
    return call("invitations", "Invitations-CreateInvitation", token=token, body={"email": email, "role": role})


def test_a_demoted_admins_key_cannot_promote_him_back(stack):
    tenant_id, owner, (admin,) = org("admin")
    token = admin.token(tenant_id)
    key = create_key(token, ["members:read", "members:write", *sorted(ROLE_SCOPES["admin"] - {"members:read",
                                                                                              "members:write"})])
    made_by_key = create_key(key["key"], ["members:write", "members:read", "projects:read"], key_type="ci")
    weak = create_key(token, ["projects:read"], key_type="ci")  # within the member's role: it stays
    assert change(owner.token(tenant_id), admin.id, "member").status == 200
    for value in (key["key"], made_by_key["key"]):
        again = change(value, admin.id, "admin")
        assert again.status == 401, again
    assert role_of(tenant_id, admin.id) == "member"
    assert works(weak["key"])
    revoked = {e["target"]["id"] for e in audit_entries(stack, "api_key.revoked")}
    assert {key["id"], made_by_key["id"]} <= revoked and weak["id"] not in revoked


def test_a_removed_admins_keys_cannot_invite_him_back(stack):
    tenant_id, owner, (admin,) = org("admin")
    token = admin.token(tenant_id)
    key = create_key(token, sorted(ROLE_SCOPES["admin"]))
    cli = create_key(token, ["members:write", "members:read"], key_type="cli")
    made_by_key = create_key(key["key"], sorted(ROLE_SCOPES["member"] | {"members:write"}), key_type="int")
    done = remove(owner.token(tenant_id), admin.id)
    assert done.status == 200, done
    assert done.data["apiKeysRevoked"] == 2 and done.data["cliKeysRevoked"] == 1, done
    for value in (key["key"], cli["key"], made_by_key["key"]):
        again = invite(value, admin.email, "member")
        assert again.status == 401, again
        assert not works(value)
    # Another holder's key (here the test's operator) is not touched.
    operator = stack.new_key(tenant_id, sorted(ROLE_SCOPES["admin"]))
    assert works(operator["key"])


def test_a_key_is_not_made_beyond_the_makers_current_role(stack):
    """A token minted before a demotion (or a removal) that reached the key's creation: the key's own
    transaction checks the maker's role now."""
    tenant_id, owner, (admin,) = org("admin")
    from svc_core.auth import tokens
    stale, _ = tokens.mint(subject=admin.id, tenant_id=tenant_id, scopes=ROLE_SCOPES["admin"], credential="user")
    assert change(owner.token(tenant_id), admin.id, "member").status == 200
    refused(call("api_keys", "ApiKeys-CreateKey", token=stale,
                 body={"name": "k", "type": "sdk", "environment": "Production", "scopes": ["members:write"]}),
            403, "role_changed")
    assert create_key(stale, ["projects:read"])["createdBy"] == admin.id  # within the role left: made


def test_a_promotion_leaves_the_sign_ins_and_the_next_refresh_has_the_new_scopes(stack):
    tenant_id, owner, (member,) = org("member")
    session = member.sign_in(tenant_id)
    assert change(owner.token(tenant_id), member.id, "admin").status == 200
    assert works(session["accessToken"])
    renewed = refresh(session["refreshToken"])
    assert renewed.status == 200 and renewed.data["tenant"]["role"] == "admin"


def test_another_tenants_user_or_a_malformed_id_is_no_member(stack):
    tenant_id, owner, _ = org()
    other_tenant, other_owner, (other_member,) = org("member")
    token = owner.token(tenant_id)
    for user_id in (other_owner.id, other_member.id, "usr_nope", "not-an-id"):
        for reply in (change(token, user_id, "member"), remove(token, user_id)):
            assert reply.status == 404 and reply.error["details"] == {"id": user_id, "resource": "member"}, reply
    assert role_of(other_tenant, other_member.id) == "member"
