"""The Overview (`#/`) in Chromium against the local stack: a new tenant's first steps and balance, the
steps marked done as they are taken and the activity naming what was made; a run waiting for approval
and a failing webhook endpoint, each linking to its page; a member sees the blocks their scopes read.

A supervised agent's run waits for approval when the offline model asks for write_file (a goal that
says "write", docs/agents-and-runs.md); a webhook is failing once a delivery failed and none has
succeeded since (`first_failure_at`), written as the delivery side writes it (tests/support/webhook_receiver.py)."""

from __future__ import annotations

import re
import shlex
import time

import httpx
from playwright.sync_api import expect

from tests.support import mailbox
from tests.support.dashboard import check_page, credits_text
from tests.support.webhook_receiver import closed_port, new_secret, register


def block(page, name: str):
    """A block of the Overview, by its heading, once it has loaded."""
    found = page.get_by_role("region", name=name, exact=True)
    expect(found).to_have_attribute("aria-busy", "false", timeout=15_000)
    return found


def test_a_new_tenant_takes_its_first_steps_from_the_overview(page, dashboard):
    account = dashboard.new_account()
    with dashboard.client(account) as api:
        balance = api.get("/billing/summary").json()["data"]["balance"]["microCredits"]
    dashboard.sign_in(page, account, "/")
    expect(page.get_by_role("heading", name="Overview", exact=True)).to_be_visible()

    steps = block(page, "First steps")
    for step in ("Create an API key", "Call the API with it", "Create a project", "Register a webhook"):
        expect(steps.get_by_role("heading", name=re.compile(step))).to_contain_text("To do")
    curl = steps.get_by_label("The first call")
    expect(curl).to_have_text(f'curl -H "Authorization: Bearer <your key>" {dashboard.stack.base_url}/api/v1/projects')
    money = block(page, "Balance and usage")
    expect(money.get_by_test_id("overview-balance")).to_have_text(credits_text(balance))
    no_usage_yet = re.compile(r"^Usage by day from \d{4}-\d\d-\d\d to .*: none\.$")
    expect(money.get_by_role("img")).to_have_attribute("aria-label", no_usage_yet)
    expect(block(page, "Members")).to_contain_text("1 member, 0 open invitations.")
    expect(block(page, "Failing webhook endpoints")).to_contain_text("No endpoints yet")
    expect(block(page, "Waiting for approval")).to_contain_text("No run is waiting for approval.")
    check_page(page, "overview-new")

    # A key made in the panel: its value shown once and put in the curl line, which works as printed.
    steps.get_by_role("button", name="Create a key").click()
    made = steps.get_by_label("The new key")
    expect(made).to_have_text(re.compile(r"^\S{20,}$"))
    value = made.inner_text()
    expect(steps.get_by_role("heading", name=re.compile("Create an API key"))).to_contain_text("Done")
    expect(curl).to_contain_text(f'Bearer {value}"')
    curl.locator("xpath=..").get_by_role("button", name="Copy").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    words = shlex.split(copied)
    assert words[:2] == ["curl", "-H"], copied
    answer = httpx.get(words[3], headers=dict([words[2].split(": ", 1)]), timeout=10)
    assert answer.status_code == 200 and answer.json()["data"]["items"] == [], answer.text
    with dashboard.client(account) as api:
        keys = api.get("/api-keys").json()["data"]["items"]
        assert [(k["name"], k["createdBy"]) for k in keys if k["last_used_at"]] == [("First key", account.user_id)]
        assert api.post("/projects", json={"name": "Apollo", "language": "python"}).status_code == 201

    page.reload()
    steps = block(page, "First steps")
    for step in ("Create an API key", "Call the API with it", "Create a project"):
        expect(steps.get_by_role("heading", name=re.compile(step))).to_contain_text("Done")
    expect(steps.get_by_role("heading", name=re.compile("Register a webhook"))).to_contain_text("To do")
    expect(steps.get_by_label("The first call")).to_contain_text("Bearer <your key>")   # the value is never read back
    activity = block(page, "Recent activity")
    made_project = activity.get_by_role("link", name="Project Apollo was created")
    expect(made_project).to_have_attribute("href", "#/projects")
    expect(activity.get_by_role("listitem").filter(has_text="Project Apollo was created").locator("time")).to_have_text(
        re.compile(r"now|seconds? ago|1 minute ago"))
    check_page(page, "overview-started")
    made_project.click()
    expect(page.get_by_role("row", name=re.compile("Apollo"))).to_be_visible()
    assert page.problems == []


