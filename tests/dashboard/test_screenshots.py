"""Every page of the dashboard as a person sees it: at a laptop's size (1280x800) and a phone's
(390x844), each page's full-page screenshot matches its reviewed baseline
(tests/dashboard/screenshots/<page>-<width>.png) within the tolerance of tests/support/screenshots.py,
and axe-core finds no violation of any impact on it.

The pages are the places of dashboard/src/places.ts (PLACES, signed in, and SIGNED_OUT, the pages before
a sign-in): a new place fails here until it has its baselines, and a place that needs an object (an
agent, a run, a session, a webhook, an event, an invitation, a command-line login, a reset link) until
world() makes one and names its route.

Deterministic, so that a difference is a change of the dashboard: one fresh tenant with the same
data made the same way each run (fixed names and addresses); the service's clock stopped at
SERVICE_TIME while this file runs (every stored time, the charts' days included, is that moment) and
the page's clock fixed two minutes later (Playwright's clock: "2 minutes ago" everywhere); the time
zone UTC, the locale en-US, the machine's own fonts, animations and the caret off. What stays random
(ids, key hints, the stack's ports, the login's code) is written over before the picture is taken
(NORMALISED) or masked (MASKED).

Review a change: a failing page writes .artifacts/screenshots/<page>-<width>.diff.png (the baseline,
the difference in red, the new picture) and the new picture beside it. Accept it:
    UPDATE_SCREENSHOTS=1 scripts/test tests/dashboard/test_screenshots.py
which rewrites only the baselines that differ beyond the tolerance (and removes those of pages that
are gone); commit the PNGs with the change that made them.
"""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import expect

from tests.support import mailbox
from tests.support import screenshots as pixels
from tests.support.dashboard import ROOT, axe_violations
from tests.support.waiting import waited

pytestmark = pytest.mark.long_running   # some 44 pictures and axe runs: a few minutes on a busy machine

PLACES_TS = ROOT / "dashboard" / "src" / "places.ts"
BASELINES = Path(__file__).resolve().parent / "screenshots"
DIFFS = Path(os.environ.get("ARTIFACTS_DIR", ROOT / ".artifacts")) / "screenshots"
UPDATE = os.environ.get("UPDATE_SCREENSHOTS") == "1"
SIZES = {1280: {"width": 1280, "height": 800}, 390: {"width": 390, "height": 844}}
# In the future: DynamoDB Local deletes an item once its ttl has passed by the machine's clock, so a
# stopped clock in the past would see its events and sessions vanish under the test.
SERVICE_TIME = datetime(2036, 3, 3, 9, 0, tzinfo=UTC)
PAGE_TIME = SERVICE_TIME + timedelta(minutes=2)
READY_MS = 30_000   # a page's reads on a busy machine: waited for, never timed
OWNER = "owner@acme.example"
INVITEE = "ada@acme.example"


def places_of(group: str) -> dict[str, dict[str, str]]:
    """One list of places.ts (PLACES, SIGNED_OUT), by name: {path, title}, in its order."""
    source = PLACES_TS.read_text()
    start = source.index(f"export const {group} = {{")
    listed = source[start:source.index("} as const", start)]
    found = re.findall(r'^\s*(\w+): \{ path: "([^"]+)", title: "([^"]+)"', listed, re.M)
    assert len(found) == listed.count("{ path: "), "a place of places.ts is written in a shape this test does not read"
    return {name: {"path": path, "title": title} for name, path, title in found}


def places() -> dict[str, dict[str, str]]:
    """The signed-in places and the pages before a sign-in, by name."""
    return {**places_of("SIGNED_OUT"), **places_of("PLACES")}


SIGNED_OUT = set(places_of("SIGNED_OUT"))


def file_name(place: str) -> str:
    """apiKeys -> api-keys."""
    return re.sub(r"(?<=[a-z])([A-Z])", r"-\1", place).lower()


PAGES = list(places())
VIEWS = [(page, width) for width in SIZES for page in PAGES]


def baseline(page: str, width: int) -> Path:
    return BASELINES / f"{file_name(page)}-{width}.png"


