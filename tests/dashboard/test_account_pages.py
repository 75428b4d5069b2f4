"""A person's own account in the dashboard, in Chromium against the local stack: a forgotten password
(the sign-in page's "Forgot password?", the link e-mailed to the local mailbox, its page setting a new
password and signing in on the Overview; the old password refused, the used link explained), and the
Profile (a new name in the header, a wrong current password said, two sessions of two browsers, the
other signed out "everywhere else" at its next request, the password changed). axe finds no violation
of any impact on the three pages."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import expect

from tests.support import mailbox
from tests.support.browser import watched
from tests.support.dashboard import LAPTOP, check_page, toast

NEW_PASSWORD = "a new passphrase of several words"


def login_status(dashboard, email: str, password: str) -> int:
    return httpx.post(f"{dashboard.api}/auth/login", json={"email": email, "password": password}, timeout=30).status_code


def test_a_forgotten_password_is_reset_by_the_e_mailed_link_and_signs_in(page, dashboard):
    account = dashboard.new_account()
    page.goto(f"{dashboard.url}/")
    page.get_by_label("E-mail").fill(account.email)
    page.get_by_role("link", name="Forgot password?").click()
    expect(page.get_by_role("heading", name="Forgot password", level=1)).to_be_visible()
    expect(page).to_have_url(re.compile(r"#/forgot-password$"))
    expect(page.get_by_label("E-mail")).to_have_value(account.email)   # kept from the sign-in page
    check_page(page, "forgot-password", every_impact=True)
    page.get_by_role("button", name="Send the link").click()
    sent = page.get_by_test_id("reset-link-sent")
    expect(sent).to_contain_text(f"If an account has the address {account.email}, we sent it a link that sets a new "
                                 "password; it works for 30 minutes.")
    expect(page.get_by_role("link", name="Back to sign in")).to_have_attribute("href", "#/")

    link = mailbox.latest_link(to=account.email)
    assert link.startswith(f"{dashboard.url}/#/reset-password?token=prt_"), link
    page.goto(link)
    expect(page.get_by_role("heading", name="Set a new password", level=1)).to_be_visible()
    field = page.get_by_label("New password", exact=True)
    expect(field).to_have_accessible_description(re.compile(r"^At least 12 characters \(at most 256\)"))
    check_page(page, "reset-password", every_impact=True)
    field.fill(NEW_PASSWORD)
    page.get_by_label("New password again").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Set the password").click()

    # signed in with the new password, on the Overview
    expect(page.get_by_role("heading", name="Overview", exact=True)).to_be_visible()
    expect(page).to_have_url(re.compile(r"#/$"))
    expect(page.get_by_role("main")).to_contain_text(f"Signed in as {account.email}")
    expect(toast(page, "Your password is set.")).to_be_visible()
    assert login_status(dashboard, account.email, account.password) == 401
    assert login_status(dashboard, account.email, NEW_PASSWORD) == 200

    # the link works once: opened again, it is explained, with a new one offered
    page.goto(link)
    page.get_by_label("New password", exact=True).fill("yet another passphrase here")
    page.get_by_label("New password again").fill("yet another passphrase here")
    page.get_by_role("button", name="Set the password").click()
    told = page.get_by_test_id("reset-link-problem")
    expect(told).to_contain_text("This link was already used: it sets a password once.")
    expect(told.get_by_role("link", name="Ask for a new link")).to_have_attribute("href", "#/forgot-password")
    assert login_status(dashboard, account.email, NEW_PASSWORD) == 200
    assert page.problems == []


def test_the_profile_renames_changes_the_password_and_signs_the_other_sessions_out(browser, page, dashboard):
    account = dashboard.new_account()
    dashboard.sign_in(page, account)
    header = page.get_by_role("banner")
    header.get_by_role("link", name="Owner").click()
    expect(page.get_by_role("heading", name="Profile", level=1)).to_be_visible()
    expect(page).to_have_url(re.compile(r"#/settings/profile$"))
    sessions = page.get_by_test_id("session-row")
    expect(sessions).to_have_count(1)
    check_page(page, "profile", every_impact=True)

    # the name, in the header once saved
    page.get_by_role("textbox", name="Name").fill("Ada Lovelace")
    page.get_by_role("button", name="Save name").click()
    expect(toast(page, "Your name is now Ada Lovelace.")).to_be_visible()
    expect(header.get_by_role("link", name="Ada Lovelace")).to_be_visible()

    # a wrong current password is said by its field, and nothing changes
    page.get_by_label("Current password").fill("not the password at all")
    page.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    page.get_by_label("New password again").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_label("Current password")).to_have_accessible_description(
        re.compile(r"^The current password is not right\."))
    assert login_status(dashboard, account.email, account.password) == 200

    # a second browser signed in: two sessions, this one marked; "everywhere else" ends the other
    other_context = browser.new_context(viewport=LAPTOP)
    try:
        other = watched(other_context.new_page())
        dashboard.sign_in(other, account)
        page.reload()
        expect(sessions).to_have_count(3)   # this page's, the other browser's, and the sign-in over HTTP above
        expect(sessions.first).to_contain_text("This session")
        expect(sessions.filter(has_text="This session")).to_have_count(1)
        page.get_by_role("button", name="Sign out everywhere else").click()
        expect(toast(page, "2 other sessions were signed out.")).to_be_visible()
        expect(sessions).to_have_count(1)
        expect(page.get_by_role("button", name="Sign out everywhere else")).to_be_disabled()
        # the other browser is signed out at its next request
        other.goto(f"{dashboard.url}/#/projects")
        expect(other.get_by_role("heading", name="Sign in")).to_be_visible()
        expect(other.get_by_text("Your session ended: sign in again.")).to_be_visible()
    finally:
        other_context.close()

    # the password changed with the right current one: the new one signs in, the old one does not
    page.get_by_label("Current password").fill(account.password)
    page.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    page.get_by_label("New password again").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Change password").click()
    expect(toast(page, "Your password is changed. No other session was open.")).to_be_visible()
    expect(page.get_by_role("button", name="Sign out", exact=True)).to_be_visible()
    assert login_status(dashboard, account.email, NEW_PASSWORD) == 200
    assert login_status(dashboard, account.email, account.password) == 401
    assert page.problems == []
