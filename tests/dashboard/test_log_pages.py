"""The event log and the audit log answer questions, in Chromium against the local stack: each entry
reads as a sentence linking to its object (a deleted one named, not linked); the event log filters by
type and date range (in the reader's own zone, sent as UTC), finds an event by its id and filters by an
object's id; the audit log filters by actor (a member by name, an API key by its name) and action; the
filters live in the address, so a reload keeps them and Back goes to the filters before. An empty
tenant's list pages say what the thing is and what to do first (Webhooks: `svc listen --forward-to`)."""

from __future__ import annotations

import re
import secrets
import time
from datetime import UTC, datetime, timedelta
from urllib.parse import quote
from zoneinfo import ZoneInfo

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.dashboard import LAPTOP, check_page
from tests.support.waiting import waited

ZONE = "America/Sao_Paulo"   # UTC-3 all year: the range's local times must reach the API as UTC


@pytest.fixture
def zoned_page(browser):
    from tests.support.browser import watched
    context = browser.new_context(viewport=LAPTOP, timezone_id=ZONE)
    yield watched(context.new_page())
    context.close()


def local_second(iso: str) -> str:
    """An event's time as a datetime-local field of the page's zone takes it, to the second."""
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(ZoneInfo(ZONE)).strftime("%Y-%m-%dT%H:%M:%S")


def field_value(local: str) -> str:
    """What a datetime-local field to the second reads back: Chromium leaves out seconds of 0."""
    return local[:-3] if local.endswith(":00") else local


def utc_second(iso: str) -> str:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).strftime("%Y-%m-%dT%H:%M:%SZ")


def events_of(api: httpx.Client, count: int) -> list[dict]:
    """The tenant's events once `count` are logged (the outbox publishes them a moment after)."""
    logged = waited(lambda: api.get("/events", params={"limit": 100}).json()["data"]["items"],
                    lambda items: len(items) >= count)
    assert len(logged) == count, [e["type"] for e in logged]
    return logged


def sentences(page) -> list[str]:
    return page.locator("main tbody tr th").all_inner_texts()


def shown_sentences(page):
    """The rows' sentences, to wait on: names come once the page has read the members and objects."""
    return expect(page.locator("main tbody tr th"))


