"""Settings → Billing, Observe → Usage and Settings → Regions and storage, in Chromium against the
local stack (test mode: a purchase is settled at once; the offline model meters chat; the stack's
moto server is the BYOS bucket, reached on loopback as AllowLoopbackEndpoints permits)."""

from __future__ import annotations

import json
import re
import secrets
import time
from datetime import UTC, datetime

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.dashboard import LAPTOP, PHONE, SCREENSHOTS, check_page, credits_text, exact_credits, short_id, toast


def api_key(account) -> str:
    """An API key of the account's tenant with every scope (issued in-process, as an operator does)."""
    from svc_core.auth.scopes import ALL_SCOPES
    from svc_core.domain.api_keys import issue_key
    return issue_key(tenant_id=account.tenant_id, created_by=account.user_id, name="test reads", key_type="sdk",
                     environment="Development", scopes=sorted(ALL_SCOPES))["key"]


def reader(dashboard, account) -> httpx.Client:
    return httpx.Client(base_url=dashboard.api, headers={"Authorization": f"Bearer {api_key(account)}"}, timeout=30)


def data(answer: httpx.Response) -> dict:
    assert answer.status_code in (200, 201, 202), answer.text
    return answer.json()["data"]


def chart_screenshots(page, name: str) -> None:
    """The chart alone at a laptop's and a phone's width (the page's screenshots hold the long table)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for label, size in (("laptop", LAPTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.locator(".chart-card").screenshot(path=str(SCREENSHOTS / f"{name}-chart-{label}.png"))
    page.set_viewport_size(LAPTOP)


# ---- billing -----------------------------------------------------------------------------------

def tab(page, name: str):
    """The billing page's tab of that name (role tab, in the tab list "Billing")."""
    return page.get_by_role("tablist", name="Billing").get_by_role("tab", name=name, exact=True)


def open_tab(page, name: str):
    """Select the billing page's tab and return its panel (labelled by the tab)."""
    tab(page, name).click()
    expect(tab(page, name)).to_have_attribute("aria-selected", "true")
    return page.get_by_role("tabpanel", name=name)


def expect_tab_stop(tabs, selected: int) -> None:
    """The selected tab alone is in the tab order (tabindex 0, the others -1)."""
    for i in range(tabs.count()):
        expect(tabs.nth(i)).to_have_attribute("tabindex", "0" if i == selected else "-1")


