"""Build → Projects, Agents (a run's approval and timeline) and Chat (a streamed answer), in Chromium.

The offline model asks for a tool when the goal asks for something a tool does ("write" → write_file,
docs/models-and-metering.md); a supervised agent's run then waits for approval of that call
(docs/agents-and-runs.md), which is what these tests approve, reject and cancel through the pages."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.support.dashboard import check_page, open_dialog, row_action


@pytest.fixture
def api(dashboard):
    """An httpx client of the account's owner, to read back what the pages stored."""
    return dashboard.client


def test_projects_create_edit_and_delete(page, dashboard, api):
    account = dashboard.new_account()
    dashboard.sign_in(page, account, "/projects")
    expect(page.get_by_role("heading", name="Projects", exact=True)).to_be_visible()
    expect(page.get_by_text("No projects yet")).to_be_visible()

    form = open_dialog(page, "Create project", "Create a project")
    form.get_by_label("Name").fill("Docs site")
    form.get_by_label("Language").fill("TypeScript")
    form.get_by_label("Description").fill("The service's documentation")
    form.get_by_role("button", name="Create project").click()
    row = page.get_by_role("row", name=re.compile("Docs site"))
    expect(row).to_contain_text("TypeScript")
    with api(account) as http:
        [stored] = http.get("/projects").json()["data"]["items"]
    assert (stored["name"], stored["language"], stored["description"]) == \
        ("Docs site", "TypeScript", "The service's documentation")
    check_page(page, "projects", every_impact=True)

    row_action(page, row, "Edit")
    edit = page.get_by_role("form", name="Edit Docs site")
    edit.get_by_label("Name").fill("Docs")
    edit.get_by_label("Language").fill("")           # cleared: no language
    edit.get_by_role("button", name="Save").click()
    row = page.get_by_role("row", name=re.compile("Docs"))
    expect(row).to_contain_text("—")
    with api(account) as http:
        updated = http.get(f"/projects/{stored['id']}").json()["data"]
    assert (updated["name"], updated["language"], updated["description"]) == \
        ("Docs", None, "The service's documentation")

    # deleting asks first; cancel keeps it
    row_action(page, row, "Delete…")
    page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
    expect(row).to_be_visible()
    _delete_confirmed(page, "Docs", "No projects yet")
    with api(account) as http:
        assert http.get(f"/projects/{stored['id']}").status_code == 404
    assert page.problems == []


def _delete_confirmed(page, row_name: str, then_empty: str) -> None:
    """Delete the row through its button and the dialog that asks first; the list is empty after."""
    row = page.get_by_role("row", name=re.compile(row_name))
    row_action(page, row, "Delete…")
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(page.get_by_text(then_empty)).to_be_visible()


def _run_until_waiting(page, goal: str) -> str:
    """Run the agent of the page on the goal; wait for the run's page to show the held call; its id."""
    runner = page.get_by_role("region", name="Run the agent")
    runner.get_by_label("Goal").fill(goal)
    runner.get_by_role("button", name="Run").click()
    approval = page.get_by_role("region", name="Waiting for your approval")
    expect(approval).to_be_visible(timeout=30_000)
    expect(approval).to_contain_text("write_file")
    expect(approval).to_contain_text("notes.md")
    return page.url.rsplit("/", 1)[1]