# What stays random from run to run, written over in the page's text (and fields) before a picture:
# ids, whole (prefix_ and a ULID) or shortened (format.ts's shortId), the request ids (UUIDs, shortened
# too), a key's hint (its last 4 characters); and the ports of this run's stack (ported()).
NORMALISED = [
    (r"\b([a-z]{2,6})_[0-7][0-9A-HJKMNP-TV-Z]{25}\b", "$1_00000000000000000000000000"),
    (r"\b([a-z]{2,6}_)[0-9A-HJKMNP-TV-Z]{4}…[0-9A-HJKMNP-TV-Z]{3}\b", "$10000…000"),
    (r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "00000000-0000-0000-0000-000000000000"),
    (r"\b[0-9a-f]{4}…[0-9a-f]{3}\b", "0000…000"),
    (r"\b(svc_[a-z]+_)\.\.\.[A-Za-z0-9_-]{4}", "$1...0000"),
]


def ported(dashboard) -> list[tuple[str, str]]:
    """The API's and the dashboard's addresses as the local stack's defaults (3000, 5173)."""
    return [*NORMALISED, (re.escape(dashboard.stack.base_url), "http://127.0.0.1:3000"),
            (re.escape(dashboard.url), "http://127.0.0.1:5173")]


MASKED = [".code"]   # the command-line login's verification code
NORMALISE = """(rules) => {
    const replace = (text) => rules.reduce((t, [pattern, to]) => t.replace(new RegExp(pattern, "g"), to), text);
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = replace(node.nodeValue);
        if (text !== node.nodeValue) node.nodeValue = text;
    }
    for (const field of document.querySelectorAll("input, textarea")) {
        const text = replace(field.value);
        if (text !== field.value) field.value = text;
    }
}"""
SETTLED = """() => document.fonts.ready.then(() => new Promise((done) =>
    requestAnimationFrame(() => requestAnimationFrame(done))))"""


@dataclass
class World:
    """The tenant the pages show, and the route of each place that needs an object."""
    account: object
    routes: dict[str, str] = field(default_factory=dict)


@pytest.fixture(scope="module")
def service_clock():
    """The service's clock (svc_core.platform.timeutil) stopped at SERVICE_TIME while this file runs:
    every time the service stores or answers is that moment, whenever the test runs. New ids (ULIDs,
    whose order is their time's) are made a millisecond apart from that moment on, so things made at
    the one moment keep the order they were made in (a log lists them so), not their random part's."""
    from svc_core.platform import ids, timeutil
    made_ms = [int(SERVICE_TIME.timestamp() * 1000)]
    lock = threading.Lock()

    def ulid_in_order(now_ms: int | None = None) -> str:
        with lock:
            made_ms[0] = max(made_ms[0] + 1, now_ms or 0)
            return ids.ulid_text((made_ms[0] << 80) | int.from_bytes(os.urandom(10), "big"))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(timeutil, "now", lambda: SERVICE_TIME.timestamp())
        patch.setattr(ids, "new_ulid", ulid_in_order)
        yield


def start_cli_login(dashboard) -> dict:
    import base64
    import hashlib
    verifier = "v" * 64   # no key is taken with it: the login is only shown
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    started = httpx.post(f"{dashboard.api}/cli/auth/start", json={
        "state": "0" * 64, "codeChallenge": challenge, "codeChallengeMethod": "S256",
        "cliVersion": "1.4.2", "platform": "linux-x86_64"})
    assert started.status_code == 201, started.text
    return started.json()["data"]


def settled(stack) -> None:
    """Until the stack's pollers have nothing waiting and two looks a moment apart agree."""
    def look():
        return [(p["source"], p["processed"], p["oldestUnprocessedAgeSeconds"], p.get("messagesWaiting"))
                for p in stack.status()["pollers"]]

    def idle(state) -> bool:
        return all(age is None and not waiting for _, _, age, waiting in state)

    previous = None
    for _ in range(600):
        state = look()
        if idle(state) and state == previous:
            return
        previous = state
        time.sleep(0.2)
    raise AssertionError(f"the stack's pollers did not settle: {state}")


