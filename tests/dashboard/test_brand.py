"""The operator's brand as a person sees it: the local stack started as an operator would
(`python -m devstack --brand-name ... --brand-logo ... --brand-favicon ... --brand-color ...`, its own
process), then in Chromium the sign-in page and a signed-in page show the name, the logo and the accent
(yellow, made readable: #777700 with white text), the tab's icon is the configured file and answers
200, and no file is missing; the invitation e-mail (the local mailbox) names the product, and its link's
page and the command-line approval page show the name, the logo and the accent; so do the password
reset's e-mail, the dashboard's reset page its link opens, and the API's own reset page."""

from __future__ import annotations

import re
import secrets
import time

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.browser import watched
from tests.support.dashboard import LAPTOP, serious_violations
from tests.support.stack_process import StackProcess

NAME = "Acme Cloud"
LOGO = "brand/favicon.svg"      # another shipped file than the default logo
FAVICON = "brand/logo.svg"      # and the other way round
ACCENT = "rgb(119, 119, 0)"     # #ffff00, darkened to 4.5:1 on white
ON_ACCENT = "rgb(255, 255, 255)"


@pytest.fixture(scope="module")
def branded(tmp_path_factory):
    stack = StackProcess(tmp_path_factory.mktemp("brand") / "dev-credentials.json", "--brand-name", NAME,
                         "--brand-logo", LOGO, "--brand-favicon", FAVICON, "--brand-color", "#FF0")
    try:
        credentials = stack.wait_ready()
        deadline = time.monotonic() + 10
        while not (printed := re.search(r"^dashboard: (http://127\.0\.0\.1:\d+)/", stack.output, re.M)):
            assert time.monotonic() < deadline, stack.output[-3000:]
            time.sleep(0.1)
        yield {"dashboard": printed.group(1), "api": credentials["baseUrl"], "credentials": credentials}
    finally:
        assert stack.stop() == 0, stack.output[-3000:]


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport=LAPTOP)
    opened = watched(context.new_page())
    opened.missing = []
    opened.on("response", lambda r: r.status >= 400 and "/auth/refresh" not in r.url and opened.missing.append(r.url))
    yield opened
    context.close()


def _logo_loaded(locator) -> bool:
    return locator.evaluate("(img) => img.complete && img.naturalWidth > 0")


def test_the_dashboard_shows_the_configured_name_logo_colour_and_icon(branded, page):
    dashboard = branded["dashboard"]
    page.goto(dashboard + "/")
    mark = page.locator("main.sign-in .brand")
    expect(mark).to_have_text(NAME)
    expect(page).to_have_title(f"Sign in · {NAME}")
    logo = mark.locator("img.logo")
    expect(logo).to_have_attribute("src", LOGO)
    assert _logo_loaded(logo)
    button = page.get_by_role("button", name="Sign in")
    assert button.evaluate("(b) => [getComputedStyle(b).backgroundColor, getComputedStyle(b).color]") == \
        [ACCENT, ON_ACCENT]
    icon = page.evaluate("""async () => {
        const link = document.querySelector('link[rel=icon]');
        const answer = await fetch(link.href);
        return {href: link.href, status: answer.status, body: await answer.text()};
    }""")
    assert icon["href"] == f"{dashboard}/{FAVICON}" and icon["status"] == 200
    assert icon["body"] == httpx.get(f"{dashboard}/{FAVICON}").text and "<svg" in icon["body"]
    assert serious_violations(page) == []   # the accent keeps its contrast for axe too

    user = branded["credentials"]["user"]
    page.get_by_label("E-mail").fill(user["email"])
    page.get_by_label("Password").fill(user["password"])
    button.click()
    header = page.locator("header.top .brand")
    expect(header).to_have_text(NAME)
    expect(page.locator("header.top")).not_to_contain_text("Dashboard")
    assert _logo_loaded(header.locator("img.logo"))
    expect(page).to_have_title(re.compile(rf"^Overview · .+ · {NAME}$"))
    current = page.get_by_role("navigation", name="Main").get_by_role("link", name="API keys")
    current.click()
    expect(current).to_have_attribute("aria-current", "page")
    assert current.evaluate("(a) => getComputedStyle(a).backgroundColor") == ACCENT
    expect(page).to_have_title(re.compile(rf"^API keys · .+ · {NAME}$"))
    assert serious_violations(page) == []
    assert page.missing == [] and page.problems == []


def test_the_invitation_email_and_the_apis_pages_show_the_configured_brand(branded, page):
    api, credentials = branded["api"], branded["credentials"]
    address = f"invitee-{secrets.token_hex(4)}@example.com"
    with httpx.Client(base_url=api, headers={"Authorization": f"Bearer {credentials['apiKey']}"}, timeout=30) as http:
        made = http.post("/api/v1/invitations", json={"email": address, "role": "member"})
        assert made.status_code == 201, made.text
        [mail] = http.get("/_local/mailbox.json", params={"to": address}).json()["messages"]
    assert mail["subject"].endswith(f" on {NAME}")
    assert f"on {NAME} as member" in mail["body"]
    [link] = [link for link in mail["links"] if "/invitations/accept-page#token=" in link]

    page.goto(link)
    expect(page.locator("main .brand")).to_have_text(NAME)
    expect(page).to_have_title(f"Accept an invitation · {NAME}")
    logo = page.locator("main .brand img")
    expect(logo).to_have_attribute("src", f"{branded['dashboard']}/{LOGO}")
    assert _logo_loaded(logo)   # the page's img-src allows the dashboard's origin
    expect(page.locator("#role")).to_have_text("member")   # the invitation was read
    assert page.get_by_role("button", name="Accept").evaluate(
        "(b) => [getComputedStyle(b).backgroundColor, getComputedStyle(b).color]") == [ACCENT, ON_ACCENT]
    assert page.evaluate("document.querySelector('link[rel=icon]').href") == f"{branded['dashboard']}/{FAVICON}"

    page.goto(f"{api}/api/v1/cli/auth/approve?loginId=none")
    expect(page.locator("main .brand")).to_have_text(NAME)
    expect(page).to_have_title(f"Approve a command-line login · {NAME}")
    assert page.problems == []


def test_the_password_reset_email_and_both_reset_pages_show_the_configured_brand(branded, page):
    api, credentials = branded["api"], branded["credentials"]
    email = credentials["user"]["email"]
    asked = httpx.post(f"{api}/api/v1/auth/password/forgot", json={"email": email}, timeout=30)
    assert asked.status_code == 202, asked.text
    [mail] = [m for m in httpx.get(f"{api}/_local/mailbox.json", params={"to": email}, timeout=30).json()["messages"]
              if m["subject"].startswith("Reset your")]
    assert mail["subject"] == f"Reset your {NAME} password"
    assert f"the {NAME} account of <strong>{email}</strong>" in mail["body"]
    # The stack has a dashboard: the link opens its reset page, in the brand like every page of it.
    [link] = [link for link in mail["links"] if "/#/reset-password?token=" in link]
    assert link.startswith(branded["dashboard"] + "/")
    page.goto(link)
    expect(page.get_by_role("heading", name="Set a new password")).to_be_visible()
    expect(page.locator("main .brand")).to_have_text(NAME)
    expect(page).to_have_title(re.compile(rf" · {NAME}$"))
    # The API's own page (a deployment without a dashboard) too.
    page.goto(f"{api}/api/v1/auth/password/reset-page")
    expect(page.locator("main .brand")).to_have_text(NAME)
    expect(page).to_have_title(f"Choose a new password · {NAME}")
    assert page.problems == []
