"""The list pages lead with their list: API keys, Projects, Agents, Webhooks, Chat and Members show
their table right under the heading (no form before it), with a "Create …" (or "Invite someone")
button opening a modal dialog that takes the focus and gives it back; a row's actions sit behind an
"Actions for <name>" menu button (the WAI-ARIA pattern, by keyboard), as do a webhook endpoint's and
an agent's on their own pages; a key's rotation shows both of its values, the old one with its end."""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime, timedelta

from playwright.sync_api import expect

from tests.support.dashboard import check_page, row_action, toast

# What follows the heading of main, in the page's order, among what a person reads or fills in.
FIRST_AFTER_HEADING = """() => {
    const main = document.querySelector("main");
    const shown = [...main.querySelectorAll("h1, table, form, fieldset, input, select, textarea, .card, .empty")]
        .filter((el) => el.getClientRects().length > 0);
    return shown.slice(shown.indexOf(main.querySelector("h1")) + 1).map((el) => el.tagName.toLowerCase());
}"""


def test_every_list_page_leads_with_its_table(page, dashboard):
    account = dashboard.new_account()
    with dashboard.client(account) as http:
        assert http.post("/api-keys", json={"name": "ci", "type": "ci", "environment": "Staging"}).status_code == 201
        assert http.post("/projects", json={"name": "Site"}).status_code == 201
        assert http.post("/agents", json={"name": "Helper", "systemPrompt": "You help."}).status_code == 201
        assert http.post("/webhooks", json={"url": f"https://hooks-{secrets.token_hex(3)}.example.com/svc",
                                            "events": ["*"]}).status_code == 201
        assert http.post("/chat/sessions", json={"title": "First steps"}).status_code == 201
    dashboard.sign_in(page, account, "/settings/api-keys")
    for path, heading, create in (("/settings/api-keys", "API keys", "Create key"), ("/projects", "Projects", "Create project"),
                                  ("/agents", "Agents", "Create agent"), ("/webhooks", "Webhooks", "Register endpoint"),
                                  ("/chat", "Chat", "Start session"),
                                  ("/settings/members", "Members", "Invite someone")):
        page.goto(f"{dashboard.url}/#{path}")
        expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible()
        expect(page.locator("main table")).to_be_visible()
        shown = page.evaluate(FIRST_AFTER_HEADING)
        assert shown[0] == "table", f"{path}: {shown}"
        assert "form" not in shown, f"{path} shows a form before its Create button is pressed: {shown}"
        expect(page.get_by_role("button", name=create, exact=True)).to_be_visible()
    assert page.problems == []


def test_the_create_dialog_takes_the_focus_and_gives_it_back(page, dashboard):
    account = dashboard.new_account()
    dashboard.sign_in(page, account, "/projects")
    create = page.get_by_role("button", name="Create project", exact=True)
    create.click()
    dialog = page.get_by_role("dialog", name="Create a project")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_label("Name")).to_be_focused()
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(create).to_be_focused()

    # by keyboard: Enter opens it, Cancel closes it, and the focus is back on the button
    page.keyboard.press("Enter")
    expect(dialog).to_be_visible()
    check_page(page, "create-project-dialog")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    expect(create).to_be_focused()
    assert page.problems == []