def made(answer: httpx.Response) -> dict:
    assert answer.status_code in (200, 201, 202), answer.text
    return answer.json()["data"]


@pytest.fixture(scope="module")
def world(dashboard, service_clock) -> World:
    """One fresh tenant on the free plan, made the same way each run: a project, two agents (one
    supervised, whose run waits for an approval, and one whose run completed), a chat session with
    one answered question, an API key, a webhook endpoint, an invitation and a pending command-line
    login; and a reset link's address (its page reads the token only when the form is sent)."""
    account = dashboard.new_account(name="Acme", email=OWNER)
    world = World(account=account)
    with dashboard.client(account) as api:
        project = made(api.post("/projects", json={"name": "Apollo", "language": "python"}))
        helper = made(api.post("/agents", json={"name": "Helper", "systemPrompt": "You help."}))
        made(api.post(f"/agents/{helper['id']}/execute", json={"goal": "Say hello.", "projectId": project["id"]}))
        writer = made(api.post("/agents", json={"name": "Notes writer", "systemPrompt": "You write release notes.",
                                                "config": {"autonomyLevel": "supervised"}}))
        run = made(api.post(f"/agents/{writer['id']}/execute",
                            json={"goal": "Write notes.md with the release notes", "projectId": project["id"]}))
        assert run["status"] == "awaiting_approval", run
        session = made(api.post("/chat/sessions", json={"title": "Release questions"}))
        made(api.post(f"/chat/sessions/{session['id']}/messages", json={"content": "What does a run cost?"}))
        answered = waited(lambda: api.get(f"/chat/sessions/{session['id']}/messages").json()["data"]["items"],
                          lambda items: [m["status"] for m in items] == ["completed", "completed"], timeout=120)
        assert [m["status"] for m in answered] == ["completed", "completed"], answered
        made(api.post("/api-keys", json={"name": "CI", "type": "sdk", "environment": "Development",
                                         "scopes": ["projects:read"]}))
        hook = made(api.post("/webhooks", json={"url": "http://127.0.0.1:9/hooks/acme", "events": ["project.created"],
                                                "description": "Release notes"}))
        made(api.post("/invitations", json={"email": INVITEE, "role": "member"}))
        # the event of the last change that makes one is in the log, and nothing is left in the pipeline
        events = waited(lambda: api.get("/events", params={"limit": 100}).json()["data"]["items"],
                        lambda items: any(e["data"].get("runId") == run["id"] for e in items), timeout=120)
        assert any(e["data"].get("runId") == run["id"] for e in events), [e["type"] for e in events]
        settled(dashboard.stack)
        created = next(e for e in api.get("/events").json()["data"]["items"] if e["type"] == "project.created")
    token = mailbox.token_of(mailbox.latest_link(to=INVITEE))
    login = start_cli_login(dashboard)
    world.routes = {
        "agent": f"/agents/{writer['id']}",
        "run": f"/agents/{writer['id']}/runs/{run['id']}",
        "chatSession": f"/chat/{session['id']}",
        "webhook": f"/webhooks/{hook['id']}",
        "event": f"/events/{created['id']}",
        "acceptInvitation": f"/invitations/accept?token={quote(token, safe='')}",
        "device": login["authUrl"].split("#", 1)[1],
        "resetPassword": f"/reset-password?token=prt_{'0' * 26}.{'A' * 43}",
    }
    return world


def route_of(place: str, world: World) -> str:
    path = places()[place]["path"]
    if place in world.routes:
        return world.routes[place]
    assert ":" not in path, (f"the place {place} ({path}) needs an object: make one in world() and name its "
                             "route there (world.routes)")
    return path


@dataclass
class Sight:
    png: bytes
    violations: list[dict]


