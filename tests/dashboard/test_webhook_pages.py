"""Webhooks (endpoints, deliveries, redelivery, secret rotation, replay), the event log and the audit
log, in Chromium against the local stack. The endpoint is a real HTTP receiver on loopback that
verifies each delivery with the Standard Webhooks reference library and the secret the page showed."""

from __future__ import annotations

import json
import re
import secrets
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.dashboard import LAPTOP, check_page, open_dialog, row_action, short_id, toast
from tests.support.waiting import waited
from tests.support.webhook_receiver import Receiver

ZONE = "America/Sao_Paulo"   # UTC-3 all year: the replay's local time must reach the API as UTC


@pytest.fixture
def zoned_page(browser):
    """A page whose clock reads another zone than UTC (datetime-local inputs are local times)."""
    from tests.support.browser import watched
    context = browser.new_context(viewport=LAPTOP, permissions=["clipboard-read", "clipboard-write"], timezone_id=ZONE)
    yield watched(context.new_page())
    context.close()


def api_key(tenant_id: str, user_id: str) -> str:
    from svc_core.auth.scopes import ALL_SCOPES
    from svc_core.domain.api_keys import issue_key
    return issue_key(tenant_id=tenant_id, created_by=user_id, name="test key", key_type="sdk",
                     environment="Development", scopes=sorted(ALL_SCOPES))["key"]


def refreshed_until(page, row, seconds: float = 30) -> None:
    """Press the deliveries' Refresh until the row is there (a delivery lands within a second or so)."""
    def there():
        if row.count():
            return True
        page.get_by_role("button", name="Refresh").click()
        page.wait_for_timeout(300)
        return row.count() > 0
    assert waited(there, bool, timeout=seconds), "the delivery did not appear"