def test_the_event_log_filters_by_type_and_range_finds_by_id_and_links_to_objects(zoned_page, dashboard):
    page = zoned_page
    account = dashboard.new_account(name="Acme")
    with dashboard.client(account) as api:
        alpha = api.post("/projects", json={"name": "Alpha"}).json()["data"]
        alpha_made = next(e for e in events_of(api, 3) if e["type"] == "project.created")
        time.sleep(1.1)   # the next project's event falls in a later second: a range can part the two
        beta = api.post("/projects", json={"name": "Beta"}).json()["data"]
        assert api.delete(f"/projects/{alpha['id']}").status_code == 200
        logged = events_of(api, 5)   # tenant.created, user.created, and the three above
    beta_made = next(e for e in logged if e["type"] == "project.created" and e["data"]["id"] == beta["id"])
    assert utc_second(beta_made["timestamp"]) > utc_second(alpha_made["timestamp"])

    dashboard.sign_in(page, account, "/events")
    expect(page.get_by_role("heading", name="Event log")).to_be_visible()
    rows = page.locator("main tbody tr")
    expect(rows).to_have_count(5)
    shown = sentences(page)
    assert shown[:3] == ["Project Alpha was deleted", "Project Beta was created", "Project Alpha was created"]
    assert sorted(shown[3:]) == ["Owner signed up", "Tenant Acme was created"]   # of one moment: either order
    # the object's page while it exists; a project deleted since is named, not linked
    expect(page.get_by_role("link", name="Project Beta was created")).to_have_attribute("href", "#/projects")
    expect(page.get_by_role("link", name="Project Alpha was created")).to_have_count(0)
    expect(page.get_by_role("link", name="Owner signed up")).to_have_attribute("href", "#/settings/members")
    check_page(page, "event-log-sentences", every_impact=True)

    # by type: the address says so, and paging keeps it
    page.get_by_label("Type").select_option("project.created")
    expect(page).to_have_url(re.compile(r"#/events\?type=project\.created$"))
    expect(rows).to_have_count(2)
    assert set(rows.locator("td[data-label='Type']").all_inner_texts()) == {"project.created"}

    # and from Beta's second on, given in the reader's zone, sent as UTC
    page.get_by_label("From (your time)").fill(local_second(beta_made["timestamp"]))
    page.get_by_role("button", name="Apply filters").click()
    since = utc_second(beta_made["timestamp"])
    expect(page).to_have_url(re.compile(re.escape(f"#/events?type=project.created&since={quote(since, safe='')}") + "$"))
    expect(rows).to_have_count(1)
    assert sentences(page) == ["Project Beta was created"]
    expect(page.locator("#since-utc")).to_have_text(since.replace("T", " ").replace("Z", " UTC"))
    check_page(page, "event-log-filtered", every_impact=True)

    # a reload keeps the filters; Back goes to the ones before, then to none
    page.reload()
    expect(rows).to_have_count(1)
    expect(page.get_by_label("Type")).to_have_value("project.created")
    expect(page.get_by_label("From (your time)")).to_have_value(field_value(local_second(beta_made["timestamp"])))
    page.go_back()
    expect(page).to_have_url(re.compile(r"#/events\?type=project\.created$"))
    expect(rows).to_have_count(2)
    expect(page.get_by_label("From (your time)")).to_have_value("")
    page.go_back()
    expect(page).to_have_url(re.compile(r"#/events$"))
    expect(rows).to_have_count(5)
    expect(page.get_by_label("Type")).to_have_value("")
    page.go_forward()
    expect(rows).to_have_count(2)

    # until Alpha's second: only Alpha's creation
    page.get_by_label("To (your time)").fill(local_second(alpha_made["timestamp"]))
    page.get_by_label("To (your time)").press("Enter")   # Enter applies too
    expect(rows).to_have_count(1)
    assert sentences(page) == ["Project Alpha was created"]

    # a range nothing falls in: no entry matches, and Clear filters shows every event again
    page.get_by_label("From (your time)").fill(local_second(beta_made["timestamp"]))
    page.get_by_role("button", name="Apply filters").click()
    empty = page.get_by_role("status").filter(has_text="No event")
    expect(empty).to_contain_text("No event of type project.created, since ")
    expect(rows).to_have_count(0)
    page.get_by_role("button", name="Clear filters").first.click()
    expect(page).to_have_url(re.compile(r"#/events$"))
    expect(rows).to_have_count(5)

    # Find: an event's id opens it; an unknown one says so; an object's id filters by it
    find = page.get_by_role("search", name="Find by id")
    find.get_by_label("Find by id").fill(beta_made["id"])
    find.get_by_role("button", name="Find").click()
    expect(page).to_have_url(re.compile(re.escape(f"#/events/{beta_made['id']}") + "$"))
    expect(page.get_by_role("heading", name="project.created")).to_be_visible()
    expect(page.get_by_role("link", name="Project Beta was created")).to_be_visible()
    page.go_back()
    unknown = "evt_" + "0" * 26
    find.get_by_label("Find by id").fill(unknown)
    find.get_by_role("button", name="Find").click()
    expect(find.get_by_role("alert")).to_have_text(
        f"No event has the id {unknown}: it is not this tenant's, or older than 30 days.")
    expect(page).to_have_url(re.compile(r"#/events$"))
    find.get_by_label("Find by id").fill("Beta")
    find.get_by_role("button", name="Find").click()
    expect(find.get_by_role("alert")).to_contain_text("Beta is not an id")
    find.get_by_label("Find by id").fill(beta["id"])
    find.get_by_role("button", name="Find").click()
    expect(page).to_have_url(re.compile(re.escape(f"#/events?objectId={beta['id']}") + "$"))
    expect(page.get_by_label("Object id")).to_have_value(beta["id"])
    expect(rows).to_have_count(1)
    assert sentences(page) == ["Project Beta was created"]

    # an entry's link goes to its object's page
    page.get_by_role("link", name="Project Beta was created").click()
    expect(page.get_by_role("heading", name="Projects", exact=True)).to_be_visible()
    expect(page.get_by_role("row").filter(has_text="Beta")).to_have_count(1)
    assert page.problems == []