def test_an_agent_run_waits_for_approval_is_approved_rejected_and_cancelled(page, dashboard, api):
    account = dashboard.new_account()
    with api(account) as http:
        project = http.post("/projects", json={"name": "Release", "language": "Python"}).json()["data"]
    dashboard.sign_in(page, account, "/agents")
    expect(page.get_by_text("No agents yet")).to_be_visible()
    check_page(page, "agents", every_impact=True)

    form = open_dialog(page, "Create agent", "Create an agent")
    form.get_by_label("Name").fill("Notes writer")
    form.get_by_label("System prompt").fill("You write release notes.")
    form.get_by_label("Autonomy").select_option("supervised")
    form.get_by_label("Step limit").fill("4")
    form.get_by_label("read_secret").uncheck()
    form.get_by_role("button", name="Create agent").click()
    expect(page.get_by_role("heading", name="Notes writer")).to_be_visible()
    agent_id = page.url.rsplit("/", 1)[1]
    with api(account) as http:
        agent = http.get(f"/agents/{agent_id}").json()["data"]
    assert agent["config"] == {"autonomyLevel": "supervised", "model": None, "stepLimit": 4,
                               "tools": ["read_project", "list_files", "read_file", "write_file"]}
    assert agent["systemPrompt"] == "You write release notes."
    expect(page.get_by_text("No runs yet")).to_be_visible()
    check_page(page, "agent")

    # 1. approved: the held write runs, the model answers, the run completes
    run_id = _run_until_waiting(page, "Write notes.md with the release notes")
    expect(page.locator(".step.waiting")).to_contain_text("awaiting approval")
    check_page(page, "run-waiting")
    page.get_by_role("button", name="Approve").click()
    expect(page.locator("dl.facts .badge")).to_have_text("completed", timeout=30_000)
    steps = page.get_by_role("list", name="Timeline").get_by_role("listitem")
    expect(steps).to_have_count(3)
    expect(steps.nth(0)).to_contain_text("The model asked for tools")
    expect(steps.nth(1)).to_contain_text("write_file")
    expect(steps.nth(1)).to_contain_text("success")
    expect(steps.nth(1)).to_contain_text("approved by you")
    expect(steps.nth(2)).to_contain_text("The model answered")
    expect(steps.nth(2)).to_contain_text("[offline model] Done. write_file returned")
    expect(page.get_by_role("region", name="Waiting for your approval")).to_have_count(0)
    check_page(page, "run-completed")
    with api(account) as http:
        run = http.get(f"/agents/{agent_id}/runs/{run_id}").json()["data"]
    assert (run["status"], run["projectId"], run["goal"]) == \
        ("completed", project["id"], "Write notes.md with the release notes")
    assert [s.get("status") for s in run["steps"]] == [None, "success", None]
    assert run["steps"][1]["approval"]["decision"] == "approved"
    assert run["steps"][1]["approval"]["by"] == account.user_id

    # 2. rejected with a reason: the model is told, the run still completes, the call never ran
    page.get_by_role("link", name="← The agent").click()
    second = _run_until_waiting(page, "Write notes.md with the changes of this week")
    page.get_by_role("button", name="Reject…").click()
    page.get_by_label("Reason").fill("not before the release")
    page.get_by_role("button", name="Reject the call").click()
    expect(page.locator("dl.facts .badge")).to_have_text("completed", timeout=30_000)
    rejected = page.get_by_role("list", name="Timeline").get_by_role("listitem").nth(1)
    expect(rejected).to_contain_text("rejected")
    expect(rejected).to_contain_text("not before the release")
    with api(account) as http:
        run = http.get(f"/agents/{agent_id}/runs/{second}").json()["data"]
    assert run["status"] == "completed"
    assert run["steps"][1]["status"] == "rejected"
    assert run["steps"][1]["approval"]["reason"] == "not before the release"
    assert "rejected by the user: not before the release" in run["steps"][1]["result"]

    # 3. cancelled while it waits (asked first)
    page.get_by_role("link", name="← The agent").click()
    third = _run_until_waiting(page, "Write notes.md for the next release")
    page.get_by_role("button", name="Cancel run").click()
    page.get_by_role("dialog").get_by_role("button", name="Cancel run").click()
    expect(page.locator("dl.facts .badge")).to_have_text("cancelled")
    expect(page.get_by_role("button", name="Approve")).to_have_count(0)
    with api(account) as http:
        assert http.get(f"/agents/{agent_id}/runs/{third}").json()["data"]["status"] == "cancelled"

    # the agent's page lists the three runs with their statuses
    page.get_by_role("link", name="← The agent").click()
    runs = page.get_by_role("table").get_by_role("row")
    expect(runs).to_have_count(4)   # the head and three runs
    expect(page.get_by_role("row", name=re.compile("next release"))).to_contain_text("cancelled")

    # deleting the agent asks first
    page.get_by_role("link", name="← Agents").click()
    _delete_confirmed(page, "Notes writer", "No agents yet")
    with api(account) as http:
        assert http.get(f"/agents/{agent_id}").status_code == 404
    assert page.problems == []


