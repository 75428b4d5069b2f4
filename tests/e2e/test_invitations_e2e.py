"""Invitations on the local stack over real HTTP: an owner invites an admin (a new user) and a
member (an existing user); each reads the e-mail from the local mailbox (its page, its command and
the tests' helper), and accepts through the API the accept page calls. The links work once."""

from __future__ import annotations

import subprocess
import sys

import httpx

from devstack.template import ROOT
from svc_core.platform import ids
from tests.support import mailbox

PASSWORD = "a long enough e2e password"


def unique(name: str) -> str:
    return f"{name}-{ids.new_ulid().lower()}@example.com"


def registered_and_signed_in(http: httpx.Client, email: str, name: str) -> dict:
    assert http.post("/api/v1/auth/register", json={"email": email, "password": PASSWORD, "name": name}).status_code == 201
    answer = http.post("/api/v1/auth/login", json={"email": email, "password": PASSWORD})
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def test_invite_read_the_mailbox_and_accept_as_a_new_and_as_an_existing_user(local_stack):
    http = httpx.Client(base_url=local_stack.base_url, timeout=30)
    owner = registered_and_signed_in(http, unique("owner"), "Owen Owner")
    as_owner = {"Authorization": f"Bearer {owner['accessToken']}"}
    existing = unique("existing")
    registered_and_signed_in(http, existing, "Erin Existing")
    newcomer = unique("newcomer")

    for address, role in ((newcomer, "admin"), (existing, "member")):
        made = http.post("/api/v1/invitations", json={"email": address, "role": role}, headers=as_owner)
        assert made.status_code == 201, made.text
        assert "#token=" not in made.text

    # The page: one message for the address, its link shown.
    page = http.get("/_local/mailbox", params={"to": newcomer})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    link = mailbox.latest_link(to=newcomer)
    assert link.startswith(local_stack.base_url + "/api/v1/invitations/accept-page#token=")
    assert link.replace("&", "&amp;") in page.text and existing not in page.text
    # The command: the same link.
    printed = subprocess.run([sys.executable, "-m", "devstack.mailbox", "--url", local_stack.base_url, "--to",
                              existing, "--last", "--links"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.strip() == mailbox.latest_link(to=existing)

    # The accept page the link opens, and the calls it makes.
    assert http.get(link.split("#")[0]).headers["content-type"].startswith("text/html")
    new_token = mailbox.token_of(link)
    shown = http.get("/api/v1/invitations/lookup", params={"token": new_token}).json()["data"]
    assert shown["accountExists"] is False and shown["role"] == "admin"
    joined = http.post("/api/v1/invitations/accept", json={"token": new_token, "name": "Nia New", "password": PASSWORD})
    assert joined.status_code == 200, joined.text
    assert joined.json()["data"]["tenant"] == {**joined.json()["data"]["tenant"], "id": owner["tenant"]["id"],
                                               "role": "admin"}
    member_token = mailbox.token_of(printed.stdout.strip())
    assert http.get("/api/v1/invitations/lookup", params={"token": member_token}).json()["data"]["accountExists"]
    member = http.post("/api/v1/invitations/accept", json={"token": member_token, "password": PASSWORD})
    assert member.status_code == 200, member.text
    assert member.json()["data"]["tenant"]["role"] == "member"

    # The new admin signs in with the password chosen at the invitation, into the tenant.
    again = http.post("/api/v1/auth/login", json={"email": newcomer, "password": PASSWORD})
    assert again.status_code == 200 and again.json()["data"]["tenant"]["id"] == owner["tenant"]["id"]
    # Used once.
    reused = http.post("/api/v1/invitations/accept", json={"token": new_token, "name": "Nia", "password": PASSWORD})
    assert reused.status_code == 409
    listed = http.get("/api/v1/invitations", headers=as_owner).json()["data"]["items"]
    assert sorted(i["status"] for i in listed) == ["accepted", "accepted"]


def test_links_used_twice_for_another_address_expired_revoked_or_replaced_are_refused(local_stack, monkeypatch):
    from tests.support.auth_helpers import Clock
    http = httpx.Client(base_url=local_stack.base_url, timeout=30)
    owner = registered_and_signed_in(http, unique("owner"), "Owen Owner")
    as_owner = {"Authorization": f"Bearer {owner['accessToken']}"}
    stranger = registered_and_signed_in(http, unique("stranger"), "Stan Stranger")

    def invite(address: str) -> tuple[str, str]:
        made = http.post("/api/v1/invitations", json={"email": address, "role": "member"}, headers=as_owner)
        assert made.status_code == 201, made.text
        return made.json()["data"]["id"], mailbox.token_of(mailbox.latest_link(to=address))

    def accept(token: str, **extra) -> httpx.Response:
        headers = extra.pop("headers", {})
        return http.post("/api/v1/invitations/accept", json={"token": token, **extra}, headers=headers)

    # Another address: a signed-in user whose account is not the invited one.
    address = unique("invitee")
    invitation_id, token = invite(address)
    other = accept(token, headers={"Authorization": f"Bearer {stranger['accessToken']}"})
    assert other.status_code == 403 and other.json()["error"]["details"]["reason"] == "email_mismatch"
    # Replaced: a resend kills the old link.
    assert http.post(f"/api/v1/invitations/{invitation_id}/resend", headers=as_owner).status_code == 200
    assert accept(token, name="Old Link", password=PASSWORD).status_code == 404
    token = mailbox.token_of(mailbox.latest_link(to=address))
    # Revoked: the live link dies too.
    assert http.delete(f"/api/v1/invitations/{invitation_id}", headers=as_owner).status_code == 200
    revoked = accept(token, name="Revoked", password=PASSWORD)
    assert revoked.status_code == 409 and revoked.json()["error"]["details"]["reason"] == "revoked"
    # Expired: 7 days on (the functions run in this process, on its clock).
    _, late_token = invite(unique("late"))
    Clock(monkeypatch).travel(7 * 86400)
    expired = accept(late_token, name="Late", password=PASSWORD)
    assert expired.status_code == 409 and expired.json()["error"]["details"]["reason"] == "expired"
    # Used twice.
    monkeypatch.undo()
    _, once = invite(unique("once"))
    assert accept(once, name="Once", password=PASSWORD).status_code == 200
    assert accept(once, name="Twice", password=PASSWORD).status_code == 409