class Views:
    """One browser context per size (the page's clock fixed, UTC, en-US, motion reduced), signed in
    once; each page seen once for both tests (its axe verdict, then its picture)."""

    def __init__(self, browser, dashboard, world: World):
        self.browser, self.dashboard, self.world = browser, dashboard, world
        self.contexts: dict[tuple[int, bool], object] = {}
        self.seen: dict[tuple[str, int], Sight] = {}
        for width in SIZES:   # both sign-ins first (the audit log lists them), whichever pages are seen
            self.tab(width, signed_in=True)

    def tab(self, width: int, signed_in: bool):
        if (width, signed_in) not in self.contexts:
            context = self.browser.new_context(viewport=SIZES[width], device_scale_factor=1, locale="en-US",
                                               timezone_id="UTC", reduced_motion="reduce", color_scheme="light")
            context.clock.set_fixed_time(PAGE_TIME)
            page = context.new_page()
            page.goto(f"{self.dashboard.url}/#/")
            if signed_in:
                account = self.world.account
                page.get_by_label("E-mail").fill(account.email)
                page.get_by_label("Password").fill(account.password)
                page.get_by_role("button", name="Sign in").click()
                page.get_by_role("button", name="Sign out").wait_for()
            self.contexts[(width, signed_in)] = context
        return self.contexts[(width, signed_in)].pages[0]

    def sight(self, name: str, width: int) -> Sight:
        if (name, width) not in self.seen:
            self.seen[(name, width)] = self._look(name, width)
        return self.seen[(name, width)]

    def _look(self, name: str, width: int) -> Sight:
        page = self.tab(width, signed_in=name not in SIGNED_OUT)
        page.goto(f"{self.dashboard.url}/#{route_of(name, self.world)}")
        expect(page).to_have_title(re.compile("^" + re.escape(places()[name]["title"]) + " · "), timeout=READY_MS)
        main = page.locator("main#main")
        expect(main.locator("h1").first).to_be_visible(timeout=READY_MS)
        expect(page.locator("[aria-busy='true']")).to_have_count(0, timeout=READY_MS)
        expect(main.get_by_role("status").filter(has_text=re.compile("^Loading"))).to_have_count(0, timeout=READY_MS)
        page.evaluate(SETTLED)
        violations = axe_violations(page)
        page.mouse.move(0, 0)
        page.evaluate("() => { document.activeElement?.blur(); window.scrollTo(0, 0); }")
        page.evaluate(NORMALISE, ported(self.dashboard))
        page.evaluate(SETTLED)
        png = page.screenshot(full_page=True, animations="disabled", caret="hide", scale="css",
                              mask=[page.locator(selector) for selector in MASKED], mask_color="#808080")
        return Sight(png=png, violations=violations)

    def close(self) -> None:
        for context in self.contexts.values():
            context.close()


@pytest.fixture(scope="module")
def views(browser, dashboard, world):
    seen = Views(browser, dashboard, world)
    yield seen
    seen.close()


@pytest.mark.parametrize(("name", "width"), VIEWS, ids=[f"{file_name(n)}-{w}" for n, w in VIEWS])
def test_the_page_looks_as_its_reviewed_baseline(views, name, width):
    wrong = pixels.check(views.sight(name, width).png, baseline(name, width), DIFFS, update=UPDATE)
    assert wrong is None, (f"{name} at {width}px: {wrong}. If the change is meant, write the new baseline with "
                           "UPDATE_SCREENSHOTS=1 scripts/test tests/dashboard/test_screenshots.py and commit it")


@pytest.mark.parametrize(("name", "width"), VIEWS, ids=[f"{file_name(n)}-{w}" for n, w in VIEWS])
def test_axe_finds_no_violation_of_any_impact(views, name, width):
    assert views.sight(name, width).violations == []


def test_every_baseline_is_of_a_page():
    """No picture of a page that is gone (UPDATE_SCREENSHOTS=1 removes them)."""
    wanted = {baseline(name, width).name for name, width in VIEWS}
    stale = sorted(p for p in BASELINES.glob("*.png") if p.name not in wanted)
    if UPDATE:
        for path in stale:
            path.unlink()
        return
    assert stale == [], f"baselines of no page: {[p.name for p in stale]}"
