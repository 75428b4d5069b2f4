"""A forgotten password reset by e-mail, a signed-in person's password change, their sessions and their
name: the auth function's handlers fed real API Gateway events on the moto server, the link read from
the mail the emulator's SES keeps (tests/support/mailbox.py).

Asking never tells whether an address has an account; the link works once, for 30 minutes, and only
the latest one; a reset ends every session (its refresh tokens and their access tokens); a changed
password ends the others and keeps the caller's, and a wrong current password counts as a failed
sign-in. Only a user's token reaches a person's own routes. No token and no password in a log line.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from svc_core.adapters import aws
from svc_core.adapters.dynamo import from_item
from svc_core.platform import ids
from svc_core.platform.config import settings
from tests.support import mailbox
from tests.support.auth_helpers import Clock
from tests.support.functions import call
from tests.support.projects import assert_error
from tests.support.service_logs import follow_stdout

PASSWORD = "correct horse battery staple"
NEW_PASSWORD = "a brand new long password"
RESET_PAGE = "/api/v1/auth/password/reset-page#token="


def unique(name: str) -> str:
    return f"{name}-{ids.new_ulid().lower()}@example.com"


def auth(event: str, token: str | None = None, **kwargs):
    return call("auth", f"Auth-{event}", token=token, **kwargs)


def register(email: str, password: str = PASSWORD, name: str = "Ada") -> dict:
    made = auth("Register", body={"email": email, "password": password, "name": name})
    assert made.status == 201, made
    return made.data


def login(email: str, password: str = PASSWORD, source_ip: str = "203.0.113.10", **extra):
    return auth("Login", body={"email": email, "password": password, **extra}, source_ip=source_ip)


def signed_in(email: str, password: str = PASSWORD) -> dict:
    answer = login(email, password)
    assert answer.status == 200, answer
    return answer.data


def forgot(email: str, source_ip: str = "203.0.113.10"):
    return auth("ForgotPassword", body={"email": email}, source_ip=source_ip)


def reset(token: str, password: str = NEW_PASSWORD):
    return auth("ResetPassword", body={"token": token, "password": password})


def mailed_token(email: str) -> str:
    link = mailbox.latest_link(to=email)
    assert RESET_PAGE in link, link
    return mailbox.token_of(link)


def projects(token: str):
    return call("projects", "Projects-ListProjects", token=token)


def refresh(refresh_token: str):
    return auth("Refresh", body={"refreshToken": refresh_token})


def scan(table: str) -> list[dict]:
    found = []
    for page in aws.client("dynamodb").get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
        found += [from_item(item) for item in page.get("Items", [])]
    return found


def audit_actions(tenant_id: str) -> list[str]:
    return sorted(e["action"] for e in scan(settings().audit_log_table)
                  if e["tenantId"] == tenant_id and e["action"].startswith("user.") and e["action"] != "user.signed_in")


# ---- a forgotten password -------------------------------------------------------------------------------

def test_asking_emails_a_link_whose_token_only_the_mail_holds_and_whose_hash_alone_is_stored(stack):
    address = unique("ada")
    register(address)
    answer = forgot(address.upper())
    assert answer.status == 202, answer
    assert answer.data == {"email": address.upper(), "expiresIn": 1800}
    mail = mailbox.latest(to=address)
    assert mail.sender == "invitations@svc.localhost" and "Reset your" in mail.subject and "password" in mail.subject
    token = mailed_token(address)
    reset_id = token.split(".")[0]
    assert reset_id.startswith("prt_") and token not in answer.text
    stored = [item for item in scan(settings().users_table) if item["pk"] == f"RESET#{reset_id}"]
    assert len(stored) == 1 and stored[0]["secretHash"] == hashlib.sha256(token.encode()).hexdigest()
    assert token.split(".")[1] not in json.dumps(scan(settings().users_table))
    assert int(stored[0]["expiresAt"]) - int(stored[0]["ttl"]) == -86400   # kept a day past its end


def test_an_unknown_address_gets_the_same_answer_and_nothing_is_sent_or_stored(stack):
    known, unknown = unique("known"), unique("nobody")
    register(known)

    def stored():   # every item but the per-address request counters, which count any ask
        return (scan(settings().users_table),
                [i for i in scan(settings().rate_limits_table) if not i["pk"].startswith("addr#")])

    before = stored()
    answer = forgot(unknown)
    assert answer.status == 202 and answer.data == {"email": unknown, "expiresIn": 1800}
    assert stored() == before and mailbox.messages(to=unknown) == []
    for spelling in (unknown.upper(), f" {unknown} "):   # a valid address or not, a known one or not: alike
        assert forgot(spelling).data == {"email": spelling, "expiresIn": 1800}
    assert stored() == before
    known_answer = forgot(known)
    assert (known_answer.status, known_answer.data) == (202, {"email": known, "expiresIn": 1800})
    assert known_answer.headers.keys() == answer.headers.keys()
    assert len(mailbox.messages(to=known)) == 1 and stored() != before


def test_a_disabled_account_gets_the_same_answer_and_no_mail(stack):
    from ops.__main__ import main as ops
    address = unique("disabled")
    register(address)
    assert ops(["users", "disable", address]) == 0
    assert forgot(address).status == 202
    assert mailbox.messages(to=address) == []


def test_a_reset_sets_the_password_works_once_and_ends_every_session(stack):
    address = unique("reset")
    register(address)
    first, second = signed_in(address), signed_in(address)
    renewed = refresh(second["refreshToken"]).data   # a refresh token rotated before the reset
    assert projects(first["accessToken"]).status == 200
    assert forgot(address).status == 202
    token = mailed_token(address)
    done = reset(token)
    assert done.status == 200, done
    assert done.data == {"email": address, "sessionsEnded": 2}
    assert login(address).status == 401                                 # the old password
    assert login(address, NEW_PASSWORD).status == 200                   # the new one signs in
    for refresh_token in (first["refreshToken"], renewed["refreshToken"]):
        assert refresh(refresh_token).status == 401                     # every refresh token
    for access_token in (first["accessToken"], renewed["accessToken"]):
        answer = projects(access_token)                                 # and the access tokens minted from them
        assert answer.status == 401 and answer.error["details"]["reason"] == "session_ended"
    assert assert_error(reset(token, "yet another long password"), 409, "CONFLICT")["reason"] == "used"
    assert login(address, "yet another long password").status == 401


def test_a_newer_request_makes_the_earlier_link_dead(stack):
    address = unique("twice")
    register(address)
    forgot(address)
    older = mailed_token(address)
    forgot(address)
    newer = mailed_token(address)
    assert newer != older and len(mailbox.messages(to=address)) == 2
    assert_error(reset(older), 404, "RESOURCE_NOT_FOUND")
    assert login(address).status == 200                                 # nothing changed
    assert reset(newer).status == 200


def test_a_link_expires_after_30_minutes(stack, monkeypatch):
    clock = Clock(monkeypatch)
    late, in_time = unique("late"), unique("in-time")
    for address in (late, in_time):
        register(address)
        forgot(address)
    late_token, in_time_token = mailed_token(late), mailed_token(in_time)
    clock.travel(30 * 60 - 1)
    assert reset(in_time_token).status == 200
    clock.travel(1)
    assert assert_error(reset(late_token), 409, "CONFLICT")["reason"] == "expired"
    assert login(late).status == 200


def test_a_forged_unknown_or_malformed_token_names_nothing(stack):
    address = unique("forged")
    register(address)
    forgot(address)
    token = mailed_token(address)
    reset_id, secret = token.split(".")
    assert_error(reset(f"{reset_id}.{'A' * 43}"), 404, "RESOURCE_NOT_FOUND")
    assert_error(reset(f"{ids.new_id('prt')}.{secret}"), 404, "RESOURCE_NOT_FOUND")
    fields = assert_error(reset("not-a-token"), 400, "VALIDATION_ERROR")["fields"]
    assert [f["field"] for f in fields] == ["token"]
    assert reset(token).status == 200                                   # the real one was left alone


def test_the_new_password_follows_registrations_rules(stack):
    address = unique("rules")
    register(address)
    forgot(address)
    fields = assert_error(reset(mailed_token(address), "too short"), 400, "VALIDATION_ERROR")["fields"]
    assert [f["field"] for f in fields] == ["password"]
    assert reset(mailed_token(address)).status == 200                   # a refused one does not use the link


def test_at_most_three_mails_an_hour_go_to_one_account_and_the_fourth_ask_answers_alike(stack, monkeypatch):
    clock = Clock(monkeypatch, 1_900_000_800.0 + 10)   # 10 s into an hour
    address = unique("often")
    register(address)
    answers = [forgot(address) for _ in range(4)]
    assert [a.status for a in answers] == [202] * 4 and len({json.dumps(a.data) for a in answers}) == 1
    assert len(mailbox.messages(to=address)) == 3
    assert reset(mailed_token(address)).status == 200                   # the third link is the live one
    clock.travel(3600)
    forgot(address)
    assert len(mailbox.messages(to=address)) == 4


def test_a_changed_password_kills_a_pending_link(stack):
    address = unique("changed")
    register(address)
    pair = signed_in(address)
    forgot(address)
    token = mailed_token(address)
    assert auth("ChangePassword", pair["accessToken"],
                body={"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD}).status == 200
    assert_error(reset(token, "another long password!"), 404, "RESOURCE_NOT_FOUND")


def test_the_link_opens_the_dashboard_when_the_deployment_has_one(stack, monkeypatch):
    monkeypatch.setenv("DASHBOARD_URL", "https://console.example.com/")
    settings.cache_clear()
    try:
        address = unique("dashboard")
        register(address)
        forgot(address)
        link = mailbox.latest_link(to=address)
        assert link.startswith("https://console.example.com/#/reset-password?token=prt_"), link
        token = link.split("?token=", 1)[1]
        assert reset(token).status == 200
    finally:
        monkeypatch.delenv("DASHBOARD_URL")
        settings.cache_clear()


def test_the_reset_page_is_served_with_a_strict_policy(stack):
    page = auth("PasswordResetPage")
    assert page.status == 200 and page.headers["content-type"].startswith("text/html")
    assert "/api/v1/auth/password/reset" in page.text and 'autocomplete="new-password"' in page.text
    policy = page.headers["content-security-policy"]
    assert "script-src 'sha256-" in policy and "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
    assert page.headers["x-frame-options"] == "DENY" and page.headers["referrer-policy"] == "no-referrer"
    assert page.headers["cache-control"] == "no-store"


def test_an_unsent_mail_is_logged_never_told(stack, monkeypatch, capsys):
    follow_stdout(monkeypatch)
    address = unique("unsent")
    register(address)
    monkeypatch.setenv("EMAIL_SENDER", "not-verified@elsewhere.example")
    settings.cache_clear()
    try:
        capsys.readouterr()
        answer = forgot(address)
        assert answer.status == 202 and answer.data == {"email": address, "expiresIn": 1800}
        assert "password reset e-mail not sent" in capsys.readouterr().out
    finally:
        monkeypatch.setenv("EMAIL_SENDER", "invitations@svc.localhost")
        settings.cache_clear()


# ---- the audit log ----------------------------------------------------------------------------------------

def _member_tenant(stack, user_id: str) -> str:
    from svc_core.data import users_table
    from svc_core.data.common import transact
    from svc_core.platform import timeutil
    tenant_id = stack.new_tenant("Where Ada is a member")
    transact([users_table.put_membership(user_id, tenant_id, "member", timeutil.iso(timeutil.now() + 1))])
    return tenant_id


def test_a_reset_a_change_and_ended_sessions_are_audited_where_the_person_owns_or_administers(stack):
    address = unique("audited")
    made = register(address)
    owned, as_member = made["tenant"]["id"], _member_tenant(stack, made["user"]["id"])
    pair, other = signed_in(address), signed_in(address)
    assert auth("ChangePassword", pair["accessToken"],
                body={"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD}).status == 200
    other = signed_in(address, NEW_PASSWORD)
    assert auth("EndOtherSessions", pair["accessToken"]).data["sessionsEnded"] == 1
    forgot(address)
    assert reset(mailed_token(address), PASSWORD).status == 200
    assert audit_actions(owned) == ["user.password_changed", "user.password_reset", "user.sessions_ended"]
    assert audit_actions(as_member) == []   # a member's sign-ins are not that tenant's log's either
    entries = {e["action"]: e for e in scan(settings().audit_log_table) if e["tenantId"] == owned}
    assert entries["user.sessions_ended"]["changes"]["sessionIds"]["new"] == [other["refreshToken"][3:].split(".")[0]]
    assert entries["user.password_reset"]["actor"] == {"type": "user", "id": made["user"]["id"]}
    assert entries["user.password_changed"]["requestId"] and entries["user.password_changed"]["sourceIp"]


# ---- a signed-in person's password --------------------------------------------------------------------------

def change(token: str, current: str = PASSWORD, new: str = NEW_PASSWORD, source_ip: str = "203.0.113.10"):
    return auth("ChangePassword", token, body={"currentPassword": current, "newPassword": new}, source_ip=source_ip)


def test_changing_the_password_ends_the_other_sessions_and_keeps_the_current_one(stack):
    address = unique("change")
    register(address)
    mine, other = signed_in(address), signed_in(address)
    answer = change(mine["accessToken"])
    assert answer.status == 200, answer
    assert answer.data == {"sessionsEnded": 1, "currentSessionId": mine["refreshToken"][3:].split(".")[0]}
    assert projects(mine["accessToken"]).status == 200 and refresh(mine["refreshToken"]).status == 200
    assert projects(other["accessToken"]).status == 401 and refresh(other["refreshToken"]).status == 401
    assert login(address).status == 401 and login(address, NEW_PASSWORD).status == 200


def test_a_wrong_current_password_is_refused_and_counted_as_a_failed_sign_in(stack, monkeypatch):
    Clock(monkeypatch, 1_900_000_800.0 + 10)
    address = unique("guess")
    register(address)
    token = signed_in(address)["accessToken"]
    for n in range(5):
        refused = change(token, current=f"a wrong guess number {n}", source_ip="198.51.100.7")
        assert assert_error(refused, 403, "FORBIDDEN")["reason"] == "current_password_wrong"
    blocked = change(token, source_ip="198.51.100.7")   # even the right one, from that address
    assert assert_error(blocked, 429, "RATE_LIMIT_EXCEEDED")["counter"] == "account_address"
    assert login(address, source_ip="198.51.100.7").status == 429   # the same counter as sign-in's
    assert login(address, NEW_PASSWORD).status == 401 and login(address).status == 200   # nothing changed
    assert projects(token).status == 200                               # and the caller stays signed in


def test_the_new_password_of_a_change_follows_registrations_rules(stack):
    address = unique("short")
    register(address)
    fields = assert_error(change(signed_in(address)["accessToken"], new="short"), 400, "VALIDATION_ERROR")["fields"]
    assert [f["field"] for f in fields] == ["newPassword"]


# ---- the sessions ------------------------------------------------------------------------------------------

def sessions(token: str, **query):
    return auth("ListSessions", token, query={k: str(v) for k, v in query.items()} or None)


def session_id(pair: dict) -> str:
    return pair["refreshToken"][3:].split(".")[0]


def test_the_open_sessions_are_listed_newest_first_with_the_callers_marked(stack):
    address = unique("list")
    register(address)
    pairs = [signed_in(address) for _ in range(3)]
    auth("Logout", body={"refreshToken": signed_in(address)["refreshToken"]})   # an ended one is not listed
    listed = sessions(pairs[1]["accessToken"])
    assert listed.status == 200, listed
    items = listed.data["items"]
    assert [s["id"] for s in items] == [session_id(p) for p in reversed(pairs)]
    assert [s["current"] for s in items] == [False, True, False]
    assert set(items[0]) == {"id", "current", "tenantId", "currentTenantId", "created_at", "last_refreshed_at",
                             "expires_at"}
    assert items[0]["tenantId"] == items[0]["currentTenantId"] == pairs[0]["tenant"]["id"]
    assert items[0]["last_refreshed_at"] == items[0]["created_at"] and listed.data["nextCursor"] is None
    first_page = sessions(pairs[1]["accessToken"], limit=2).data
    assert [s["id"] for s in first_page["items"]] == [session_id(pairs[2]), session_id(pairs[1])]
    rest = sessions(pairs[1]["accessToken"], limit=2, cursor=first_page["nextCursor"]).data
    assert [s["id"] for s in rest["items"]] == [session_id(pairs[0])] and rest["nextCursor"] is None


def test_a_refresh_shows_as_the_sessions_latest_use(stack, monkeypatch):
    clock = Clock(monkeypatch)
    address = unique("refreshed")
    register(address)
    pair = signed_in(address)
    clock.travel(600)
    renewed = refresh(pair["refreshToken"]).data
    (item,) = sessions(renewed["accessToken"]).data["items"]
    assert item["last_refreshed_at"] > item["created_at"] and item["current"]


def test_ending_one_session_stops_its_tokens_and_no_other(stack):
    address = unique("end-one")
    register(address)
    mine, other = signed_in(address), signed_in(address)
    answer = auth("EndSession", mine["accessToken"], path_params={"id": session_id(other)})
    assert answer.status == 200 and answer.data == {"id": session_id(other), "deleted": True}
    assert projects(other["accessToken"]).status == 401 and refresh(other["refreshToken"]).status == 401
    assert projects(mine["accessToken"]).status == 200
    assert [s["id"] for s in sessions(mine["accessToken"]).data["items"]] == [session_id(mine)]
    again = auth("EndSession", mine["accessToken"], path_params={"id": session_id(other)})
    assert again.status == 200                                          # ending an ended one is harmless


def test_another_users_session_is_404_and_stays_open(stack):
    ada, eve = unique("ada"), unique("eve")
    register(ada)
    register(eve)
    adas, eves = signed_in(ada), signed_in(eve)
    for unknown in (session_id(adas), ids.new_id("ses"), "not-a-session"):
        refused = auth("EndSession", eves["accessToken"], path_params={"id": unknown})
        assert assert_error(refused, 404, "RESOURCE_NOT_FOUND")["id"] == unknown
    assert projects(adas["accessToken"]).status == 200 and refresh(adas["refreshToken"]).status == 200
    assert [s["id"] for s in sessions(eves["accessToken"]).data["items"]] == [session_id(eves)]


def test_signing_out_everywhere_else_keeps_only_the_callers_session(stack):
    address = unique("everywhere")
    register(address)
    others = [signed_in(address) for _ in range(2)]
    mine = signed_in(address)
    answer = auth("EndOtherSessions", mine["accessToken"])
    assert answer.status == 200 and answer.data == {"sessionsEnded": 2, "currentSessionId": session_id(mine)}
    for pair in others:
        assert projects(pair["accessToken"]).status == 401 and refresh(pair["refreshToken"]).status == 401
    assert [s["id"] for s in sessions(mine["accessToken"]).data["items"]] == [session_id(mine)]
    assert refresh(mine["refreshToken"]).status == 200


def test_an_api_key_cannot_call_a_persons_own_routes(stack):
    _, key = stack.tenant_with_key()
    calls = [auth("ChangePassword", key, body={"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD}),
             auth("ListSessions", key), auth("EndOtherSessions", key),
             auth("EndSession", key, path_params={"id": ids.new_id("ses")}),
             auth("UpdateMe", key, body={"name": "A key"})]
    for refused in calls:
        assert assert_error(refused, 403, "FORBIDDEN")["reason"] == "user_required", refused


# ---- the name -------------------------------------------------------------------------------------------------

def test_the_name_changes_on_the_profile_and_in_the_member_lists(stack):
    address = unique("named")
    made = register(address, name="Ada")
    other = _member_tenant(stack, made["user"]["id"])
    token = signed_in(address)["accessToken"]
    answer = auth("UpdateMe", token, body={"name": "Ada King"})
    assert answer.status == 200, answer
    assert answer.data == {**auth("Me", token).data} and answer.data["user"]["name"] == "Ada King"
    owner_token = signed_in(address)["accessToken"]
    names = [m["name"] for m in call("members", "Members-ListMembers", token=owner_token).data["items"]]
    assert names == ["Ada King"]
    member = [i for i in scan(settings().users_table) if i["sk"] == f"MEMBER#{other}"]
    assert member[0]["name"] == "Ada King"
    bad = assert_error(auth("UpdateMe", token, body={"name": "Ada\u202eKing"}), 400, "VALIDATION_ERROR")
    assert [f["field"] for f in bad["fields"]] == ["name"]
    assert auth("Me", token).data["user"]["name"] == "Ada King"


# ---- the logs ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dashboard", [False, True])
def test_no_token_link_or_password_reaches_a_log_line(stack, monkeypatch, capsys, caplog, dashboard):
    import logging
    caplog.set_level(logging.DEBUG)
    follow_stdout(monkeypatch)
    if dashboard:
        monkeypatch.setenv("DASHBOARD_URL", "https://console.example.com")
        settings.cache_clear()
    capsys.readouterr()
    address = unique("logged")
    register(address)
    pair = signed_in(address)
    assert forgot(address).status == 202
    link = mailbox.latest_link(to=address)
    token = link.split("token=", 1)[1]
    assert reset(token, "first reset password").status == 200
    pair = signed_in(address, "first reset password")
    assert change(pair["accessToken"], current="a wrong guess at it", new="never set password").status == 403
    assert change(pair["accessToken"], current="first reset password", new="the changed password").status == 200
    out = capsys.readouterr()
    logged = out.out + out.err + caplog.text
    if dashboard:
        monkeypatch.delenv("DASHBOARD_URL")
        settings.cache_clear()
    assert "password reset e-mail sent" in logged and "password changed" in logged
    for secret in (token.split(".")[1], link, "first reset password", "a wrong guess at it", "the changed password",
                   "never set password"):
        assert secret not in logged, secret