def test_register_an_endpoint_test_it_redeliver_rotate_replay_edit_and_delete(zoned_page, dashboard):
    page = zoned_page
    account = dashboard.new_account()
    receiver = Receiver(secret="not known yet")
    api = httpx.Client(base_url=dashboard.api, timeout=10,
                       headers={"Authorization": f"Bearer {api_key(account.tenant_id, account.user_id)}"})
    try:
        dashboard.sign_in(page, account, "/webhooks")
        expect(page.get_by_role("heading", name="Webhooks", exact=True)).to_be_visible()
        expect(page.get_by_text("No endpoints yet")).to_be_visible()

        form = open_dialog(page, "Register endpoint", "Register an endpoint")
        expect(form.get_by_role("button", name="Register endpoint")).to_be_disabled()   # no event chosen yet
        form.get_by_label("URL").fill(receiver.url)
        form.get_by_label("Description (optional)").fill("Release notes")
        form.get_by_label("project.created").check()
        form.get_by_role("button", name="Register endpoint").click()

        # The generated secret, shown once with Copy: the receiver verifies with what the page showed.
        reveal = form   # the secret is shown in the dialog, once
        secret = reveal.get_by_label(f"The signing secret of {receiver.url}").inner_text()
        assert secret.startswith("whsec_"), secret
        reveal.get_by_role("button", name="Copy").click()
        expect(reveal.get_by_text("Copied")).to_be_visible()
        assert page.evaluate("navigator.clipboard.readText()") == secret
        receiver.secret = secret
        [stored] = api.get("/webhooks").json()["data"]["items"]
        assert (stored["url"], stored["events"], stored["description"], stored["enabled"]) == (
            receiver.url, ["project.created"], "Release notes", True)
        expect(page.get_by_role("row", name=receiver.url)).to_contain_text("project.created")
        check_page(page, "webhooks", every_impact=True)

        reveal.get_by_role("link", name="Open the endpoint").click()
        expect(page.get_by_role("heading", name="Webhook endpoint")).to_be_visible()
        expect(page.get_by_text("No deliveries yet")).to_be_visible()

        # A test event: its delivery appears with the receiver's 200 and the latency; it was signed with the secret.
        page.get_by_role("button", name="Send test event").click()
        expect(toast(page, "Test event")).to_contain_text("queued")
        test_row = page.get_by_role("row", name=re.compile("webhook.test"))
        refreshed_until(page, test_row)
        expect(test_row).to_contain_text("delivered")
        expect(test_row).to_contain_text("200")
        expect(test_row).to_contain_text(re.compile(r"\d+ ms"))
        [tested] = receiver.wait_for(1)
        assert tested.verify_error is None, tested.verify_error
        assert tested.payload["type"] == "webhook.test" and tested.payload["data"]["webhookId"] == stored["id"]
        expect(test_row.get_by_title(tested.payload["id"])).to_have_text(short_id(tested.payload["id"]))

        # An event of the log, delivered, then sent again from the page: a second attempt, same webhook-id.
        project = api.post("/projects", json={"name": "Apollo", "language": "python"}).json()["data"]
        created_at = datetime.now(UTC)
        event_rows = page.get_by_role("row", name=re.compile("project.created"))
        refreshed_until(page, event_rows)
        expect(event_rows.first).to_contain_text("its own delivery")
        expect(event_rows.first).to_contain_text("delivered")
        delivered = receiver.wait_for(2)[1]
        assert delivered.verify_error is None and delivered.payload["data"]["id"] == project["id"]
        event_id = delivered.headers["webhook-id"]
        page.get_by_role("button", name=f"Redeliver project.created {event_id}").click()
        resent_row = page.get_by_role("row", name=re.compile("project.created")).filter(has_text="redelivery rdl_")
        refreshed_until(page, resent_row)
        expect(resent_row).to_contain_text("delivered")
        expect(resent_row).to_contain_text("200")
        resent = receiver.wait_for(3)[2]
        assert resent.verify_error is None and resent.headers["webhook-id"] == event_id
        # the test event is not in the event log, so it offers no redelivery
        expect(test_row.get_by_role("button", name=re.compile("Redeliver"))).to_have_count(0)
        check_page(page, "webhook-endpoint", every_impact=True)

        # Rotate with no overlap (the page's actions menu asks it in a dialog): only the new secret, shown
        # there once, signs from now on.
        head = page.locator("main .page-head")
        row_action(page, head, "Rotate secret…")
        rotation = page.get_by_role("dialog", name="Rotate the signing secret")
        rotation.get_by_label("The current secret keeps signing for").select_option("0")
        rotation.get_by_role("button", name="Rotate secret").click()
        rotated = rotation.get_by_label("The new signing secret").inner_text()
        assert rotated.startswith("whsec_") and rotated != secret
        rotation.get_by_role("button", name="Done").click()
        expect(rotation).to_be_hidden()
        receiver.secret = rotated

        # Replay since a minute before the project (a time of the page's zone, sent as UTC): it completes,
        # the project's event arrives once more, signed with the new secret alone.
        since = created_at.astimezone(ZoneInfo(ZONE)).replace(second=0, microsecond=0) - timedelta(minutes=1)
        replay_form = page.get_by_role("region", name="Replay events")
        replay_form.get_by_label("Since (your local time)").fill(since.strftime("%Y-%m-%dT%H:%M"))
        expected_since = since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:00Z")
        expect(replay_form.get_by_text(f"{expected_since} in UTC")).to_be_visible()
        replay_form.get_by_role("button", name="Replay").click()
        progress = replay_form.get_by_role("status")
        expect(progress).to_contain_text("Completed: 1 matched, 1 queued, 0 skipped, 1 delivered, 0 failed.",
                                         timeout=30_000)
        replay_id = progress.locator("code").get_attribute("title")
        expect(progress.locator("code")).to_have_text(short_id(replay_id))
        kept = api.get(f"/webhooks/{stored['id']}/replays/{replay_id}").json()["data"]
        assert datetime.fromisoformat(kept["since"]) == datetime.fromisoformat(expected_since)
        replayed = receiver.wait_for(4)[3]
        assert replayed.verify_error is None, replayed.verify_error
        assert replayed.headers["webhook-id"] == event_id
        assert len(replayed.headers["webhook-signature"].split()) == 1   # the old secret signs no more
        replayed_row = page.get_by_role("row", name=re.compile("project.created")).filter(
            has=page.locator(f"td[data-label='Sent by']:has-text('replay') [title='{replay_id}']"))
        refreshed_until(page, replayed_row)
        expect(replayed_row).to_contain_text("delivered")

        # Disable it and subscribe to every event; the service stores both.
        settings = page.get_by_role("region", name="Settings")
        settings.get_by_label("Enabled (deliveries are made)").uncheck()
        settings.get_by_label("Every event").check()
        settings.get_by_role("button", name="Save settings").click()
        expect(page.get_by_role("region", name=receiver.url)).to_contain_text("disabled")
        expect(page.get_by_role("button", name="Send test event")).to_be_disabled()
        now = api.get(f"/webhooks/{stored['id']}").json()["data"]
        assert (now["enabled"], now["events"]) == (False, ["*"])

        # Deleting asks first; cancel keeps it.
        row_action(page, head, "Delete endpoint…")
        page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
        assert api.get(f"/webhooks/{stored['id']}").status_code == 200
        row_action(page, head, "Delete endpoint…")
        page.get_by_role("dialog").get_by_role("button", name="Delete endpoint").click()
        expect(toast(page, f"The endpoint {receiver.url} was deleted.")).to_be_visible()
        expect(page.get_by_text("No endpoints yet")).to_be_visible()
        assert api.get(f"/webhooks/{stored['id']}").status_code == 404
        assert page.problems == []
    finally:
        api.close()
        receiver.stop()