def test_a_run_waiting_for_approval_and_a_failing_webhook_show_up_and_lead_to_their_pages(page, dashboard):
    account = dashboard.new_account()
    with dashboard.client(account) as api:
        project = api.post("/projects", json={"name": "Release", "language": "python"}).json()["data"]
        agent = api.post("/agents", json={"name": "Notes writer", "systemPrompt": "You write release notes.",
                                          "config": {"autonomyLevel": "supervised"}}).json()["data"]
        run = api.post(f"/agents/{agent['id']}/execute",
                       json={"goal": "Write notes.md with the release notes", "projectId": project["id"]})
        assert run.status_code == 201 and run.json()["data"]["status"] == "awaiting_approval", run.text
        run = run.json()["data"]
        done = api.post(f"/agents/{agent['id']}/execute", json={"goal": "Say hello.", "projectId": project["id"]})
        assert done.json()["data"]["status"] == "completed", done.text
        failing_url = f"http://127.0.0.1:{closed_port()}/hooks"
        failing = register(account.tenant_id, failing_url, new_secret(), failing_since=int(time.time()) - 7200)
        paused = register(account.tenant_id, f"http://127.0.0.1:{closed_port()}/paused", new_secret())
        off = api.patch(f"/webhooks/{paused}", json={"enabled": False}).json()["data"]
        assert off["disabledReason"] == "disabled through the API"
        register(account.tenant_id, f"http://127.0.0.1:{closed_port()}/fine", new_secret())
    dashboard.sign_in(page, account, "/")

    waiting = block(page, "Waiting for approval")
    runs = waiting.get_by_role("listitem")
    expect(runs).to_have_count(1)                                   # the completed run is not waiting
    expect(runs).to_contain_text("write_file notes.md")
    hooks = block(page, "Failing webhook endpoints").get_by_role("listitem")
    expect(hooks).to_have_count(1)                                  # not the one turned off, nor the healthy one
    expect(hooks).to_contain_text("failing since 2 hours ago")
    activity = block(page, "Recent activity")
    expect(activity.get_by_role("link", name="An agent run completed")).to_have_count(1)
    expect(activity.get_by_role("link", name="An agent run started")).to_have_count(2)
    expect(block(page, "First steps").get_by_role("heading", name=re.compile("Register a webhook"))).to_contain_text("Done")
    used = block(page, "Balance and usage").get_by_role("img")   # the runs' model calls, charted and named
    expect(used).to_have_attribute("aria-label", re.compile(r"in credits, stacked by model \(1 model: .+\): .+ credits in all"))
    check_page(page, "overview-attention")

    waiting.get_by_role("link", name="Notes writer: Write notes.md with the release notes").click()
    expect(page).to_have_url(re.compile(rf"#/agents/{agent['id']}/runs/{run['id']}$"))
    expect(page.get_by_role("region", name="Waiting for your approval")).to_contain_text("write_file")
    page.go_back()
    block(page, "Failing webhook endpoints").get_by_role("link", name=failing_url).click()
    expect(page).to_have_url(re.compile(rf"#/webhooks/{failing}$"))
    expect(page.get_by_role("heading", name="Webhook endpoint")).to_be_visible()
    assert page.problems == []


def test_a_member_sees_the_blocks_their_scopes_read_and_no_error(page, dashboard):
    owner = dashboard.new_account(name="Team")
    person = dashboard.new_account(name="Own")
    with dashboard.client(owner) as api:
        assert api.post("/invitations", json={"email": person.email, "role": "member"}).status_code == 201
        assert api.post("/invitations", json={"email": "later@example.com", "role": "member"}).status_code == 201
    token = mailbox.token_of(mailbox.latest_link(to=person.email))
    with dashboard.client(person) as api:
        assert api.post("/invitations/accept", json={"token": token}).status_code == 200
    dashboard.sign_in(page, person, "/")
    page.get_by_label("Tenant", exact=True).select_option(owner.tenant_id)
    expect(page.get_by_role("main")).to_contain_text("(member, free plan)")

    expect(block(page, "Members")).to_contain_text("2 members, 1 open invitation.")
    expect(block(page, "Balance and usage").get_by_role("img")).to_be_visible()        # billing:read
    block(page, "Recent activity")
    # a member may not read or make keys, nor register webhooks: no first steps, and nothing refused
    expect(page.get_by_role("region", name="First steps")).to_have_count(0)
    expect(page.get_by_role("alert")).to_have_count(0)
    assert page.problems == []
