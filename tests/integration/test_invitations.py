"""Invitations end to end on the moto server: the handlers fed real API Gateway events, the link read
from the e-mail the emulator's SES keeps (tests/support/mailbox.py).

The link works once, for the invited address only, for 7 days, not after a revocation nor after a
resend; only its hash is stored and it is in no answer and no log line. Seats: an invitation takes
one in its own transaction, revoking or expiring frees it, accepting keeps it. The role rule: no
one invites above their own permissions; owners are invited by signed-in owners only.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from svc_core.adapters import aws
from svc_core.adapters.dynamo import from_item
from svc_core.auth.roles import ROLE_SCOPES
from svc_core.data import users_table
from svc_core.domain import invitations
from svc_core.domain.tenants import create_tenant_with_owner
from svc_core.platform import ids
from svc_core.platform.config import settings
from tests.support import mailbox
from tests.support.auth_helpers import Clock
from tests.support.functions import call
from tests.support.projects import assert_error
from tests.support.service_logs import follow_stdout
from tests.support.stack import provisioned_stack

PASSWORD = "a long enough test password"
DAY = 86400


@pytest.fixture(scope="module")
def stack(emulator):
    yield from provisioned_stack(emulator)


def api(event: str, token: str | None = None, **kwargs):
    return call("invitations", f"Invitations-{event}", token=token, **kwargs)


def unique(name: str) -> str:
    return f"{name}-{ids.new_ulid().lower()}@example.com"


class Org:
    """A tenant with its owner (a real user), and tokens for each role."""

    def __init__(self, stack) -> None:
        self.owner_email = unique("owner")
        made = create_tenant_with_owner(tenant_name="Acme", email=self.owner_email, user_name="Olive Owner",
                                        password=PASSWORD)
        self.tenant_id, self.owner_id = made["tenant"]["id"], made["user"]["id"]
        self.stack = stack
        self.sign_in()
        self.key = stack.new_key(self.tenant_id)["key"]   # every scope, but not a user

    def sign_in(self) -> None:
        """Access tokens minted now (after the clock travelled, the earlier ones have expired)."""
        self.owner = self.stack.user_token(self.tenant_id, "owner", self.owner_id)
        self.admin = self.stack.user_token(self.tenant_id, "admin", member=True)
        self.member = self.stack.user_token(self.tenant_id, "member", member=True)

    def invite(self, email: str, role: str = "member", token: str | None = None):
        return api("CreateInvitation", token or self.owner, body={"email": email, "role": role})

    def invited(self, email: str, role: str = "member") -> tuple[dict, str]:
        """The invitation made, and the token its e-mail carries."""
        reply = self.invite(email, role)
        assert reply.status == 201, reply
        return reply.data, mailbox.token_of(mailbox.latest_link(to=email))

    def tenant(self) -> dict:
        return table_item(settings().tenants_table, {"id": self.tenant_id})

    def seats(self) -> int:
        return int(self.tenant()["seatsUsed"])


def table_item(table: str, key: dict[str, str]) -> dict | None:
    answer = aws.client("dynamodb").get_item(TableName=table, Key={k: {"S": v} for k, v in key.items()},
                                             ConsistentRead=True)
    return from_item(answer.get("Item"))


def scan(table: str) -> list[dict]:
    found = []
    for page in aws.client("dynamodb").get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
        found += [from_item(item) for item in page.get("Items", [])]
    return found


def accept(token: str, bearer: str | None = None, source_ip: str = "203.0.113.20", **body):
    return api("AcceptInvitation", bearer, body={"token": token, **body}, source_ip=source_ip)


def lookup(token: str):
    return api("LookupInvitation", query={"token": token})


def registered(email: str, name: str = "Existing User") -> str:
    made = create_tenant_with_owner(tenant_name="Own", email=email, user_name=name, password=PASSWORD)
    return made["user"]["id"]


def audit_actions(tenant_id: str) -> list[str]:
    """The tenant's audit entries of invitations, members and sign-ins (not its creation's)."""
    return sorted(e["action"] for e in scan(settings().audit_log_table) if e["tenantId"] == tenant_id
                  and e["action"].startswith(("invitation.", "member.", "user.signed_in")))


def outbox_types(tenant_id: str) -> list[str]:
    return sorted(e["type"] for e in scan(settings().outbox_table) if e["tenantId"] == tenant_id)


# ---- making, and what the invitee receives ----------------------------------------------------------

def test_an_invitation_is_emailed_with_a_one_time_link_whose_hash_alone_is_stored(stack):
    org = Org(stack)
    address = unique("grace")
    reply = org.invite(address, "admin")
    assert reply.status == 201, reply
    view = reply.data
    assert set(view) == {"id", "email", "role", "status", "invitedBy", "created_at", "expires_at"}
    assert (view["email"], view["role"], view["status"], view["invitedBy"]) == (address, "admin", "pending", org.owner_id)
    mail = mailbox.latest(to=address)
    assert mail.sender == "invitations@svc.localhost" and "Acme" in mail.subject
    link = mailbox.latest_link(to=address)
    assert "/api/v1/invitations/accept-page#token=" in link
    token = mailbox.token_of(link)
    assert token.startswith(view["id"] + ".")
    assert token not in reply.text
    stored = table_item(settings().invitations_table, {"tenantId": org.tenant_id, "id": view["id"]})
    assert stored["secretHash"] == hashlib.sha256(token.encode()).hexdigest()
    assert token.split(".", 1)[1] not in json.dumps(stored)
    assert org.seats() == 2
    assert audit_actions(org.tenant_id) == ["invitation.created"]
    listed = api("ListInvitations", org.member)   # members:read
    assert listed.status == 200 and [i["id"] for i in listed.data["items"]] == [view["id"]]
    found = lookup(token)
    assert found.status == 200, found
    assert found.data == {"tenantName": "Acme", "role": "admin", "email": "g***@example.com",
                          "expires_at": view["expires_at"], "accountExists": False}


def test_accepting_as_a_new_user_registers_them_into_the_tenant_in_one_transaction(stack):
    org = Org(stack)
    address = unique("newbie")
    view, token = org.invited(address, "member")
    reply = accept(token, name="Nina Newbie", password=PASSWORD)
    assert reply.status == 200, reply
    pair = reply.data
    assert pair["tenant"]["id"] == org.tenant_id and pair["tenant"]["role"] == "member"
    assert pair["user"]["email"] == address and pair["accessToken"] and pair["refreshToken"].startswith("rt_ses_")
    assert reply.headers["set-cookie"].startswith(f"refresh_token={pair['refreshToken']};")   # as /auth/login
    assert "HttpOnly" in reply.headers["set-cookie"] and "Path=/api/v1/auth" in reply.headers["set-cookie"]
    user_id = pair["user"]["id"]
    membership = users_table.membership(user_id, org.tenant_id)
    assert (membership["role"], membership["email"], membership["name"]) == ("member", address, "Nina Newbie")
    assert users_table.id_for_email(address) == user_id
    stored = table_item(settings().invitations_table, {"tenantId": org.tenant_id, "id": view["id"]})
    assert stored["status"] == "accepted" and "secretHash" not in stored and stored["ttl"] > 0
    assert org.seats() == 2   # the invitation's seat is the member's now
    assert outbox_types(org.tenant_id).count("member.added") == 1
    assert outbox_types(org.tenant_id).count("user.created") == 2   # the owner's, and the invitee's here
    assert audit_actions(org.tenant_id) == ["invitation.accepted", "invitation.created", "member.added"]
    accepted = next(e for e in scan(settings().audit_log_table) if e["action"] == "invitation.accepted"
                    and e["tenantId"] == org.tenant_id)
    assert accepted["actor"] == {"type": "user", "id": user_id} and accepted["sourceIp"] == "203.0.113.20"
    # Used once: the same link again, and with another body, is refused.
    again = accept(token, name="Nina Again", password=PASSWORD)
    assert assert_error(again, 409, "CONFLICT")["reason"] == "accepted"
    assert assert_error(lookup(token), 409, "CONFLICT")["reason"] == "accepted"


def test_a_new_account_needs_a_name_and_a_long_enough_password(stack):
    org = Org(stack)
    address = unique("short")
    _, token = org.invited(address)
    assert assert_error(accept(token, password=PASSWORD), 400, "VALIDATION_ERROR")["fields"][0]["field"] == "name"
    short = accept(token, name="Sam", password="too short")
    assert assert_error(short, 400, "VALIDATION_ERROR")["fields"][0]["field"] == "password"
    assert users_table.id_for_email(address) is None
    assert accept(token, name="Sam", password=PASSWORD).status == 200


def test_an_existing_account_accepts_with_its_password_under_the_sign_in_throttles(stack):
    org = Org(stack)
    address = unique("ada")
    user_id = registered(address.upper())   # the same address, spelled otherwise
    view, token = org.invited(address, "admin")
    assert lookup(token).data["accountExists"] is True
    wrong = accept(token, password="not the password at all")
    assert_error(wrong, 401, "UNAUTHORIZED")
    assert table_item(settings().invitations_table, {"tenantId": org.tenant_id, "id": view["id"]})["status"] == "pending"
    reply = accept(token, password=PASSWORD)
    assert reply.status == 200, reply
    assert reply.data["user"]["id"] == user_id and reply.data["tenant"] == {
        "id": org.tenant_id, "name": "Acme", "plan": "free", "status": "active", "role": "admin"}
    assert users_table.membership(user_id, org.tenant_id)["role"] == "admin"
    signed_in = [e for e in scan(settings().audit_log_table) if e["tenantId"] == org.tenant_id
                 and e["action"] == "user.signed_in"]   # an admin's sign-in is recorded, as at /auth/login
    assert [(e["actor"]["id"], e["changes"]["method"]["new"]) for e in signed_in] == [(user_id, "invitation")]
    assert "user.created" not in [e["type"] for e in scan(settings().outbox_table)
                                  if e["tenantId"] == org.tenant_id and e["data"].get("id") == user_id]


def test_failed_passwords_at_an_invitation_count_as_failed_sign_ins(stack):
    org = Org(stack)
    address = unique("locked")
    registered(address)
    _, token = org.invited(address)
    for _ in range(settings().login_failures_allowed):
        assert accept(token, password="wrong wrong wrong", source_ip="203.0.113.77").status == 401
    refused = accept(token, password=PASSWORD, source_ip="203.0.113.77")
    assert assert_error(refused, 429, "RATE_LIMIT_EXCEEDED")["counter"] == "account_address"


def test_a_signed_in_user_of_the_invited_address_accepts_with_their_token_and_no_other_user_can(stack):
    org = Org(stack)
    address = unique("bearer")
    user_id = registered(address)
    other_id = registered(unique("someone-else"))
    view, token = org.invited(address)
    own_token = stack.user_token(ids.new_id("ten"), "owner", user_id)
    other_token = stack.user_token(ids.new_id("ten"), "owner", other_id)
    refused = accept(token, bearer=other_token)
    assert assert_error(refused, 403, "FORBIDDEN")["reason"] == "email_mismatch"
    assert users_table.membership(other_id, org.tenant_id) is None
    key_refused = accept(token, bearer=org.key)
    assert_error(key_refused, 403, "FORBIDDEN")
    reply = accept(token, bearer=own_token)
    assert reply.status == 200, reply
    assert reply.data["user"]["id"] == user_id and reply.data["tenant"]["id"] == org.tenant_id
    # The other user cannot use the link now either, nor with a password of their own.
    assert accept(token, bearer=other_token).status == 409


# ---- expiry, revocation, resending ---------------------------------------------------------------------

def test_an_expired_link_is_refused_and_its_seat_is_freed_when_next_seen(stack, monkeypatch):
    org = Org(stack)
    address = unique("late")
    clock = Clock(monkeypatch)
    view, token = org.invited(address)
    assert org.seats() == 2
    clock.travel(7 * DAY - 1)
    assert lookup(token).status == 200
    clock.travel(1)
    assert assert_error(lookup(token), 409, "CONFLICT")["reason"] == "expired"
    assert assert_error(accept(token, name="Late", password=PASSWORD), 409, "CONFLICT")["reason"] == "expired"
    assert org.seats() == 2                       # not seen by a list yet
    org.sign_in()
    listed = api("ListInvitations", org.admin)
    assert listed.data["items"][0]["status"] == "expired"
    assert org.seats() == 1                       # the list gave the seat back, once
    assert api("ListInvitations", org.admin).status == 200 and org.seats() == 1
    assert users_table.id_for_email(address) is None


def test_a_revoked_link_is_refused_and_its_seat_given_back(stack):
    org = Org(stack)
    address = unique("revoked")
    view, token = org.invited(address)
    member_refused = api("RevokeInvitation", org.member, path_params={"id": view["id"]})
    assert_error(member_refused, 403, "FORBIDDEN")
    reply = api("RevokeInvitation", org.admin, path_params={"id": view["id"]})
    assert reply.status == 200 and reply.data["status"] == "revoked"
    assert org.seats() == 1
    again = api("RevokeInvitation", org.admin, path_params={"id": view["id"]})
    assert again.status == 200 and org.seats() == 1   # no second seat given back
    assert assert_error(accept(token, name="Rev", password=PASSWORD), 409, "CONFLICT")["reason"] == "revoked"
    assert users_table.id_for_email(address) is None
    assert "invitation.revoked" in audit_actions(org.tenant_id)
    assert api("ResendInvitation", org.admin, path_params={"id": view["id"]}).status == 409


def test_a_resent_invitation_kills_the_old_link_and_runs_seven_days_from_the_resend(stack, monkeypatch):
    org = Org(stack)
    address = unique("resent")
    clock = Clock(monkeypatch)
    view, old_token = org.invited(address)
    clock.travel(5 * DAY)
    org.sign_in()
    reply = api("ResendInvitation", org.admin, path_params={"id": view["id"]})
    assert reply.status == 200, reply
    new_token = mailbox.token_of(mailbox.latest_link(to=address))
    assert new_token != old_token and len(mailbox.messages(to=address)) == 2
    assert reply.data["expires_at"] > view["expires_at"]
    assert_error(lookup(old_token), 404, "RESOURCE_NOT_FOUND")
    assert_error(accept(old_token, name="Old", password=PASSWORD), 404, "RESOURCE_NOT_FOUND")
    clock.travel(6 * DAY)   # 11 days after the first link, 6 after the resend
    assert org.seats() == 2
    assert accept(new_token, name="Resent", password=PASSWORD).status == 200
    assert "invitation.resent" in audit_actions(org.tenant_id)


def test_an_expired_invitation_resent_takes_a_seat_again(stack, monkeypatch):
    org = Org(stack)
    clock = Clock(monkeypatch)
    view, _ = org.invited(unique("revive"))
    clock.travel(8 * DAY)
    org.sign_in()
    api("ListInvitations", org.admin)
    assert org.seats() == 1
    reply = api("ResendInvitation", org.owner, path_params={"id": view["id"]})
    assert reply.status == 200 and reply.data["status"] == "pending"
    assert org.seats() == 2


def test_a_forged_or_unknown_token_names_nothing(stack):
    org = Org(stack)
    view, token = org.invited(unique("forged"))
    forged = token.split(".")[0] + "." + "A" * 43
    assert_error(lookup(forged), 404, "RESOURCE_NOT_FOUND")
    assert_error(accept(forged, name="F", password=PASSWORD), 404, "RESOURCE_NOT_FOUND")
    unknown = ids.new_id("ivt") + "." + token.split(".")[1]
    assert_error(accept(unknown, name="F", password=PASSWORD), 404, "RESOURCE_NOT_FOUND")
    assert lookup("not-a-token").status == 404


# ---- who may invite whom, and seats ----------------------------------------------------------------------

def test_nobody_invites_above_their_role_and_only_a_signed_in_owner_invites_an_owner(stack):
    org = Org(stack)
    org_seats = org.seats()
    assert_error(org.invite(unique("m"), "member", org.member), 403, "FORBIDDEN")   # no members:write
    assert assert_error(org.invite(unique("o"), "owner", org.admin), 403, "FORBIDDEN")["reason"] == "owner_required"
    assert assert_error(org.invite(unique("o"), "owner", org.key), 403, "FORBIDDEN")["reason"] == "owner_required"
    assert org.seats() == org_seats
    assert org.invite(unique("a"), "admin", org.admin).status == 201
    address = unique("new-owner")
    owner_view, token = org.invited(address, "owner")
    assert accept(token, name="Second Owner", password=PASSWORD).status == 200
    assert int(org.tenant()["owners"]) == 2


def test_a_member_or_an_already_invited_address_cannot_be_invited_again(stack):
    org = Org(stack)
    assert assert_error(org.invite(org.owner_email.upper()), 409, "CONFLICT")["reason"] == "already_member"
    address = unique("twice")
    org.invited(address)
    assert assert_error(org.invite(address.upper()), 409, "CONFLICT")["reason"] == "already_invited"
    assert org.seats() == 2


def test_seats_hold_members_and_pending_invitations_and_refuse_the_one_past_the_plan(stack, monkeypatch):
    org = Org(stack)   # free: 3 seats, the owner holds one
    clock = Clock(monkeypatch)
    first, _ = org.invited(unique("s1"))
    org.invited(unique("s2"))
    refused = org.invite(unique("s3"))
    assert assert_error(refused, 403, "FORBIDDEN") == {"feature": "seats", "limit": 3, "currentPlan": "free",
                                                      "requiredPlan": "starter"}
    assert org.seats() == 3 and len(api("ListInvitations", org.owner).data["items"]) == 2
    api("RevokeInvitation", org.owner, path_params={"id": first["id"]})
    assert org.invite(unique("s3")).status == 201
    assert org.invite(unique("s4")).status == 403
    clock.travel(7 * DAY)   # both pending ones expire: inviting frees their seats before refusing
    org.sign_in()
    assert org.invite(unique("s5")).status == 201
    assert org.seats() == 2


# ---- the page, the bounce log and the logs ----------------------------------------------------------------

def test_the_accept_page_is_served_with_a_strict_policy(stack):
    reply = api("AcceptPage")
    assert reply.status == 200 and reply.headers["content-type"].startswith("text/html")
    assert "/api/v1/invitations/accept" in reply.text and "script-src 'sha256-" in reply.headers["content-security-policy"]
    assert reply.headers["x-frame-options"] == "DENY" and reply.headers["referrer-policy"] == "no-referrer"


def test_a_bounce_is_logged_with_the_recipient_masked(monkeypatch, capsys):
    from tests.support.functions import load_function
    follow_stdout(monkeypatch)
    notice = {"eventType": "Bounce", "mail": {"messageId": "m-1"},
              "bounce": {"bounceType": "Permanent", "bounceSubType": "General",
                         "bouncedRecipients": [{"emailAddress": "nobody@example.com"}]}}
    capsys.readouterr()
    load_function("email_events").lambda_handler({"Records": [{"Sns": {"Message": json.dumps(notice)}}]}, None)
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    logged = next(line for line in lines if line["message"] == "e-mail not delivered")
    assert logged["bounceType"] == "Permanent" and logged["messageId"] == "m-1"
    assert logged["recipients"] == ["n***@example.com"]


def test_no_token_reaches_a_log_line(stack, monkeypatch, capsys, caplog):
    follow_stdout(monkeypatch)
    capsys.readouterr()
    org = Org(stack)
    address = unique("logged")
    view, token = org.invited(address)
    lookup(token)
    accept(token, password="wrong but long enough")   # no account: name missing
    api("ResendInvitation", org.owner, path_params={"id": view["id"]})
    second = mailbox.token_of(mailbox.latest_link(to=address))
    assert accept(second, name="Logged", password=PASSWORD).status == 200
    out = capsys.readouterr()
    logged = out.out + out.err + caplog.text
    assert "invitation e-mail sent" in logged
    for secret in (token, second):
        assert secret.split(".", 1)[1] not in logged


def test_an_unsent_email_is_answered_503_and_the_invitation_can_be_resent(stack, monkeypatch):
    org = Org(stack)
    address = unique("unsent")
    monkeypatch.setenv("EMAIL_SENDER", "not-verified@elsewhere.example")
    settings.cache_clear()
    reply = org.invite(address)
    assert assert_error(reply, 503, "SERVICE_UNAVAILABLE")["reason"] == "email_not_sent"
    invitation_id = assert_error(reply, 503, "SERVICE_UNAVAILABLE")["id"]
    assert mailbox.messages(to=address) == []
    monkeypatch.setenv("EMAIL_SENDER", "invitations@svc.localhost")
    settings.cache_clear()
    assert api("ResendInvitation", org.owner, path_params={"id": invitation_id}).status == 200
    assert invitations.ACCEPT_PAGE in mailbox.latest_link(to=address)


def test_an_invitation_into_a_suspended_tenant_is_not_accepted_and_its_lookup_says_so(stack):
    from svc_core.domain.tenants import set_status
    org = Org(stack)
    address = unique("suspended")
    view, token = org.invited(address)
    assert lookup(token).status == 200
    set_status(org.tenant_id, "suspended")
    refused = accept(token, name="Sue", password=PASSWORD)
    details = assert_error(refused, 403, "FORBIDDEN")
    assert details == {"reason": "tenant_suspended", "tenantId": org.tenant_id}
    looked_up = lookup(token)   # the page that shows the link says what accepting it would answer
    assert assert_error(looked_up, 403, "FORBIDDEN") == details and looked_up.error["message"] == refused.error["message"]
    assert users_table.id_for_email(address) is None
    assert table_item(settings().invitations_table, {"tenantId": org.tenant_id, "id": view["id"]})["status"] == "pending"
    set_status(org.tenant_id, "active")
    assert lookup(token).status == 200


# ---- the sender's standing, and the plan's seats today ----------------------------------------------------

def test_a_removed_or_demoted_senders_invitation_is_refused(stack):
    from tests.integration.test_members import change, remove
    from tests.integration.test_members import org as organization
    from tests.support.regions import set_plan
    tenant_id, owner, (admin, other) = organization("admin", "admin")
    set_plan(tenant_id, "starter")  # seats for the two invitations
    sent = {}
    for person in (admin, other):  # each invites an address of their own, as an admin
        address = unique("second")
        made = api("CreateInvitation", person.token(tenant_id), body={"email": address, "role": "admin"})
        assert made.status == 201, made
        sent[person.id] = (address, mailbox.token_of(mailbox.latest_link(to=address)))
    assert remove(owner.token(tenant_id), admin.id).status == 200
    assert change(owner.token(tenant_id), other.id, "member").status == 200  # a member invites no one
    for person in (admin, other):
        address, token = sent[person.id]
        assert assert_error(lookup(token), 409, "CONFLICT")["reason"] == "sender_not_allowed"
        refused = accept(token, name="Second Self", password=PASSWORD)
        assert assert_error(refused, 409, "CONFLICT")["reason"] == "sender_not_allowed"
        assert users_table.id_for_email(address) is None  # nothing was made


def test_an_invitation_sent_by_a_key_since_revoked_is_refused(stack):
    org = Org(stack)
    key = stack.new_key(org.tenant_id, ["members:read", "members:write", *sorted(ROLE_SCOPES["member"])])
    address = unique("by-key")
    assert org.invite(address, token=key["key"]).status == 201
    token = mailbox.token_of(mailbox.latest_link(to=address))
    assert lookup(token).status == 200
    assert call("api_keys", "ApiKeys-RevokeKey", token=org.key, path_params={"id": key["id"]}).status == 200
    refused = accept(token, name="Kay", password=PASSWORD)
    assert assert_error(refused, 409, "CONFLICT")["reason"] == "sender_not_allowed"


def test_a_sender_demoted_as_the_invitation_is_accepted_wins_over_it(stack, monkeypatch):
    """The sender's role is checked in the acceptance's own transaction: a demotion that commits between
    the read and the write makes the acceptance fail, never half made."""
    from tests.integration.test_members import change
    from tests.integration.test_members import org as organization
    tenant_id, owner, (admin,) = organization("admin")
    address = unique("raced")
    assert api("CreateInvitation", admin.token(tenant_id), body={"email": address, "role": "admin"}).status == 201
    token = mailbox.token_of(mailbox.latest_link(to=address))
    checks = invitations._sender_checks

    def then_demoted(record, now):
        found = checks(record, now)  # the sender read as an admin...
        assert change(owner.token(tenant_id), admin.id, "member").status == 200  # ...and demoted at once
        return found

    monkeypatch.setattr(invitations, "_sender_checks", then_demoted)
    refused = accept(token, name="Ray", password=PASSWORD)
    monkeypatch.undo()
    assert assert_error(refused, 409, "CONFLICT")["reason"] == "sender_not_allowed"
    assert users_table.id_for_email(address) is None


def test_a_plan_downgraded_since_the_invitations_leaves_no_seat_beyond_it(stack):
    from tests.support.regions import set_plan
    org = Org(stack)
    set_plan(org.tenant_id, "starter")  # 10 seats
    invited = [org.invited(unique(f"d{i}")) for i in range(4)]
    assert org.seats() == 5
    set_plan(org.tenant_id, "free")  # 3 seats: 5 in use
    refused = accept(invited[0][1], name="Dee", password=PASSWORD)
    assert assert_error(refused, 403, "FORBIDDEN") == {"feature": "seats", "limit": 3, "currentPlan": "free",
                                                      "requiredPlan": "starter"}
    assert users_table.id_for_email(invited[0][0]["email"]) is None
    for view, _ in invited[2:]:  # the owners free two seats: 3 in use, this invitation's among them
        assert api("RevokeInvitation", org.owner, path_params={"id": view["id"]}).status == 200
    assert accept(invited[0][1], name="Dee", password=PASSWORD).status == 200
    assert org.seats() == 3
    assert accept(invited[1][1], name="Dot", password=PASSWORD).status == 200  # still within the plan's 3
    assert org.seats() == 3