def test_the_event_log_pages_and_shows_an_event(page, dashboard):
    account = dashboard.new_account(plan="starter")   # the free plan holds 10 projects
    with httpx.Client(base_url=dashboard.api, timeout=10,
                      headers={"Authorization": f"Bearer {api_key(account.tenant_id, account.user_id)}"}) as api:
        projects = [api.post("/projects", json={"name": f"Log {i}", "language": "python"}).json()["data"]
                    for i in range(21)]
        # the account's own events (tenant.created, user.created), then 21 project.created: more than a page of 20
        logged = waited(lambda: api.get("/events", params={"limit": 100}).json()["data"]["items"],
                        lambda items: sum(e["type"] == "project.created" for e in items) == 21)
        assert sum(e["type"] == "project.created" for e in logged) == 21
    dashboard.sign_in(page, account, "/events")
    expect(page.get_by_role("heading", name="Event log")).to_be_visible()
    rows = page.locator("tbody tr")
    expect(rows).to_have_count(20)
    page.get_by_role("button", name="Load more").click()
    expect(rows).to_have_count(len(logged))
    expect(page.get_by_role("button", name="Load more")).to_have_count(0)
    ids = rows.locator("td[data-label='Id'] code")
    assert ids.all_inner_texts() == [short_id(e["id"]) for e in logged]
    assert ids.evaluate_all("nodes => nodes.map((n) => n.title)") == [e["id"] for e in logged]
    # Copy takes the whole id
    rows.first.get_by_role("button", name=f"Copy {logged[0]['id']}").click()
    expect(rows.first.get_by_role("button", name=f"Copied {logged[0]['id']}")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == logged[0]["id"]
    check_page(page, "event-log")

    # filtered by type, still paged
    page.get_by_label("Type").select_option("project.created")
    expect(rows).to_have_count(20)
    page.get_by_role("button", name="Load more").click()
    expect(rows).to_have_count(21)
    assert set(rows.locator("td[data-label='Type']").all_inner_texts()) == {"project.created"}
    # each in plain words, linking to the projects
    assert rows.locator("th").all_inner_texts() == [f"Project Log {i} was created" for i in reversed(range(21))]

    newest = logged[0]
    assert newest["type"] == "project.created" and newest["data"]["id"] == projects[-1]["id"]
    rows.filter(has=page.get_by_title(newest["id"], exact=True)).get_by_role("link", name="project.created").click()
    expect(page.get_by_role("heading", name="project.created")).to_be_visible()
    shown = page.get_by_label("The event's data")
    assert shown.evaluate("node => node.tagName") == "PRE"
    assert json.loads(shown.inner_text()) == newest["data"]
    assert '\n  "id": ' in shown.inner_text()   # pretty-printed
    check_page(page, "event")
    assert page.problems == []


def test_the_audit_log_shows_who_registered_a_webhook_and_exports_on_enterprise(page, dashboard):
    account = dashboard.new_account()
    dashboard.sign_in(page, account, "/webhooks")
    form = open_dialog(page, "Register endpoint", "Register an endpoint")
    form.get_by_label("Every event").check()
    # a refused URL: the service's reason, with the request id, and nothing registered (nor audited)
    form.get_by_label("URL").fill("https://10.0.0.1/hooks")
    form.get_by_role("button", name="Register endpoint").click()
    alert = form.get_by_role("alert")
    expect(alert).to_contain_text("VALIDATION_ERROR")
    expect(alert).to_contain_text("url")
    expect(alert).to_contain_text(re.compile(r"Request id: \S+"))
    url = f"https://hooks-{secrets.token_hex(3)}.example.com/svc"
    form.get_by_label("URL").fill(url)
    form.get_by_role("button", name="Register endpoint").click()
    expect(form.get_by_label(f"The signing secret of {url}")).to_be_visible()
    form.get_by_role("button", name="Done").click()

    page.get_by_role("link", name="Audit log").click()
    expect(page.get_by_role("heading", name="Audit log")).to_be_visible()
    page.get_by_label("Action").select_option("webhook.created")
    row = page.get_by_role("row", name=re.compile("webhook.created"))
    expect(row).to_have_count(1)
    # the actor by name (the owner's), the user id on hover; ids shortened
    expect(row.locator("td[data-label='Actor']")).to_have_text(re.compile(r"^Owner\s*user$"))
    expect(row.get_by_title(account.user_id, exact=True)).to_have_text("Owner")
    expect(row).not_to_contain_text(account.user_id)
    expect(row).to_contain_text("127.0.0.1")
    expect(row).to_contain_text(f"url: {url}")
    expect(row).to_contain_text("secretSource: generated")
    expect(row.locator("td[data-label='Request id'] code")).to_have_text(re.compile(r"\S+"))
    check_page(page, "audit-log")

    # The free plan has no export: the page says which plan has it.
    page.get_by_role("button", name="Export the audit log").click()
    expect(page.get_by_role("alert")).to_contain_text("Exports come with the enterprise plan; this tenant is on the free plan")

    # On enterprise the export is made, of the filtered entries, and downloads.
    from svc_core.domain.tenants import set_plan
    set_plan(account.tenant_id, "enterprise")
    page.get_by_role("button", name="Export the audit log").click()
    made = page.get_by_role("status").filter(has_text="exported")
    expect(made).to_contain_text("1 entry exported")
    link = made.get_by_role("link", name="download the export").get_attribute("href")
    exported = httpx.get(link, timeout=10)
    assert exported.status_code == 200, exported.text
    [line] = exported.text.strip().splitlines()
    entry = json.loads(line)
    assert (entry["action"], entry["actor"], entry["changes"]["url"]["new"]) == (
        "webhook.created", {"type": "user", "id": account.user_id}, url)
    assert page.problems == []


def test_a_failing_endpoint_shows_the_status_its_error_and_the_next_retry(page, dashboard):
    account = dashboard.new_account()
    receiver = Receiver(secret="not known yet", respond=lambda n, d: (503, {}))
    try:
        dashboard.sign_in(page, account, "/webhooks")
        form = open_dialog(page, "Register endpoint", "Register an endpoint")
        form.get_by_label("URL").fill(receiver.url)
        form.get_by_label("Every event").check()
        form.get_by_role("button", name="Register endpoint").click()
        page.get_by_role("link", name="Open the endpoint").click()
        page.get_by_role("button", name="Send test event").click()
        row = page.get_by_role("row", name=re.compile("webhook.test"))
        refreshed_until(page, row)
        expect(row.locator("td[data-label='Outcome']")).to_have_text("retrying")
        expect(row.locator("td[data-label='HTTP status']")).to_have_text("503")
        expect(row.locator("td[data-label='Error']")).not_to_be_empty()
        expect(row.locator("td[data-label='Next retry']")).not_to_have_text("—")
        assert receiver.wait_for(1)[0].path == "/hooks"
        assert page.problems == []
    finally:
        receiver.stop()