# Each time the streamed answer's text changes, its new text is kept (a MutationObserver in the page).
RECORD_ANSWER = """() => {
    window.answerTexts = [];
    new MutationObserver(() => {
        const live = document.querySelector('[data-testid="streaming-answer"]');
        const text = live ? live.textContent : null;
        if (text && text !== window.answerTexts[window.answerTexts.length - 1]) window.answerTexts.push(text);
    }).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def test_chat_answer_streams_in_and_is_stored(page, dashboard, api):
    account = dashboard.new_account()
    dashboard.sign_in(page, account, "/chat")
    expect(page.get_by_text("No sessions yet")).to_be_visible()
    form = open_dialog(page, "Start session", "Start a session")
    form.get_by_label("Title").fill("First steps")
    form.get_by_role("button", name="Start session").click()
    expect(page.get_by_role("heading", name="First steps")).to_be_visible()
    session_id = page.url.rsplit("/", 1)[1]
    expect(page.get_by_text("No messages yet")).to_be_visible()

    page.evaluate(RECORD_ANSWER)
    question = "Tell me how the service bills a chat turn, in a few words please"
    page.get_by_label("Message").fill(question)
    page.get_by_role("button", name="Send").click()
    answer = page.locator(".message.assistant").last
    expect(answer).to_contain_text("[offline model]", timeout=30_000)
    expect(page.get_by_role("button", name="Send")).to_be_enabled(timeout=30_000)   # the turn is done
    expect(answer).to_contain_text("credits")   # its usage

    with api(account) as http:
        stored = http.get(f"/chat/sessions/{session_id}/messages").json()["data"]["items"]
    assert [m["role"] for m in stored] == ["user", "assistant"]
    assert stored[0]["content"] == question
    final = stored[1]["content"]
    assert final.startswith("[offline model]") and stored[1]["status"] == "completed"
    expect(answer.locator(".message-text")).to_have_text(final)
    # the page showed the answer as it grew: texts that are shorter beginnings of the final one
    texts = page.evaluate("window.answerTexts")
    assert texts, "the streamed answer was never shown"
    assert all(final.startswith(text) for text in texts), texts
    assert any(len(text) < len(final) for text in texts), texts
    check_page(page, "chat-session")

    page.get_by_role("link", name="← Chat").click()
    expect(page.get_by_role("row", name=re.compile("First steps"))).to_be_visible()
    check_page(page, "chat", every_impact=True)
    _delete_confirmed(page, "First steps", "No sessions yet")
    with api(account) as http:
        assert http.get(f"/chat/sessions/{session_id}").status_code == 404
    assert page.problems == []


def test_chat_with_an_agent_on_a_project_shows_the_tools_it_used(page, dashboard, api):
    account = dashboard.new_account()
    with api(account) as http:
        project = http.post("/projects", json={"name": "Site"}).json()["data"]
        agent = http.post("/agents", json={"name": "Helper", "systemPrompt": "You help."}).json()["data"]
    dashboard.sign_in(page, account, "/chat")
    form = open_dialog(page, "Start session", "Start a session")
    form.get_by_label("Project").select_option(label="Site")
    form.get_by_label("Agent").select_option(label="Helper")
    form.get_by_role("button", name="Start session").click()
    expect(page.get_by_text("No messages yet")).to_be_visible()
    expect(page.get_by_role("main")).to_contain_text("Agent: Helper. Project: Site.")
    session_id = page.url.rsplit("/", 1)[1]
    with api(account) as http:
        session = http.get(f"/chat/sessions/{session_id}").json()["data"]
    assert (session["projectId"], session["agentId"], session["title"]) == (project["id"], agent["id"], None)

    page.get_by_label("Message").fill("list the files of the project")
    page.get_by_role("button", name="Send").click()
    expect(page.get_by_role("button", name="Send")).to_be_enabled(timeout=30_000)
    answer = page.locator(".message.assistant").last
    tool = answer.locator("details.tool-use")
    expect(tool).to_contain_text("list_files")
    expect(tool).to_contain_text("success")
    with api(account) as http:
        [_, stored] = http.get(f"/chat/sessions/{session_id}/messages").json()["data"]["items"]
    expect(answer.locator(".message-text")).to_have_text(stored["content"])
    assert "list_files returned" in stored["content"]
    tool.locator("summary").click()   # its input and result open
    expect(tool).to_contain_text('"files"')
    check_page(page, "chat-agent-session")
    assert page.problems == []