def test_buy_credits_redeem_a_gift_card_change_plan_and_read_the_ledger(page, dashboard):
    from svc_core.domain import billing
    account = dashboard.new_account()
    with reader(dashboard, account) as api:
        before = data(api.get("/billing/summary"))["balance"]["microCredits"]
        dashboard.sign_in(page, account, "/settings/billing")
        expect(page.get_by_role("heading", name="Billing", exact=True)).to_be_visible()
        expect(tab(page, "Overview")).to_have_attribute("aria-selected", "true")
        balance = page.get_by_test_id("balance")
        expect(balance).to_have_text(credits_text(before))
        expect(balance).to_have_attribute("title", f"{exact_credits(before)} credits")
        check_page(page, "billing-overview", every_impact=True)

        # an amount of its own: 12 credits; the result a toast, the balance read again
        buy = page.get_by_role("region", name="Buy credits")
        buy.get_by_label("Another amount").check()
        buy.get_by_label(re.compile(r"^Credits \(5 to")).fill("12")
        buy.get_by_role("button", name="Buy credits").click()
        expect(toast(page, "Bought 12 credits for $12.00 (succeeded).")).to_be_visible()
        expect(buy.locator(".success")).to_have_count(0)   # no line of its own any more
        expect(balance).to_have_text(credits_text(before + 12_000_000))
        after_purchase = data(api.get("/billing/summary"))["balance"]["microCredits"]
        assert after_purchase == before + 12_000_000
        (newest, *_) = data(api.get("/billing/ledger"))["items"]
        assert (newest["kind"], newest["amount"]) == ("purchase", 12_000_000)
        ledger = open_tab(page, "Ledger")
        first_row = ledger.get_by_role("row").nth(1)
        expect(first_row).to_contain_text("purchase")
        expect(first_row.locator("td[data-label='Credits']")).to_have_text("+12")
        # by whom: the member's name, the user id on hover
        expect(first_row.locator("td[data-label='By']")).to_have_text("Owner")
        expect(first_row.get_by_title(account.user_id)).to_have_text("Owner")
        expect(first_row.locator("th time")).to_have_text(re.compile(r"^(now|\d+ seconds? ago|1 minute ago)$"))
        expect(first_row.locator("th time")).to_have_attribute("title", re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$"))
        expect(first_row.locator("th time")).to_have_attribute("datetime", newest["created_at"])
        check_page(page, "billing-ledger", every_impact=True)

        # the purchase's invoice and its line
        (invoice, *_) = data(api.get("/billing/invoices"))["items"]
        invoices = open_tab(page, "Invoices")
        row = invoices.get_by_role("row", name=re.compile(re.escape(invoice["number"])))
        expect(row.locator("td[data-label='Amount']")).to_have_text("$12.00")
        row.get_by_role("button", name=re.compile("Show lines")).click()
        (line,) = invoice["lines"]
        assert (line["amount"], line["microCredits"]) == (1200, 12_000_000)
        expect(row.get_by_role("listitem")).to_have_text(
            f"{line['description']}: {line['quantity']} × ${line['unitAmount'] / 100:.2f} = $12.00 (12 credits, purchase)")
        check_page(page, "billing-invoices", every_impact=True)

        # a pack
        open_tab(page, "Overview")
        buy.get_by_label(re.compile(r"^10 credits")).check()
        buy.get_by_role("button", name="Buy credits").click()
        expect(balance).to_have_text(credits_text(before + 22_000_000))

        # a gift card, issued by the operator
        (card,) = billing.issue_gift_cards(5, 1, 30, "ops")
        gift = page.get_by_role("region", name="Redeem a gift card")
        gift.get_by_label("Gift card code").fill(card["code"].lower())
        gift.get_by_role("button", name="Redeem").click()
        expect(toast(page, f"Redeemed 5 credits; the balance is {credits_text(before + 27_000_000)}.")).to_be_visible()
        expect(balance).to_have_text(credits_text(before + 27_000_000))
        # redeemed once only: the service's refusal stays where the action was, with its request id
        gift.get_by_label("Gift card code").fill(card["code"])
        gift.get_by_role("button", name="Redeem").click()
        expect(gift.get_by_role("alert")).to_contain_text("CONFLICT")
        expect(gift.get_by_role("alert")).to_contain_text(re.compile(r"Request id: \S+"))
        kinds = [(e["kind"], e["amount"]) for e in data(api.get("/billing/ledger"))["items"][:3]]
        assert kinds == [("gift_card", 5_000_000), ("purchase", 10_000_000), ("purchase", 12_000_000)]

        # change plan to starter: asked first, then charged and credited as the period's usage
        plan_tab = open_tab(page, "Plan")
        expect(plan_tab.get_by_role("region", name="Your plan")).to_contain_text("free")
        check_page(page, "billing-plan", every_impact=True)
        plan = page.get_by_role("region", name="Change plan")
        plan.get_by_label("Plan", exact=True).select_option("starter")
        plan.get_by_role("button", name="Change plan").click()
        page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
        assert data(api.get("/billing/summary"))["plan"] == "free"
        plan.get_by_role("button", name="Change plan").click()
        page.get_by_role("dialog").get_by_role("button", name="Change plan").click()
        expect(toast(page, "The plan is now starter (active).")).to_be_visible()
        stored = data(api.get("/billing/summary"))
        assert (stored["plan"], stored["subscription"]["status"]) == ("starter", "active")
        expect(plan_tab.get_by_role("region", name="Your plan")).to_contain_text("starter")

        page.get_by_role("button", name="Open the billing portal").click()
        expect(page.get_by_role("status").filter(has_text="Test mode: the portal session")).to_contain_text(
            "https://billing.test-mode.invalid/portal/")

        open_tab(page, "Overview")
        expect(page.get_by_role("region", name="Balance")).to_contain_text("starter")
        expect(balance).to_have_text(credits_text(stored["balance"]["microCredits"]))
    assert page.problems == []


def test_the_billing_tabs_by_keyboard_and_by_address_each_read_when_shown(page, dashboard):
    account = dashboard.new_account()
    reads: list[str] = []
    page.on("request", lambda r: r.url.startswith(dashboard.api + "/billing/")
            and reads.append(r.url.removeprefix(dashboard.api).split("?")[0]))
    # a link to a tab opens it
    dashboard.sign_in(page, account, "/settings/billing?tab=invoices")
    tabs = page.get_by_role("tablist", name="Billing").get_by_role("tab")
    expect(tabs).to_have_text(["Overview", "Invoices", "Ledger", "Plan"])
    expect(tab(page, "Invoices")).to_have_attribute("aria-selected", "true")
    expect(page.get_by_role("tabpanel", name="Invoices").get_by_role("row")).to_have_count(0)   # none yet
    expect(page.get_by_role("tabpanel", name="Invoices")).to_contain_text("No invoices yet")
    assert "/billing/invoices" in reads and "/billing/ledger" not in reads and "/billing/summary" not in reads
    # one tab stop: only the selected tab is in the tab order
    expect_tab_stop(tabs, 1)

    # the arrow keys select as they move the focus, each tab at its own address
    tab(page, "Invoices").focus()
    page.keyboard.press("ArrowRight")
    expect(tab(page, "Ledger")).to_be_focused()
    expect(tab(page, "Ledger")).to_have_attribute("aria-selected", "true")
    expect(page).to_have_url(re.compile(r"#/settings/billing\?tab=ledger$"))
    expect(page.get_by_role("tabpanel", name="Ledger").get_by_role("row").nth(1)).to_contain_text("grant")
    assert "/billing/ledger" in reads
    page.keyboard.press("End")
    expect(tab(page, "Plan")).to_be_focused()
    expect(page.get_by_role("tabpanel", name="Plan").get_by_role("region", name="Change plan")).to_be_visible()
    page.keyboard.press("ArrowRight")   # wraps to the first
    expect(tab(page, "Overview")).to_be_focused()
    expect(page).to_have_url(re.compile(r"#/settings/billing$"))
    expect(page.get_by_test_id("balance")).to_be_visible()
    page.keyboard.press("ArrowLeft")    # and back to the last
    expect(tab(page, "Plan")).to_be_focused()
    page.keyboard.press("Home")
    expect(tab(page, "Overview")).to_be_focused()
    expect_tab_stop(tabs, 0)
    # Tab leaves the tab list for the panel; Shift+Tab comes back to the selected tab
    page.keyboard.press("Tab")
    expect(page.get_by_role("tabpanel", name="Overview")).to_be_focused()
    page.keyboard.press("Shift+Tab")
    expect(tab(page, "Overview")).to_be_focused()
    check_page(page, "billing-tabs", every_impact=True)

    # Back walks the tabs shown, and a reload keeps the tab of the address
    tab(page, "Ledger").click()
    expect(tab(page, "Ledger")).to_have_attribute("aria-selected", "true")
    page.go_back()
    expect(tab(page, "Overview")).to_have_attribute("aria-selected", "true")
    page.go_back()
    expect(tab(page, "Plan")).to_have_attribute("aria-selected", "true")
    page.reload()
    expect(page.get_by_role("tabpanel", name="Plan").get_by_role("region", name="Your plan")).to_contain_text("free")
    expect(tab(page, "Plan")).to_have_attribute("aria-selected", "true")
    expect(page.get_by_role("navigation", name="Main").get_by_role("link", name="Billing")).to_have_attribute(
        "aria-current", "page")
    # an address naming no tab of the page opens the first
    page.goto(f"{dashboard.url}/#/settings/billing?tab=nothing")
    expect(tab(page, "Overview")).to_have_attribute("aria-selected", "true")
    assert page.problems == []


def test_the_ledger_loads_older_entries_a_page_at_a_time(page, dashboard):
    from svc_core.domain import billing
    account = dashboard.new_account()
    with reader(dashboard, account) as api:
        for card in billing.issue_gift_cards(1, 21, 30, "ops"):
            data(api.post("/billing/gift-cards/redeem", json={"code": card["code"]}))
        everything = data(api.get("/billing/ledger", params={"limit": 100}))["items"]
    assert len(everything) == 22   # the welcome grant and 21 gift cards
    dashboard.sign_in(page, account, "/settings/billing?tab=ledger")
    ledger = page.get_by_role("tabpanel", name="Ledger")
    expect(ledger.get_by_role("row")).to_have_count(21)   # the header and a page of 20
    ledger.get_by_role("button", name="Load more").click()
    expect(ledger.get_by_role("row")).to_have_count(23)
    expect(ledger.get_by_role("row").nth(22)).to_contain_text("grant")
    expect(ledger.get_by_role("button", name="Load more")).to_have_count(0)
    reasons = ledger.locator("tbody td[data-label='Reason']")
    shown = [r.split("\n")[0] for r in reasons.all_inner_texts()]
    assert shown == [e["reason"] for e in everything]
    # each reference shortened, whole on hover
    references = reasons.locator("code")
    assert references.all_inner_texts() == [short_id(e["reference"]) for e in everything if e["reference"]]
    assert references.evaluate_all("nodes => nodes.map((n) => n.title)") == [e["reference"] for e in everything if e["reference"]]
    assert page.problems == []


# ---- usage -------------------------------------------------------------------------------------

def test_the_usage_chart_shows_today_s_chat_by_model_and_its_table_the_api_s_numbers(page, dashboard):
    account = dashboard.new_account()
    with reader(dashboard, account) as api:
        session_id = data(api.post("/chat/sessions", json={"title": "usage"}))["id"]
        data(api.post(f"/chat/sessions/{session_id}/messages", json={"content": "Count my tokens, please."}))
        deadline = time.monotonic() + 60   # a generous deadline for the worker, not a timing assertion
        while data(api.get(f"/chat/sessions/{session_id}"))["activeTurn"] is not None:
            assert time.monotonic() < deadline, "the turn did not end"
            time.sleep(0.1)
        today = datetime.now(UTC).date().isoformat()
        dashboard.sign_in(page, account, "/usage")
        series = data(api.get("/billing/usage"))
    if series["to"] != today:
        pytest.skip("the UTC day changed during the test")
    assert series["models"] == ["offline"]
    chart = page.get_by_role("img", name=re.compile("^Usage by day"))
    expect(chart).to_be_visible()
    expect(chart).to_have_attribute("aria-label", re.compile(rf"1 model: offline\).*the most on {today}"))
    expect(page.locator(f'svg g[data-date="{today}"] rect[data-model="offline"]')).to_have_count(1)
    expect(page.get_by_role("list", name="Models")).to_have_text("offline")
    chart_screenshots(page, "usage")
    page.get_by_role("button", name="Show as table").click()
    rows = page.get_by_role("table").get_by_role("row")
    expect(rows).to_have_count(1 + len(series["days"]))
    shown = [[c.strip() for c in row.split("\t")] for row in rows.all_inner_texts()[1:]]
    assert shown == [[d["date"], d["model"], f"{d['calls']:,}", f"{d['inputTokens']:,}", f"{d['outputTokens']:,}",
                      credits_text(d["microCredits"], unit=False)] for d in series["days"]]
    page.get_by_label("Tokens").check()
    expect(chart).to_have_attribute("aria-label", re.compile("in tokens"))
    check_page(page, "usage")

    # the billing page's period usage counts the same chat call
    with reader(dashboard, account) as api:
        chat = data(api.get("/billing/summary"))["usage"]["chat"]
    assert chat["calls"] == sum(d["calls"] for d in series["days"]) == 1
    page.get_by_role("link", name="Billing", exact=True).first.click()
    row = page.get_by_role("region", name="This period's usage").get_by_role("row", name=re.compile("^Chat"))
    cost = re.escape(credits_text(chat["microCredits"], unit=False))
    expect(row).to_have_text(re.compile(rf"Chat\s*1\s*{chat['inputTokens']:,}\s*{chat['outputTokens']:,}\s*{cost}"))
    assert page.problems == []


def test_the_usage_chart_fits_a_phone_and_passes_axe_with_many_models_and_days(page, dashboard):
    """The chart's layout and accessibility with a busy series (three models over 90 days), whatever
    the service has metered: the page's read of GET /billing/usage is answered by the test."""
    models = ["claude-haiku", "claude-sonnet", "offline"]
    days = [{"date": f"2026-{m:02d}-{d:02d}", "model": model, "calls": d, "inputTokens": 100 * d,
             "outputTokens": 10 * d, "microCredits": 1000 * d * (i + 1)}
            for m, last in ((9, 30), (10, 31), (11, 29)) for d in range(1, last + 1) for i, model in enumerate(models)]
    series = {"from": "2026-09-01", "to": "2026-11-29", "models": models, "days": days}
    page.route(re.compile(r".*/api/v1/billing/usage\?.*"), lambda route: route.fulfill(
        status=200, content_type="application/json",
        body=json.dumps({"data": series, "meta": {"request_id": "req_test"}})))
    account = dashboard.new_account()
    dashboard.sign_in(page, account, "/usage")
    expect(page.locator("svg rect")).to_have_count(len(days))
    expect(page.get_by_role("list", name="Models").get_by_role("listitem")).to_have_count(3)
    chart_screenshots(page, "usage-busy")
    page.get_by_role("button", name="Show as table").click()
    expect(page.get_by_role("table").get_by_role("row")).to_have_count(1 + len(days))
    check_page(page, "usage-busy")
    assert page.problems == []


# ---- regions and storage -----------------------------------------------------------------------

def test_preferences_are_stored_and_a_plan_s_refusal_is_shown(page, dashboard):
    account = dashboard.new_account(plan="starter")
    dashboard.sign_in(page, account, "/settings/regions")
    prefs = page.get_by_role("region", name="Regional preferences")
    expect(prefs).to_contain_text("The defaults: nothing set yet.")
    expect(prefs).to_contain_text("needs the growth plan")   # starter has no secondary region
    # starter: a secondary region is refused, with the plan it needs; nothing is stored
    prefs.get_by_label(re.compile("^Secondary region")).select_option("us-west-2")
    prefs.get_by_role("button", name="Save preferences").click()
    expect(prefs.get_by_role("alert")).to_contain_text("FORBIDDEN")
    expect(prefs).to_contain_text("secondary_region needs the growth plan; this tenant is on starter.")
    with reader(dashboard, account) as api:
        assert data(api.get(f"/regions/preferences/{account.tenant_id}"))["isDefault"] is True

        # what starter allows: data residency in the eu, gdpr, an eu primary region
        prefs.get_by_label(re.compile("^Secondary region")).select_option("")
        prefs.get_by_label("Primary region").select_option("eu-central-1")
        prefs.get_by_label(re.compile("Keep the data within one jurisdiction")).check()
        prefs.get_by_label("Residency jurisdiction").select_option("eu")
        prefs.get_by_label("Compliance level").fill("gdpr")
        prefs.get_by_role("button", name="Save preferences").click()
        expect(toast(page, "The preferences are saved.")).to_be_visible()
        stored = data(api.get(f"/regions/preferences/{account.tenant_id}"))
    assert {k: stored[k] for k in ("primaryRegion", "secondaryRegion", "dataResidencyRequired", "dataResidencyRegion",
                                   "complianceLevel", "isDefault")} == {
        "primaryRegion": "eu-central-1", "secondaryRegion": None, "dataResidencyRequired": True,
        "dataResidencyRegion": "eu", "complianceLevel": "gdpr", "isDefault": False}
    expect(prefs).to_contain_text("Last changed")

    # a primary region outside the stored residency and compliance: a conflict naming the stored values
    prefs.get_by_label("Primary region").select_option("us-east-1")
    prefs.get_by_role("button", name="Save preferences").click()
    expect(prefs.get_by_role("alert")).to_contain_text("CONFLICT")
    expect(prefs.locator(".warning")).to_contain_text('complianceLevel = "gdpr"')
    expect(prefs.locator(".warning")).to_contain_text('dataResidencyRegion = "eu"')
    with reader(dashboard, account) as api:
        assert data(api.get(f"/regions/preferences/{account.tenant_id}"))["primaryRegion"] == "eu-central-1"
    expect(page.get_by_role("region", name="Regions").get_by_role("row", name=re.compile("eu-central-1"))).to_contain_text("gdpr")
    check_page(page, "regions", every_impact=True)
    assert page.problems == []


def test_a_byos_bucket_is_saved_without_showing_its_secret_and_checked_and_a_wrong_bucket_fails_at_its_step(page, dashboard):
    from svc_core.adapters import aws
    bucket = f"byos-{secrets.token_hex(4)}"
    aws.client("s3").create_bucket(Bucket=bucket)
    endpoint = dashboard.stack.emulator_endpoint
    access_key, secret_key = f"AKIA{secrets.token_hex(8).upper()}", secrets.token_urlsafe(30)
    account = dashboard.new_account(plan="growth")
    dashboard.sign_in(page, account, "/settings/regions")
    storage = page.get_by_role("region", name="Storage")
    expect(storage).to_contain_text("Now: the platform's storage")
    storage.get_by_label(re.compile("A bucket of this tenant's own")).check()
    storage.get_by_label("Provider").select_option("s3")
    storage.get_by_label("Endpoint", exact=True).fill(endpoint)
    storage.get_by_label("Bucket", exact=True).fill(bucket)
    storage.get_by_label("Region", exact=True).fill("us-east-1")
    storage.get_by_label("Access key id").fill(access_key)
    storage.get_by_label("Secret access key").fill(secret_key)
    storage.get_by_role("button", name="Save storage").click()
    expect(toast(page, "The storage configuration is saved.")).to_be_visible()
    with reader(dashboard, account) as api:
        stored = data(api.get(f"/regions/storage/{account.tenant_id}"))
    assert {k: stored[k] for k in ("storageMode", "byosProvider", "byosEndpoint", "byosBucket", "byosRegion",
                                   "byosAccessKeySet", "byosSecretKeySet", "byosAccessKeyLast4")} == {
        "storageMode": "byos", "byosProvider": "s3", "byosEndpoint": endpoint, "byosBucket": bucket,
        "byosRegion": "us-east-1", "byosAccessKeySet": True, "byosSecretKeySet": True,
        "byosAccessKeyLast4": access_key[-4:]}
    expect(storage).to_contain_text(f"s3 bucket {bucket}, access key …{access_key[-4:]}")
    # the keys are never shown back: the fields are empty, the page holds neither value
    expect(storage.get_by_label("Secret access key")).to_have_value("")
    expect(storage.get_by_label("Access key id")).to_have_attribute("placeholder", "stored: leave empty to keep")
    html = page.content()
    assert secret_key not in html and access_key not in html

    storage.get_by_role("button", name="Check the saved bucket").click()
    checklist = storage.get_by_role("list").filter(has=page.locator("[data-step]"))
    expect(storage.get_by_role("heading", level=3)).to_contain_text(f"The bucket works: s3 {bucket} (the saved configuration")
    for step in ("write", "read", "delete"):
        expect(checklist.locator(f'[data-step="{step}"]')).to_contain_text(": passed")

    # another bucket, checked without saving: it fails at the first step, named with its reason
    storage.get_by_label("Bucket", exact=True).fill(f"missing-{secrets.token_hex(4)}")
    storage.get_by_label("Access key id").fill(access_key)
    storage.get_by_label("Secret access key").fill(secret_key)
    storage.get_by_role("button", name="Check without saving").click()
    expect(storage.get_by_role("heading", level=3)).to_contain_text("The bucket failed the check")
    expect(checklist.locator('[data-step="write"]')).to_contain_text("Write a test object: failed")
    expect(checklist.locator('[data-step="write"]')).to_contain_text("no_such_bucket")
    expect(checklist.locator('[data-step="read"]')).to_contain_text("skipped")
    with reader(dashboard, account) as api:
        assert data(api.get(f"/regions/storage/{account.tenant_id}"))["byosBucket"] == bucket   # not saved
    check_page(page, "storage", every_impact=True)
    assert page.problems == []
