"""Every internal link of every dashboard page leads to a page: starting from each page of the
navigation (dashboard/src/places.ts) and following each `#/...` link the pages show, objects
included (a project, an agent and its run, a chat session, a webhook, the events and audit entries
they made), no page is the router's "Not found" nor answers NOT_FOUND, and no file the dashboard
loads is missing (its favicon included). On the free plan, so the upsell links are shown too."""

from __future__ import annotations

import re
from collections import deque
from pathlib import Path

from playwright.sync_api import expect

PLACES = (Path(__file__).resolve().parents[2] / "dashboard" / "src" / "places.ts").read_text()
MAX_PAGES = 80


def test_every_internal_link_of_every_page_leads_to_a_page(page, dashboard):
    account = dashboard.new_account()
    with dashboard.client(account) as api:
        project = api.post("/projects", json={"name": "Linked"}).json()["data"]
        agent = api.post("/agents", json={"name": "Linker", "systemPrompt": "You help."}).json()["data"]
        run = api.post(f"/agents/{agent['id']}/execute", json={"goal": "Say hello.", "projectId": project["id"]})
        assert run.status_code in (200, 201, 202), run.text
        assert api.post("/chat/sessions", json={"title": "Linked"}).status_code == 201
        hook = api.post("/webhooks", json={"url": "http://127.0.0.1:9/hook", "events": ["project.created"]})
        assert hook.status_code == 201, hook.text
    missing: list[str] = []
    page.on("response", lambda r: r.status == 404 and r.url.startswith(dashboard.url)
            and missing.append(r.url))
    dashboard.sign_in(page, account)

    static = [p for p in re.findall(r'path: "([^"]+)"', PLACES) if ":" not in p]
    assert "/settings/billing" in static and "/audit-log" in static
    queue, seen, broken, links_of = deque(static), set(static), [], {}
    while queue:
        path = queue.popleft()
        page.goto(f"{dashboard.url}/#{path}")
        main = page.locator("main#main")
        expect(main.locator("h1").first).to_be_visible()
        expect(main.get_by_role("status").filter(has_text="Loading")).to_have_count(0)
        title = page.title()
        text = main.inner_text()
        if title.startswith("Not found") or "NOT_FOUND" in text:
            broken.append((path, title, [p for p, links in links_of.items() if path in links]))
        links = page.eval_on_selector_all("a[href^='#/']", "els => els.map((e) => e.getAttribute('href'))")
        links_of[path] = {link[1:] for link in links}
        for link in sorted(links_of[path] - seen):
            seen.add(link)
            queue.append(link)
        assert len(seen) <= MAX_PAGES, sorted(seen)
    assert broken == []
    assert missing == []
    assert any(p.startswith("/agents/") and "/runs/" in p for p in seen), sorted(seen)   # objects were reached
    assert any(p.startswith("/webhooks/") for p in seen) and any(p.startswith("/events/") for p in seen)
    assert "/settings/billing" in links_of["/settings/network"] and "/settings/billing" in links_of["/audit-log"]
    icon = page.evaluate("fetch(document.querySelector('link[rel=icon]').href).then((r) => r.status)")
    assert icon == 200
    assert page.problems == []