def test_the_audit_log_filters_by_actor_and_action_and_links_to_objects(page, dashboard):
    account = dashboard.new_account(name="Acme")
    first, second = (f"https://hooks-{secrets.token_hex(3)}.example.com/svc" for _ in range(2))
    with dashboard.client(account) as api:
        made = api.post("/api-keys", json={"name": "deploy", "type": "ci", "environment": "Staging",
                                           "scopes": ["webhooks:read", "webhooks:write"]})
        assert made.status_code == 201, made.text
        hook = api.post("/webhooks", json={"url": first, "events": ["*"]}).json()["data"]
        assert api.post("/invitations", json={"email": "grace@example.com", "role": "member"}).status_code == 201
    bearer = {"Authorization": f"Bearer {made.json()['data']['key']}"}
    with httpx.Client(base_url=dashboard.api, timeout=10, headers=bearer) as key:
        other = key.post("/webhooks", json={"url": second, "events": ["project.created"]}).json()["data"]
        assert key.delete(f"/webhooks/{other['id']}").status_code == 200

    dashboard.sign_in(page, account, "/audit-log")
    expect(page.get_by_role("heading", name="Audit log")).to_be_visible()
    rows = page.locator("main tbody tr")
    expect(rows).to_have_count(7)
    expect(page.get_by_role("link", name=f"Owner registered the webhook endpoint {first}")).to_be_visible()
    shown_sentences(page).to_contain_text([
        "Owner signed in with a password",   # the page's own sign-in
        f"The API key deploy deleted the webhook endpoint {second}",
        f"The API key deploy registered the webhook endpoint {second}",
        "Owner invited grace@example.com as a member",
        f"Owner registered the webhook endpoint {first}",
        "Owner created the API key deploy",
        "Owner created the tenant Acme",
    ])
    # an endpoint deleted since is named, not linked; the invitation links to Members
    expect(page.get_by_role("link", name=second)).to_have_count(0)
    expect(page.get_by_role("link", name="Owner invited grace@example.com as a member")).to_have_attribute(
        "href", "#/settings/members")
    check_page(page, "audit-log-sentences", every_impact=True)

    # by actor, a member by name: the key's entries go
    page.get_by_label("Actor").select_option(label="Owner")
    expect(page).to_have_url(re.compile(re.escape(f"#/audit-log?actor={account.user_id}") + "$"))
    expect(rows).to_have_count(5)
    # and by action
    page.get_by_label("Action").select_option("webhook.created")
    expect(page).to_have_url(re.compile(re.escape(f"#/audit-log?action=webhook.created&actor={account.user_id}") + "$"))
    expect(rows).to_have_count(1)
    check_page(page, "audit-log-filtered", every_impact=True)

    # kept by a reload; Back to the actor alone, then to none
    page.reload()
    expect(rows).to_have_count(1)
    expect(page.get_by_label("Action")).to_have_value("webhook.created")
    expect(page.get_by_label("Actor")).to_have_value(account.user_id)
    page.go_back()
    expect(rows).to_have_count(5)
    expect(page.get_by_label("Action")).to_have_value("")
    page.go_back()
    expect(rows).to_have_count(7)
    page.go_forward()
    page.go_forward()
    expect(rows).to_have_count(1)

    # the entry's link opens its endpoint
    page.get_by_role("link", name=f"Owner registered the webhook endpoint {first}").click()
    expect(page).to_have_url(re.compile(re.escape(f"#/webhooks/{hook['id']}") + "$"))
    expect(page.get_by_role("heading", name="Webhook endpoint")).to_be_visible()

    # an API key by its name
    page.goto(f"{dashboard.url}/#/audit-log")
    page.get_by_label("Actor").select_option(label="deploy")
    expect(rows).to_have_count(2)
    shown_sentences(page).to_have_text([re.compile(r"^The API key deploy deleted "),
                                        re.compile(r"^The API key deploy registered ")])
    # nothing of that action by it: the filters in words, and Clear filters
    page.get_by_label("Action").select_option("invitation.created")
    expect(page.get_by_role("status").filter(has_text="No entry")).to_have_text(
        "No entry of action invitation.created, by the API key deploy.")
    page.get_by_role("button", name="Clear filters").first.click()
    expect(page).to_have_url(re.compile(r"#/audit-log$"))
    expect(rows).to_have_count(7)
    assert page.problems == []


def test_an_empty_tenants_list_pages_say_what_to_do_first(page, dashboard):
    account = dashboard.new_account()
    dashboard.sign_in(page, account, "/projects")
    for path, title, tag, first in (
            ("/projects", "No projects yet", "Projects", "Create project"),
            ("/agents", "No agents yet", "Agents", "Create agent"),
            ("/chat", "No sessions yet", "Chat", "Start session"),
            ("/webhooks", "No endpoints yet", "Webhooks", "Register endpoint"),
            ("/settings/api-keys", "No keys yet", "API keys", "Create key"),
            ("/settings/members", "No invitations yet", "Invitations", "Invite someone")):
        page.goto(f"{dashboard.url}/#{path}")
        state = page.locator("main .empty-state").filter(has=page.get_by_role("heading", name=title))
        expect(state).to_be_visible()
        expect(state).to_contain_text(first)   # what to do first, by the button's (or form's) name
        doc = state.get_by_role("link", name=f"{tag} in the API reference")
        href = doc.get_attribute("href")
        assert href == f"{dashboard.stack.base_url}/api/v1/docs#tag/{tag.replace(' ', '-')}"
        assert httpx.get(href, timeout=10).status_code == 200
        if path == "/webhooks":
            expect(state.get_by_label("Forward the events to a local receiver")).to_have_text(
                "svc listen --forward-to http://localhost:4242/webhook")
            expect(state).to_contain_text("svc listen --print-secret")
            check_page(page, "webhooks-empty")

    # the logs of a new tenant hold its creation; a filter nothing matches says so and offers to clear it
    page.goto(f"{dashboard.url}/#/events?type=project.deleted")
    expect(page.get_by_role("status").filter(has_text="No event")).to_have_text("No event of type project.deleted.")
    page.get_by_role("button", name="Clear filters").last.click()
    expect(page.locator("main tbody tr")).not_to_have_count(0)
    yesterday = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    page.goto(f"{dashboard.url}/#/audit-log?action=secret.deleted&since={quote(yesterday, safe='')}")
    expect(page.get_by_role("status").filter(has_text="No entry")).to_contain_text("No entry of action secret.deleted, since ")
    assert page.problems == []
