"""Creating an account in the dashboard, in Chromium against the local stack: a new person follows
"Create an account" from the sign-in page, signs up (the API's registration, then a sign-in) and lands
on an Overview with their balance, usage and first steps; an address that already has an account,
with another password, is told neutrally what to do and nothing is made; the API's field errors stand
next to their fields; axe finds no violation of any impact on either page."""

from __future__ import annotations

import re
import secrets

import httpx
from playwright.sync_api import expect

from tests.support.dashboard import check_page, credits_text

NEUTRAL = re.compile(r"^You could not be signed in with this address and password\.\s*If you already have an account "
                     r"with \S+@example\.com, sign in with its password, or reset the password if you have forgotten it\. "
                     r"If not, check the address and the password, "
                     r"and try again\.$")


def sign_in_over_http(dashboard, email: str, password: str) -> httpx.Response:
    return httpx.post(f"{dashboard.api}/auth/login", json={"email": email, "password": password}, timeout=30)


def open_sign_up(page, dashboard):
    """The sign-in page, then its "Create an account" link."""
    page.goto(f"{dashboard.url}/")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    page.get_by_role("link", name="Create an account").click()
    expect(page.get_by_role("heading", name="Create an account", level=1)).to_be_visible()
    expect(page).to_have_url(re.compile(r"#/sign-up$"))


def fill(page, name: str, email: str, password: str) -> None:
    page.get_by_label("Name").fill(name)
    page.get_by_label("E-mail").fill(email)
    page.get_by_label("Password").fill(password)


def test_a_new_person_signs_up_from_the_sign_in_page_and_lands_on_their_overview(page, dashboard):
    email = f"ada-{secrets.token_hex(4)}@example.com"
    password = "correct horse battery staple"
    open_sign_up(page, dashboard)
    assert page.title().startswith("Create an account")
    # the API's password rule, before it is broken, and how far the typed one is from it
    password_field = page.get_by_label("Password")
    expect(password_field).to_have_accessible_description(re.compile(r"^At least 12 characters \(at most 256\)"))
    password_field.fill("short")
    expect(password_field).to_have_accessible_description(re.compile(r"7 more characters to go\.$"))
    check_page(page, "sign-up", every_impact=True)

    # and back: "Sign in" keeps the address typed
    page.get_by_label("E-mail").fill(email)
    page.get_by_role("link", name="Sign in").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(page.get_by_label("E-mail")).to_have_value(email)
    check_page(page, "sign-in", every_impact=True)
    page.get_by_role("link", name="Create an account").click()

    fill(page, "Ada Lovelace", email, password)
    expect(password_field).to_have_accessible_description(re.compile(r"28 characters: long enough\.$"))
    page.get_by_role("button", name="Create account").click()

    # signed in, on the Overview of a workspace of their own
    expect(page.get_by_role("heading", name="Overview", exact=True)).to_be_visible()
    expect(page).to_have_url(re.compile(r"#/$"))
    main = page.get_by_role("main")
    expect(main).to_contain_text(f"Signed in as {email} to Ada Lovelace's workspace (owner, free plan).")
    signed = sign_in_over_http(dashboard, email, password)
    assert signed.status_code == 200, signed.text
    token = signed.json()["data"]["accessToken"]
    with httpx.Client(base_url=dashboard.api, headers={"Authorization": f"Bearer {token}"}, timeout=30) as api:
        balance = api.get("/billing/summary").json()["data"]["balance"]["microCredits"]
    money = page.get_by_role("region", name="Balance and usage", exact=True)
    expect(money).to_have_attribute("aria-busy", "false")
    expect(money.get_by_test_id("overview-balance")).to_have_text(credits_text(balance))
    expect(money).to_contain_text("used on the free plan")
    expect(money.get_by_role("img")).to_have_attribute("aria-label", re.compile(r"^Usage by day from .*: none\.$"))
    steps = page.get_by_role("region", name="First steps", exact=True)
    for step in ("Create an API key", "Call the API with it", "Create a project", "Register a webhook"):
        expect(steps.get_by_role("heading", name=re.compile(step))).to_contain_text("To do")

    # signed in, the sign-up page's address opens the Overview
    page.goto(f"{dashboard.url}/#/sign-up")
    expect(page).to_have_url(re.compile(r"#/$"))
    expect(page.get_by_role("heading", name="Overview", exact=True)).to_be_visible()
    assert page.problems == []


def test_an_address_that_has_an_account_with_another_password_is_told_what_to_do_without_being_told_which(page, dashboard):
    account = dashboard.new_account(name="Acme")
    open_sign_up(page, dashboard)
    fill(page, "Someone", account.email, "another passphrase entirely")
    page.get_by_role("button", name="Create account").click()
    told = page.get_by_test_id("may-have-account")
    expect(told).to_have_attribute("role", "alert")
    expect(told).to_have_text(NEUTRAL)
    # no word of an address being registered, taken or known
    assert not re.search(r"registered|taken|exists|in use|already registered", told.inner_text(), re.I)
    expect(page.get_by_role("button", name="Sign out")).to_have_count(0)
    check_page(page, "sign-up-may-have-account", every_impact=True)

    # nothing was made: the other password signs in nowhere, the account's own still does, to its one tenant
    assert sign_in_over_http(dashboard, account.email, "another passphrase entirely").status_code == 401
    own = sign_in_over_http(dashboard, account.email, account.password)
    assert own.status_code == 200, own.text
    me = httpx.get(f"{dashboard.api}/auth/me", headers={"Authorization": f"Bearer {own.json()['data']['accessToken']}"})
    assert [t["id"] for t in me.json()["data"]["tenants"]] == [account.tenant_id]

    expect(told.get_by_role("link", name="reset the password")).to_have_attribute("href", "#/forgot-password")
    # what it says to do: sign in (the address kept), with the account's own password
    told.get_by_role("link", name="sign in").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(page.get_by_label("E-mail")).to_have_value(account.email)
    page.get_by_label("Password").fill(account.password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("main")).to_contain_text(f"Signed in as {account.email} to Acme")
    assert page.problems == []


def test_signing_up_with_an_address_and_its_own_password_signs_in_to_that_account(page, dashboard):
    account = dashboard.new_account(name="Acme")
    open_sign_up(page, dashboard)
    fill(page, "Owner again", account.email, account.password)
    page.get_by_role("button", name="Create account").click()
    expect(page.get_by_role("main")).to_contain_text(f"Signed in as {account.email} to Acme (owner")
    assert page.problems == []


def test_the_api_s_field_errors_stand_next_to_their_fields(page, dashboard):
    open_sign_up(page, dashboard)
    email = f"blank-{secrets.token_hex(4)}@example.com"
    fill(page, "   ", email, "correct horse battery staple")   # the browser lets spaces through; the API trims them
    page.get_by_role("button", name="Create account").click()
    name = page.get_by_label("Name")
    expect(name).to_have_attribute("aria-invalid", "true")
    expect(name).to_have_accessible_description("Should have at least 1 character")
    expect(page.get_by_label("E-mail")).not_to_have_attribute("aria-invalid", "true")
    expect(page.get_by_role("alert")).to_have_count(0)   # every problem is by its field
    check_page(page, "sign-up-field-error", every_impact=True)
    # typing again clears the field's error
    name.fill("Grace")
    expect(name).not_to_have_attribute("aria-invalid", "true")
    assert sign_in_over_http(dashboard, email, "correct horse battery staple").status_code == 401   # nothing made
    assert page.problems == []
