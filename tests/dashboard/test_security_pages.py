"""Signing in and out, Settings → API keys and Settings → Network security, in Chromium."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import expect

from tests.support.dashboard import check_page, open_dialog, row_action, toast


def test_sign_in_shows_errors_then_signs_in_survives_a_reload_and_signs_out(page, dashboard):
    account = dashboard.new_account()
    page.goto(dashboard.url)
    page.get_by_label("E-mail").fill(account.email)
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Sign in").click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("UNAUTHORIZED")
    expect(alert).to_contain_text(re.compile(r"Request id: \S+"))
    check_page(page, "sign-in", every_impact=True)

    page.get_by_label("Password").fill(account.password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("main")).to_contain_text(account.email)
    check_page(page, "overview")
    # the access token lives in memory only; the refresh cookie (HttpOnly, same site) signs the page in again
    page.reload()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    stored = page.evaluate("JSON.stringify({...localStorage}) + JSON.stringify({...sessionStorage}) + document.cookie")
    assert stored == "{}{}"

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()
    page.reload()   # the server's session ended too: the cookie no longer signs in
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()
    assert page.problems == []


def test_create_a_key_copy_it_use_it_rotate_and_revoke(page, dashboard):
    account = dashboard.new_account()
    dashboard.sign_in(page, account, "/settings/api-keys")
    expect(page.get_by_role("heading", name="API keys")).to_be_visible()
    expect(page.get_by_text("No keys yet")).to_be_visible()

    form = open_dialog(page, "Create key", "Create a key")
    form.get_by_label("Name").fill("ci deploys")
    form.get_by_label("Type").select_option("ci")
    form.get_by_label("Environment").select_option("Staging")
    form.get_by_label("projects:read").check()
    form.get_by_role("button", name="Create key").click()

    reveal = form   # the value is shown in the dialog, once
    value = reveal.get_by_label("The value of ci deploys").inner_text()
    assert value.startswith("svc_ci_"), value
    reveal.get_by_role("button", name="Copy").click()
    expect(reveal.get_by_text("Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == value
    check_page(page, "api-keys", every_impact=True)

    # the value works, with the scopes chosen and no other
    with httpx.Client(base_url=dashboard.api, headers={"Authorization": f"Bearer {value}"}) as api:
        assert api.get("/projects").status_code == 200
        assert api.post("/projects", json={"name": "x"}).status_code == 403
        listed = api.get("/auth/me").json()["data"]
    assert listed["scopes"] == ["projects:read"]

    reveal.get_by_role("button", name="Done").click()
    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(page.get_by_role("button", name="Create key")).to_be_focused()
    expect(page.get_by_text(value)).to_have_count(0)   # shown once
    row = page.get_by_role("row", name=re.compile("ci deploys"))
    expect(row).to_contain_text("Staging")
    expect(row).to_contain_text("active")
    # made by the owner: named, the user id on hover
    expect(row.get_by_title(account.user_id, exact=True)).to_have_text("Owner")

    # rotate with no overlap: a new value, shown once; the old one stops at once
    row_action(page, row, "Rotate…")
    rotation = page.get_by_role("dialog", name="Rotate ci deploys")
    rotation.get_by_label("Overlap").select_option("0")
    rotation.get_by_role("button", name="Rotate").click()
    rotated = rotation.get_by_label("The new value of ci deploys").inner_text()
    expect(rotation).to_contain_text("The earlier value no longer works.")
    rotation.get_by_role("button", name="Done").click()
    assert rotated.startswith("svc_ci_") and rotated != value
    with httpx.Client(base_url=dashboard.api) as api:
        assert api.get("/projects", headers={"Authorization": f"Bearer {value}"}).status_code == 401
        assert api.get("/projects", headers={"Authorization": f"Bearer {rotated}"}).status_code == 200

    # revoking asks first; cancel changes nothing
    row_action(page, row, "Revoke…")
    page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
    expect(row).to_contain_text("active")
    row_action(page, row, "Revoke…")
    page.get_by_role("dialog").get_by_role("button", name="Revoke").click()
    expect(page.get_by_role("row", name=re.compile("ci deploys"))).to_contain_text("revoked")
    with httpx.Client(base_url=dashboard.api) as api:
        assert api.get("/projects", headers={"Authorization": f"Bearer {rotated}"}).status_code == 401
    assert page.problems == []


def test_a_scope_the_user_lacks_is_refused_with_its_message(page, dashboard):
    """An error from the service is shown with its code, message and request id."""
    account = dashboard.new_account()
    dashboard.sign_in(page, account, "/settings/api-keys")
    form = open_dialog(page, "Create key", "Create a key")
    form.get_by_label("Name").fill(" ")   # blank: the service refuses it, and says why
    form.get_by_role("button", name="Create key").click()
    alert = form.get_by_role("alert")
    expect(alert).to_contain_text("VALIDATION_ERROR")
    expect(alert).to_contain_text(re.compile(r"Request id: \S+"))


def test_the_allowlist_warns_before_shutting_out_a_key_in_use_then_saves(page, dashboard):
    from svc_core.data import tenants_table
    from svc_core.domain.api_keys import issue_key

    def stored() -> list[str]:
        return (tenants_table.get_consistent(account.tenant_id).get("settings") or {}).get("ipAllowlist", [])

    account = dashboard.new_account(plan="starter")
    key = issue_key(tenant_id=account.tenant_id, created_by=account.user_id, name="backend", key_type="sdk",
                    environment="Production", scopes=["projects:read"])
    with httpx.Client(base_url=dashboard.api) as api:   # its last use: from 127.0.0.1
        assert api.get("/projects", headers={"Authorization": f"Bearer {key['key']}"}).status_code == 200
    dashboard.sign_in(page, account, "/settings/network")
    editor = page.get_by_label("Addresses and ranges (CIDR), one a line; empty: every address")

    editor.fill("203.0.113.0/24\n10.1.2.3/33")
    expect(page.get_by_text("Not an address or range: 10.1.2.3/33")).to_be_visible()
    expect(page.get_by_role("button", name="Save allowlist")).to_be_disabled()

    editor.fill("203.0.113.0/24")
    page.get_by_role("button", name="Save allowlist").click()
    warning = page.get_by_role("alert")
    expect(warning).to_contain_text("would shut out a key")
    expect(warning).to_contain_text("backend")
    expect(warning).to_contain_text("127.0.0.1")
    check_page(page, "network-security", every_impact=True)
    warning.get_by_role("button", name="Keep editing").click()
    assert stored() == []   # nothing saved yet

    editor.fill("203.0.113.0/24\n127.0.0.1")
    page.get_by_role("button", name="Save allowlist").click()
    expect(toast(page, "The allowlist is saved.")).to_be_visible()
    assert stored() == ["203.0.113.0/24", "127.0.0.1/32"]
    expect(page.get_by_text("Currently: 203.0.113.0/24, 127.0.0.1/32")).to_be_visible()
    with httpx.Client(base_url=dashboard.api) as api:   # the key still works from where it is used
        assert api.get("/projects", headers={"Authorization": f"Bearer {key['key']}"}).status_code == 200
    assert page.problems == []


def test_a_plan_without_the_allowlist_says_which_plan_has_it(page, dashboard):
    account = dashboard.new_account(plan="free")
    dashboard.sign_in(page, account, "/settings/network")
    expect(page.get_by_role("note")).to_contain_text("starter plan")
    expect(page.get_by_role("button", name="Save allowlist")).to_be_disabled()
