"""Settings → Members (members and invitations), accepting an invitation in the dashboard, and the
command-line login's approval route, in Chromium against the local stack."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import expect

from tests.support import mailbox
from tests.support.browser import watched
from tests.support.dashboard import LAPTOP, check_page, open_dialog, row_action, toast


def api_as(dashboard, account, tenant_id: str | None = None) -> httpx.Client:
    """An API client signed in as the account (its own sign-in, not the page's)."""
    body = {"email": account.email, "password": account.password, **({"tenantId": tenant_id} if tenant_id else {})}
    pair = httpx.post(f"{dashboard.api}/auth/login", json=body).json()["data"]
    return httpx.Client(base_url=dashboard.api, headers={"Authorization": f"Bearer {pair['accessToken']}"})


def members_of(api: httpx.Client) -> dict[str, str]:
    return {m["userId"]: m["role"] for m in api.get("/members").json()["data"]["items"]}


def member_row(page, email: str):
    """The row of the members table (not the invitations') of the person with that address."""
    return page.get_by_role("region", name="Members", exact=True).get_by_role("row").filter(has_text=email)


def invite(page, email: str, role: str) -> None:
    """Invite someone through the heading's button and its dialog, which closes once it is sent."""
    dialog = open_dialog(page, "Invite someone", "Invite someone")
    dialog.get_by_label("E-mail").fill(email)
    dialog.get_by_label("Role").select_option(role)
    dialog.get_by_role("button", name="Invite", exact=True).click()
    expect(toast(page, f"Invitation sent to {email}.")).to_be_visible()
    expect(dialog).to_be_hidden()


def menu_items(page, row) -> list[str]:
    """What the row's actions menu offers (opened, read, closed again)."""
    row.get_by_role("button", name=re.compile(r"^Actions for ")).click()
    page.get_by_role("menuitem").first.wait_for()
    items = [text.strip() for text in page.get_by_role("menuitem").all_inner_texts()]
    page.keyboard.press("Escape")
    return items


@pytest.fixture
def second_page(browser):
    """Another person's browser: a context of its own (no cookie of the first)."""
    context = browser.new_context(viewport=LAPTOP)
    yield watched(context.new_page())
    context.close()


def test_invite_accept_in_the_dashboard_change_the_role_remove_and_revoke(page, second_page, dashboard):
    owner = dashboard.new_account(name="Acme")
    invitee = dashboard.new_account(name="Invitee's own")
    dashboard.sign_in(page, owner, "/settings/members")
    expect(page.get_by_role("heading", name="Members", level=1)).to_be_visible()
    mine = member_row(page, owner.email)
    expect(mine).to_contain_text("owner")
    expect(mine).to_contain_text("(you)")
    expect(page.get_by_text("No invitations yet")).to_be_visible()

    invite(page, invitee.email, "member")
    pending = page.get_by_role("row").filter(has_text=invitee.email)
    expect(pending).to_contain_text("pending")
    check_page(page, "members", every_impact=True)

    token = mailbox.token_of(mailbox.latest_link(to=invitee.email))
    route = f"/invitations/accept?token={quote(token, safe='')}"
    # the link joins the invited address only: another signed-in account is refused, and told why
    page.goto(f"{dashboard.url}/#{route}")
    page.get_by_role("button", name="Accept and open Acme").click()
    expect(page.get_by_role("alert")).to_contain_text("FORBIDDEN")
    page.goto(f"{dashboard.url}/#/settings/members")
    expect(page.get_by_role("row").filter(has_text=invitee.email)).to_contain_text("pending")

    # the invitee opens the dashboard's route for the e-mailed link's token, signs in, accepts
    dashboard.sign_in(second_page, invitee, route)
    offer = second_page.get_by_role("region", name="Join Acme")
    expect(offer).to_contain_text("member")
    expect(offer).to_contain_text(re.compile(r"\*\*\*@example\.com"))   # the address masked
    check_page(second_page, "invitation")
    offer.get_by_role("button", name="Accept and open Acme").click()
    # switched to the tenant joined: its members, the invitee among them
    expect(second_page.get_by_role("heading", name="Members", level=1)).to_be_visible()
    expect(second_page.get_by_label("Tenant", exact=True)).to_have_value(owner.tenant_id)
    expect(second_page.get_by_role("row").filter(has_text=invitee.email).filter(has_text="(you)")).to_contain_text("member")
    with api_as(dashboard, owner) as api:
        assert members_of(api)[invitee.user_id] == "member"

    page.reload()
    joined = member_row(page, invitee.email)
    expect(joined).to_contain_text("member")
    assert menu_items(page, joined) == ["Change role…", "Make owner…", "Remove…"]
    assert menu_items(page, mine) == ["Leave tenant…"]
    expect(page.get_by_role("row").filter(has_text=invitee.email).filter(has_text="accepted")).to_be_visible()

    # change their role, in the menu's small dialog
    row_action(page, joined, "Change role…")
    dialog = page.get_by_role("dialog", name="Change the role of Owner")
    expect(dialog.get_by_label("Role")).to_be_focused()
    expect(dialog.get_by_role("button", name="Change role")).to_be_disabled()   # the same role changes nothing
    check_page(page, "members-change-role", every_impact=True)
    page.keyboard.press("Escape")   # closed, the focus is back on the row's button
    expect(dialog).to_be_hidden()
    expect(joined.get_by_role("button", name=re.compile(r"^Actions for "))).to_be_focused()
    row_action(page, joined, "Change role…")
    dialog.get_by_label("Role").select_option("admin")
    dialog.get_by_role("button", name="Change role").click()
    expect(toast(page, "Owner is now an admin.")).to_be_visible()
    expect(dialog).to_be_hidden()
    expect(joined.locator(".badge")).to_have_text("admin")
    with api_as(dashboard, owner) as api:
        assert members_of(api)[invitee.user_id] == "admin"

    # remove them: asked first; cancel keeps them
    row_action(page, joined, "Remove…")
    page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
    with api_as(dashboard, owner) as api:
        assert invitee.user_id in members_of(api)
    row_action(page, joined, "Remove…")
    page.get_by_role("dialog").get_by_role("button", name="Remove").click()
    expect(toast(page, "Owner was removed from the tenant.")).to_be_visible()
    expect(joined).to_have_count(0)
    with api_as(dashboard, owner) as api:
        assert invitee.user_id not in members_of(api)

    # a second invitation: resent (a new link, the old one dead), then revoked (asked first)
    other = f"later-{secrets.token_hex(4)}@example.com"
    invite(page, other, "admin")
    first_link = mailbox.latest_link(to=other)
    row = page.get_by_role("row").filter(has_text=other)
    expect(row).to_contain_text("pending")
    assert menu_items(page, row) == ["Resend", "Revoke…"]
    row_action(page, row, "Resend")
    expect(toast(page, f"Invitation to {other} sent again")).to_be_visible()
    assert len(mailbox.messages(to=other)) == 2 and mailbox.latest_link(to=other) != first_link
    row_action(page, row, "Revoke…")
    page.get_by_role("dialog").get_by_role("button", name="Revoke").click()
    expect(toast(page, f"Invitation to {other} revoked.")).to_be_visible()
    expect(row).to_contain_text("revoked")
    expect(row.get_by_role("button", name=re.compile(r"^Actions for "))).to_have_count(0)   # nothing left to do
    with api_as(dashboard, owner) as api:
        stored = {i["email"]: i["status"] for i in api.get("/invitations").json()["data"]["items"]}
        lookup = api.get("/invitations/lookup", params={"token": mailbox.token_of(mailbox.latest_link(to=other))})
    assert stored == {invitee.email: "accepted", other: "revoked"}
    assert lookup.status_code == 409 and lookup.json()["error"]["details"]["reason"] == "revoked"

    # the last owner cannot leave: the service's refusal, as it words it, with its request id
    row_action(page, mine, "Leave tenant…")
    page.get_by_role("dialog").get_by_role("button", name="Leave tenant").click()
    alert = mine.get_by_role("alert")
    expect(alert).to_contain_text("CONFLICT")
    expect(alert).to_contain_text(re.compile(r"Request id: \S+"))
    with api_as(dashboard, owner) as api:
        assert members_of(api)[owner.user_id] == "owner"
    assert page.problems == []
    assert second_page.problems == []


def join(dashboard, owner, person, role: str) -> None:
    """The person joins the owner's tenant through the API: invited, the e-mail's token accepted."""
    with api_as(dashboard, owner) as api:
        assert api.post("/invitations", json={"email": person.email, "role": role}).status_code == 201
    token = mailbox.token_of(mailbox.latest_link(to=person.email))
    with api_as(dashboard, person) as api:
        assert api.post("/invitations/accept", json={"token": token}).status_code == 200


def test_transfer_the_ownership_and_leave_end_the_sign_ins_they_should(page, second_page, dashboard):
    owner = dashboard.new_account(name="Acme")
    heir = dashboard.new_account(name="Heir's own")
    leaver = dashboard.new_account(name="Leaver's own")
    join(dashboard, owner, heir, "admin")
    join(dashboard, owner, leaver, "member")

    # a member sees the people but may change nothing of others; leaving asks first, then signs out
    dashboard.sign_in(second_page, leaver, "/settings/members")
    second_page.get_by_label("Tenant", exact=True).select_option(owner.tenant_id)
    owner_row = member_row(second_page, owner.email)
    expect(owner_row).to_be_visible()
    expect(owner_row.get_by_role("button", name=re.compile(r"^Actions for "))).to_have_count(0)
    expect(member_row(second_page, heir.email).get_by_role("button", name=re.compile(r"^Actions for "))).to_have_count(0)
    expect(second_page.get_by_role("button", name="Invite someone")).to_have_count(0)
    own_row = member_row(second_page, leaver.email)
    assert menu_items(second_page, own_row) == ["Leave tenant…"]
    row_action(second_page, own_row, "Leave tenant…")
    second_page.get_by_role("dialog").get_by_role("button", name="Leave tenant").click()
    expect(second_page.get_by_role("button", name="Sign in")).to_be_visible()
    with api_as(dashboard, owner) as api:
        assert leaver.user_id not in members_of(api)

    # the owner hands the ownership over (asked first): the heir is an owner, the caller an admin
    # whose sign-ins into the tenant end, so the page asks to sign in again
    dashboard.sign_in(page, owner, "/settings/members")
    heir_row = member_row(page, heir.email)
    expect(heir_row).to_contain_text("admin")
    row_action(page, heir_row, "Make owner…")
    page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
    row_action(page, heir_row, "Make owner…")
    page.get_by_role("dialog").get_by_role("button", name="Make owner").click()
    expect(page.get_by_text("Your session ended: sign in again.")).to_be_visible()
    with api_as(dashboard, heir, owner.tenant_id) as api:
        roles = members_of(api)
    assert roles[heir.user_id] == "owner" and roles[owner.user_id] == "admin"

    # signed in again, as an admin: no ownership to hand out, the owner's row out of reach
    dashboard.sign_in(page, owner, "/settings/members")
    expect(member_row(page, owner.email).filter(has_text="(you)")).to_contain_text("admin")
    expect(member_row(page, heir.email).get_by_role("button", name=re.compile(r"^Actions for "))).to_have_count(0)
    assert menu_items(page, member_row(page, owner.email)) == ["Leave tenant…"]
    expect(page.get_by_role("button", name="Invite someone")).to_be_visible()   # an admin invites still
    assert page.problems == []
    assert second_page.problems == []


def start_cli_login(dashboard) -> tuple[dict, str]:
    """POST /cli/auth/start as `svc login` does (PKCE S256); the login and its code verifier."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    started = httpx.post(f"{dashboard.api}/cli/auth/start", json={
        "state": secrets.token_hex(32), "codeChallenge": challenge, "codeChallengeMethod": "S256",
        "cliVersion": "1.4.2", "platform": "linux-x86_64"})
    assert started.status_code == 201, started.text
    return started.json()["data"], verifier


def test_a_device_login_is_approved_for_the_tenant_chosen_and_another_denied(page, dashboard):
    account = dashboard.new_account(name="Acme")
    with api_as(dashboard, account) as api:
        second = api.post("/tenants", json={"name": "Side project"}).json()["data"]
    dashboard.sign_in(page, account, "/")

    login, verifier = start_cli_login(dashboard)
    # the service points the terminal at the dashboard, the state in the fragment
    assert login["authUrl"].startswith(f"{dashboard.url}/#/device?loginId={login['loginId']}&state=")
    page.goto(login["authUrl"])
    expect(page.get_by_role("heading", name="Command-line login")).to_be_visible()
    expect(page.get_by_text(login["verificationCode"], exact=True)).to_be_visible()
    expect(page.get_by_text("1.4.2")).to_be_visible()
    expect(page.get_by_text("linux-x86_64")).to_be_visible()
    check_page(page, "device-login")

    # the key is for the tenant the switcher chooses
    page.get_by_label("Tenant", exact=True).select_option(second["id"])
    expect(page.get_by_role("main")).to_contain_text("Side project")
    page.get_by_role("button", name="Approve").click()
    expect(page.get_by_role("main").get_by_role("status")).to_contain_text("Approved")
    exchanged = httpx.post(f"{dashboard.api}/cli/auth/token", json={"loginId": login["loginId"], "codeVerifier": verifier})
    assert exchanged.status_code == 200, exchanged.text
    key = exchanged.json()["data"]
    assert key["token"].startswith("svc_cli_") and key["tenant"]["id"] == second["id"]
    assert key["user"]["email"] == account.email
    page.reload()
    expect(page.get_by_role("main").get_by_role("status")).to_contain_text("signed in")   # consumed: no buttons any more
    expect(page.get_by_role("button", name="Approve")).to_have_count(0)

    # a link whose state is not the login's: the service refuses, and the page says so
    tampered, _ = start_cli_login(dashboard)
    page.goto(re.sub(r"state=[0-9a-f]+", "state=" + "0" * 64, tampered["authUrl"]))
    expect(page.get_by_text(tampered["verificationCode"], exact=True)).to_be_visible()
    page.get_by_role("button", name="Approve").click()
    expect(page.get_by_role("alert")).to_contain_text("FORBIDDEN")
    status = httpx.get(f"{dashboard.api}/cli/auth/status", params={"loginId": tampered["loginId"]}).json()["data"]
    assert status["status"] == "pending"

    # another login denied (asked first): it reads expired, denied, and yields no key
    denied, denied_verifier = start_cli_login(dashboard)
    page.goto(denied["authUrl"])
    expect(page.get_by_text(denied["verificationCode"], exact=True)).to_be_visible()
    page.get_by_role("button", name="Deny").click()
    page.get_by_role("dialog").get_by_role("button", name="Deny").click()
    expect(page.get_by_role("main").get_by_role("status")).to_contain_text("Denied")
    status = httpx.get(f"{dashboard.api}/cli/auth/status", params={"loginId": denied["loginId"]}).json()["data"]
    assert status == {"loginId": denied["loginId"], "status": "expired", "reason": "denied"}
    refused = httpx.post(f"{dashboard.api}/cli/auth/token",
                         json={"loginId": denied["loginId"], "codeVerifier": denied_verifier})
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "LOGIN_SESSION_EXPIRED"
    assert page.problems == []
