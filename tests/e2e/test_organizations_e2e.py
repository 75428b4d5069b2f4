"""Organizations end to end on the local stack, as a company's engineers would use them: an owner
invites an admin (who has an account already) and a member (who has none), both read their e-mail
from the local mailbox and accept; the member is held to the permission table on every route; the
admin cannot make an owner; seats and the project quota refuse the one past the plan; a second
tenant of the owner opens with no welcome credit; removing the member ends their access at once;
the audit log lists each action with its actor and no secret; and a webhook subscribed to every
event receives tenant.created, user.created and the membership events live."""

from __future__ import annotations

import json
import secrets

import httpx
import pytest

from devstack import routes
from svc_core.auth.roles import ROLE_SCOPES
from tests.support import mailbox
from tests.support.webhook_receiver import Receiver, new_secret, register

PASSWORD = "an organisation's e2e password"
PLACEHOLDER = "x_01JD2Q7ZB6V8S3K4X9W2M5N7PA"


class Person:
    """One signed-in person: their HTTP client, carrying their access token."""

    def __init__(self, stack, grant: dict) -> None:
        self.grant = grant
        self.user_id = grant["user"]["id"]
        self.tenant_id = grant["tenant"]["id"]
        self.http = httpx.Client(base_url=stack.base_url + "/api/v1", timeout=30,
                                 headers={"Authorization": f"Bearer {grant['accessToken']}"})

    def call(self, method: str, path: str, **kwargs) -> httpx.Response:
        return self.http.request(method, path, **kwargs)


def address(name: str) -> str:
    return f"{name}-{secrets.token_hex(4)}@example.com"


def sign_in(stack, email: str, tenant_id: str | None = None) -> Person:
    with httpx.Client(base_url=stack.base_url + "/api/v1", timeout=30) as http:
        answer = http.post("/auth/login", json={"email": email, "password": PASSWORD, "tenantId": tenant_id})
    assert answer.status_code == 200, answer.text
    return Person(stack, answer.json()["data"])


def register_user(stack, email: str, name: str) -> dict:
    with httpx.Client(base_url=stack.base_url + "/api/v1", timeout=30) as http:
        answer = http.post("/auth/register", json={"email": email, "password": PASSWORD, "name": name})
    assert answer.status_code == 201, answer.text
    return answer.json()["data"]


@pytest.fixture
def receiver():
    made = Receiver(new_secret())
    yield made
    made.stop()


def anonymous(stack) -> httpx.Client:
    return httpx.Client(base_url=stack.base_url + "/api/v1", timeout=30)


def error_of(answer: httpx.Response) -> dict:
    return (answer.json() or {}).get("error") or {}


def refused_for_scope(answer: httpx.Response, scope: str) -> bool:
    return answer.status_code == 403 and error_of(answer).get("details", {}).get("requiredScope") == scope