def test_a_rotation_is_asked_in_a_dialog_and_the_list_shows_both_values(page, dashboard):
    account = dashboard.new_account()
    with dashboard.client(account) as http:
        created = http.post("/api-keys", json={"name": "deploys", "type": "ci", "environment": "Production"}).json()["data"]
    dashboard.sign_in(page, account, "/settings/api-keys")
    row = page.get_by_role("row", name=re.compile("deploys"))
    expect(row).to_contain_text(created["hint"])

    # the actions menu by keyboard: Enter opens it on its first item, Down moves, Escape closes it
    actions = row.get_by_role("button", name="Actions for deploys")
    expect(actions).to_have_attribute("aria-haspopup", "menu")
    actions.focus()
    page.keyboard.press("Enter")
    menu = page.get_by_role("menu", name="Actions for deploys")
    expect(actions).to_have_attribute("aria-expanded", "true")
    expect(menu.get_by_role("menuitem", name="Rotate…")).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(menu.get_by_role("menuitem", name="Revoke…")).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(menu.get_by_role("menuitem", name="Rotate…")).to_be_focused()
    page.keyboard.press("Escape")
    expect(menu).to_be_hidden()
    expect(actions).to_be_focused()
    # Space opens it too, without choosing its first item; Up opens it on its last
    page.keyboard.press(" ")
    expect(menu.get_by_role("menuitem", name="Rotate…")).to_be_focused()
    expect(page.get_by_role("dialog")).to_have_count(0)
    page.keyboard.press("Escape")
    page.keyboard.press("ArrowUp")
    expect(menu.get_by_role("menuitem", name="Revoke…")).to_be_focused()
    page.keyboard.press("Escape")
    expect(actions).to_be_focused()

    # Rotate… asks for the overlap in its dialog; the new value is shown there once
    page.keyboard.press("Enter")
    expect(menu.get_by_role("menuitem", name="Rotate…")).to_be_focused()
    page.keyboard.press("Enter")
    rotation = page.get_by_role("dialog", name="Rotate deploys")
    expect(rotation).to_be_visible()
    overlap = rotation.get_by_label("Overlap")
    expect(overlap).to_be_focused()
    assert [o.strip() for o in overlap.locator("option").all_inner_texts()] == \
        ["none: the old value stops now", "1 hour", "24 hours", "7 days"]
    overlap.select_option("3600")
    rotated_at = datetime.now(UTC)
    rotation.get_by_role("button", name="Rotate").click()
    value = rotation.get_by_label("The new value of deploys").inner_text()
    assert value.startswith("svc_ci_")
    expect(rotation).to_contain_text("The earlier value works until")
    rotation.get_by_role("button", name="Done").click()
    expect(rotation).to_be_hidden()
    expect(actions).to_be_focused()

    # the list: the new value, and the old one with when it stops working
    cell = row.locator("td[data-label=Value]")
    expect(cell).to_contain_text(f"svc_ci_...{value[-4:]}")
    old = cell.locator("li", has_text=created["hint"])
    expect(old).to_contain_text("works until")
    ends = datetime.fromisoformat(old.locator("time").first.get_attribute("datetime"))
    assert timedelta(minutes=59) <= ends - rotated_at <= timedelta(minutes=61), ends
    expect(old.locator("time").last).to_have_text(re.compile(r"^in (1 hour|\d+ minutes)$"))
    expect(old.locator("time").last).to_have_attribute("title", re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$"))
    check_page(page, "api-keys-rotated", every_impact=True)
    assert page.problems == []


def test_members_invite_in_a_dialog_and_each_row_acts_through_its_menu(page, dashboard):
    account = dashboard.new_account()
    asked = f"asked-{secrets.token_hex(3)}@example.com"
    with dashboard.client(account) as http:
        assert http.post("/invitations", json={"email": asked, "role": "member"}).status_code == 201
    dashboard.sign_in(page, account, "/settings/members")
    expect(page.get_by_role("row").filter(has_text=asked)).to_contain_text("pending")
    assert "form" not in page.evaluate(FIRST_AFTER_HEADING)   # no invitation form until it is asked for

    invite = page.get_by_role("button", name="Invite someone", exact=True)
    expect(invite).to_have_attribute("aria-haspopup", "dialog")
    invite.click()
    dialog = page.get_by_role("dialog", name="Invite someone")
    expect(dialog.get_by_label("E-mail")).to_be_focused()
    assert [o.strip() for o in dialog.get_by_label("Role").locator("option").all_inner_texts()] == \
        ["owner", "admin", "member"]
    check_page(page, "members-invite-dialog", every_impact=True)
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(invite).to_be_focused()

    # an invitation's menu by keyboard: Enter opens it on Resend, the arrows wrap, Escape closes it
    actions = page.get_by_role("row").filter(has_text=asked).get_by_role("button", name=f"Actions for {asked}")
    actions.focus()
    page.keyboard.press("Enter")
    menu = page.get_by_role("menu", name=f"Actions for {asked}")
    expect(menu.get_by_role("menuitem", name="Resend")).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(menu.get_by_role("menuitem", name="Revoke…")).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(menu.get_by_role("menuitem", name="Resend")).to_be_focused()
    page.keyboard.press("Escape")
    expect(menu).to_be_hidden()
    expect(actions).to_be_focused()
    # Revoke… asks first, Cancel has the focus; Escape keeps the invitation and gives the focus back
    page.keyboard.press("ArrowUp")
    expect(menu.get_by_role("menuitem", name="Revoke…")).to_be_focused()
    page.keyboard.press("Enter")
    question = page.get_by_role("dialog", name="Revoke")
    expect(question).to_contain_text(f"Revoke the invitation of {asked}?")
    expect(question.get_by_role("button", name="Cancel")).to_be_focused()
    page.keyboard.press("Escape")
    expect(question).to_be_hidden()
    expect(actions).to_be_focused()
    expect(page.get_by_role("row").filter(has_text=asked)).to_contain_text("pending")

    # the owner's own row: only leaving, asked first, the focus back on its button after Cancel
    mine = page.get_by_role("region", name="Members", exact=True).get_by_role("row").filter(has_text=account.email)
    row_action(page, mine, "Leave tenant…")
    leave = page.get_by_role("dialog", name="Leave tenant")
    leave.get_by_role("button", name="Cancel").click()
    expect(leave).to_be_hidden()
    expect(mine.get_by_role("button", name=re.compile(r"^Actions for "))).to_be_focused()
    assert page.problems == []


def test_an_endpoints_rotation_and_deletion_sit_behind_its_pages_actions(page, dashboard):
    account = dashboard.new_account()
    url = f"https://hooks-{secrets.token_hex(3)}.example.com/svc"
    with dashboard.client(account) as http:
        hook = http.post("/webhooks", json={"url": url, "events": ["*"]}).json()["data"]
    dashboard.sign_in(page, account, f"/webhooks/{hook['id']}")
    expect(page.get_by_role("region", name=url)).to_be_visible()
    # nothing of the rotation or the deletion on the page until its menu is opened
    expect(page.get_by_label("The current secret keeps signing for")).to_have_count(0)
    expect(page.get_by_role("button", name=re.compile(r"^(Rotate secret|Delete endpoint)"))).to_have_count(0)

    actions = page.locator("main .page-head").get_by_role("button", name=f"Actions for {url}")
    actions.focus()
    page.keyboard.press("Enter")
    menu = page.get_by_role("menu", name=f"Actions for {url}")
    expect(menu.get_by_role("menuitem", name="Rotate secret…")).to_be_focused()
    page.keyboard.press("End")
    expect(menu.get_by_role("menuitem", name="Delete endpoint…")).to_be_focused()
    page.keyboard.press("Home")
    expect(menu.get_by_role("menuitem", name="Rotate secret…")).to_be_focused()
    page.keyboard.press("Enter")
    rotation = page.get_by_role("dialog", name="Rotate the signing secret")
    overlap = rotation.get_by_label("The current secret keeps signing for")
    expect(overlap).to_be_focused()
    assert [o.strip() for o in overlap.locator("option").all_inner_texts()] == \
        ["no time: it stops now", "1 hour", "24 hours", "7 days"]
    check_page(page, "webhook-rotate-dialog", every_impact=True)
    page.keyboard.press("Escape")
    expect(rotation).to_be_hidden()
    expect(actions).to_be_focused()

    page.keyboard.press("ArrowUp")
    expect(menu.get_by_role("menuitem", name="Delete endpoint…")).to_be_focused()
    page.keyboard.press("Enter")
    question = page.get_by_role("dialog", name="Delete endpoint")
    expect(question.get_by_role("button", name="Cancel")).to_be_focused()
    page.keyboard.press("Escape")
    expect(question).to_be_hidden()
    expect(actions).to_be_focused()
    with dashboard.client(account) as http:
        assert http.get(f"/webhooks/{hook['id']}").json()["data"]["version"] == hook["version"]   # neither rotated nor deleted
    assert page.problems == []


def test_an_agents_page_deletes_it_through_its_actions_menu(page, dashboard):
    account = dashboard.new_account()
    with dashboard.client(account) as http:
        agent = http.post("/agents", json={"name": "Helper", "systemPrompt": "You help."}).json()["data"]
    dashboard.sign_in(page, account, f"/agents/{agent['id']}")
    expect(page.get_by_role("heading", name="Helper", level=1)).to_be_visible()
    check_page(page, "agent", every_impact=True)
    head = page.locator("main .page-head")
    actions = head.get_by_role("button", name="Actions for Helper")
    actions.click()
    expect(page.get_by_role("menuitem")).to_have_text(["Delete…"])   # no Open: this is its page
    page.get_by_role("menuitem", name="Delete…").click()
    question = page.get_by_role("dialog", name="Delete")
    expect(question).to_contain_text("Delete the agent Helper?")
    question.get_by_role("button", name="Cancel").click()
    expect(actions).to_be_focused()
    with dashboard.client(account) as http:
        assert http.get(f"/agents/{agent['id']}").status_code == 200

    row_action(page, head, "Delete…")
    page.get_by_role("dialog", name="Delete").get_by_role("button", name="Delete").click()
    expect(toast(page, "Agent Helper deleted.")).to_be_visible()
    expect(page.get_by_text("No agents yet")).to_be_visible()
    with dashboard.client(account) as http:
        assert http.get(f"/agents/{agent['id']}").status_code == 404
    assert page.problems == []