def test_an_organization_from_invitation_to_removal(local_stack, receiver):
    stack = local_stack
    owner_email, admin_email, member_email = address("owner"), address("admin"), address("member")
    tenant_a = register_user(stack, owner_email, "Olivia Owner")["tenant"]["id"]
    register(tenant_a, receiver.url, receiver.secret, events=["*"])   # a subscriber of every event
    register_user(stack, admin_email, "Ada Admin")                    # has an account (and a workspace) already
    owner = sign_in(stack, owner_email)
    assert owner.tenant_id == tenant_a

    # -- invitations, read from the local mailbox, accepted by an existing and by a new user
    invited_admin = owner.call("POST", "/invitations", json={"email": admin_email, "role": "admin"})
    assert invited_admin.status_code == 201, invited_admin.text
    admin_token = mailbox.token_of(mailbox.latest_link(to=admin_email))
    with anonymous(stack) as http:
        joined = http.post("/invitations/accept", json={"token": admin_token, "password": PASSWORD})
        assert joined.status_code in (200, 201), joined.text
        admin = Person(stack, joined.json()["data"])
        assert (admin.tenant_id, joined.json()["data"]["tenant"]["role"]) == (tenant_a, "admin")
        again = http.post("/invitations/accept", json={"token": admin_token, "password": PASSWORD})
        assert again.status_code in (400, 401, 403, 404, 409, 410), again.text   # single use

    # The admin cannot make an owner: not by invitation, not by a role change.
    as_owner_invite = admin.call("POST", "/invitations", json={"email": address("boss"), "role": "owner"})
    assert as_owner_invite.status_code == 403 and error_of(as_owner_invite)["details"]["reason"] == "owner_required"
    invited_member = admin.call("POST", "/invitations", json={"email": member_email, "role": "member"})
    assert invited_member.status_code == 201, invited_member.text
    member_link = mailbox.latest_link(to=member_email)
    with anonymous(stack) as http:
        looked_up = http.get("/invitations/lookup", params={"token": mailbox.token_of(member_link)})
        assert looked_up.status_code == 200 and looked_up.json()["data"]["accountExists"] is False
        joined = http.post("/invitations/accept", json={"token": mailbox.token_of(member_link), "password": PASSWORD,
                                                        "name": "Max Member"})
        assert joined.status_code in (200, 201), joined.text
    member = Person(stack, joined.json()["data"])
    assert (member.tenant_id, joined.json()["data"]["tenant"]["role"]) == (tenant_a, "member")
    members = {m["userId"]: m["role"] for m in owner.call("GET", "/members").json()["data"]["items"]}
    assert members == {owner.user_id: "owner", admin.user_id: "admin", member.user_id: "member"}

    # -- seats: the free plan's three are taken; the fourth invitation is refused, nothing sent
    fourth_address = address("fourth")
    fourth = owner.call("POST", "/invitations", json={"email": fourth_address, "role": "member"})
    assert fourth.status_code == 403, fourth.text
    assert error_of(fourth)["details"]["feature"] == "seats" and error_of(fourth)["details"]["limit"] == 3
    assert mailbox.messages(to=fourth_address) == []

    # -- the member is held to the permission table on every route that needs a scope
    member_scopes = ROLE_SCOPES["member"]
    checked = 0
    for route in routes.routes():
        scope = route.required_scope
        if scope is None or (scope in member_scopes and route.streams):
            continue
        path = route.path.removeprefix("/api/v1")
        for name in route.path_parameters:
            path = path.replace("{%s}" % name, PLACEHOLDER)
        answer = member.call(route.method, path, json={} if route.is_write else None)
        assert refused_for_scope(answer, scope) is (scope not in member_scopes), (route.method, route.path, answer.text)
        assert answer.status_code < 500, (route.method, route.path, answer.text)
        checked += 1
    assert checked > 40
    # Escalations: the member cannot make themselves an admin; the admin cannot make the member an owner.
    assert refused_for_scope(member.call("PATCH", f"/members/{member.user_id}", json={"role": "admin"}), "members:write")
    to_owner = admin.call("PATCH", f"/members/{member.user_id}", json={"role": "owner"})
    assert to_owner.status_code == 403 and error_of(to_owner)["details"]["reason"] == "owner_required"
    demoted = owner.call("PATCH", f"/members/{admin.user_id}", json={"role": "member"})
    assert demoted.status_code == 200 and demoted.json()["data"]["role"] == "member"
    # Their tokens carried the admin's scopes: the change ends those sign-ins; signed in again, a member.
    assert admin.call("GET", "/members").status_code == 401
    admin = sign_in(stack, admin_email, tenant_a)
    assert refused_for_scope(admin.call("GET", "/audit-log"), "audit:read")

    # -- the project quota: the free plan's ten, and no eleventh
    made = 0
    while True:
        answer = owner.call("POST", "/projects", json={"name": f"P{made}"})
        if answer.status_code != 201:
            break
        made += 1
    assert made == 10 and answer.status_code == 403 and error_of(answer)["details"]["feature"] == "projects"

    # -- a second tenant of the owner: tenant.created reaches tenant A's subscriber; no second welcome credit
    second = owner.call("POST", "/tenants", json={"name": "Second"})
    assert second.status_code == 201, second.text
    tenant_b = second.json()["data"]["id"]
    with anonymous(stack) as http:
        switched = http.post("/auth/refresh", json={"refreshToken": owner.grant["refreshToken"], "tenantId": tenant_b})
    assert switched.status_code == 200, switched.text
    owner_in_b = Person(stack, switched.json()["data"])
    first_balance = owner.call("GET", "/billing/summary").json()["data"]["balance"]["microCredits"]
    second_balance = owner_in_b.call("GET", "/billing/summary").json()["data"]["balance"]["microCredits"]
    assert first_balance > 0 and second_balance == 0

    # -- removal: the member's access ends at once (the next request), and their refresh is refused
    assert member.call("GET", "/projects").status_code == 200
    removed = owner.call("DELETE", f"/members/{member.user_id}")
    assert removed.status_code == 200 and removed.json()["data"]["sessionsEnded"] >= 1, removed.text
    assert member.call("GET", "/projects").status_code == 401
    with anonymous(stack) as http:
        refreshed = http.post("/auth/refresh", json={"refreshToken": member.grant["refreshToken"]})
    assert refreshed.status_code in (401, 403), refreshed.text

    # -- the audit log: every action above, by its actor, and no secret
    log = owner.call("GET", "/audit-log", params={"limit": 100})
    assert log.status_code == 200, log.text
    entries = log.json()["data"]["items"]
    by_action = {}
    for entry in entries:
        by_action.setdefault(entry["action"], []).append(entry)
    actor = lambda action: {e["actor"]["id"] for e in by_action.get(action, [])}  # noqa: E731
    assert actor("invitation.created") == {owner.user_id, admin.user_id}
    assert {e["target"]["id"] for e in by_action["member.added"]} >= {admin.user_id, member.user_id}
    assert actor("member.role_changed") == {owner.user_id}
    assert actor("member.removed") == {owner.user_id}
    assert actor("tenant.created") >= {owner.user_id}
    assert owner.user_id in actor("user.signed_in")
    text = json.dumps(entries)
    for secret in (PASSWORD, admin_token, mailbox.token_of(member_link), owner.grant["refreshToken"],
                   owner.grant["accessToken"], member.grant["refreshToken"]):
        assert secret not in text

    # -- the subscriber received user.created, tenant.created and the membership events, live
    wanted = {"user.created", "tenant.created", "member.added", "member.role_changed", "member.removed"}
    deadline_count = 0
    while True:
        seen = {d.payload["type"] for d in receiver.deliveries if d.payload}
        if wanted <= seen or deadline_count > 60:
            break
        receiver.wait_for(len(receiver.deliveries) + 1, timeout=1)
        deadline_count += 1
    deliveries = [d for d in receiver.deliveries if d.payload]
    assert all(d.verify_error is None for d in receiver.deliveries)
    assert wanted <= {d.payload["type"] for d in deliveries}
    assert all(d.payload["tenantId"] == tenant_a for d in deliveries)
    # (Tenant A's own creation events may reach the fan-out after the subscription was stored: allowed.)
    created = {d.payload["data"]["id"] for d in deliveries if d.payload["type"] == "tenant.created"}
    assert tenant_b in created and created <= {tenant_a, tenant_b}
    joined_users = {d.payload["data"]["userId"] for d in deliveries if d.payload["type"] == "member.added"}
    assert joined_users == {admin.user_id, member.user_id}
    new_users = {d.payload["data"]["id"] for d in deliveries if d.payload["type"] == "user.created"}
    assert member.user_id in new_users and new_users <= {member.user_id, owner.user_id}
