"""The TypeScript client in headless Chromium, from another origin than the API (the local stack's
CORS allows the page's origin): sign in, list, create, stream a chat answer across a dropped
connection, refresh before expiry, and onUnauthorized after logout; the access token never reaches
the page's storage or cookies. From a page on the API's site (both on 127.0.0.1: the refresh cookie,
SameSite=Strict, goes with its requests) with the README's session, `exchange: (s) => s.refresh()`:
a reload keeps the session (nothing is in memory after it: the cookie restores it), and a refresh
token spent elsewhere (another tab) makes the next request throw Unauthorized and calls
`onUnauthorized`, once per request given up on. The bundle is the package's own, built by its esbuild."""

from __future__ import annotations

import pytest

from devstack.bootstrap import bootstrap
from devstack.stack import LocalStack
from tests.support.dropping_proxy import DroppingProxy
from tests.support.typescript import bundle_site

PAGE = """<!doctype html><meta charset="utf-8"><title>client</title>
<script type="module">
import { Client, Session } from "./client.js";
window.scenario = async ({ baseUrl, email, password }) => {
  let skew = 0, unauthorized = 0;
  const session = new Session({ now: () => Date.now() + skew, onUnauthorized: () => { unauthorized++; },
                                exchange: async (s) => (s.refreshToken ? await s.refresh() : null) });
  const client = new Client({ baseUrl, session });
  const grant = await session.login(email, password);
  const me = await client.me();
  const project = await client.projects.create({ name: "from the browser" });
  const listed = [];
  for await (const p of client.projects.iterate({ limit: 1 })) listed.push(p.id);
  const chat = await client.chat.createSession({ title: "browser" });
  await client.chat.send(chat.id, "Say hello.");
  let text = ""; const ids = []; const names = [];
  for await (const e of client.chat.stream(chat.id)) {
    ids.push(Number(e.id)); names.push(e.event);
    if (e.event === "content_delta") text += e.data.text;
  }
  const before = session.refreshToken;
  skew = (grant.expiresIn - 59) * 1000;          // within 60 s of the token's end: the next call refreshes first
  const afterRefresh = await client.me();
  const refreshed = session.refreshToken !== before;
  await session.logout();
  let status = null;
  try { await client.me(); } catch (e) { status = e.status; }
  const stored = JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie;
  return { email: me.user.email, project: project.id, listed, text, ids, names, refreshed,
           refreshedUser: afterRefresh.user.email, status, unauthorized, stored, token: grant.accessToken };
};
window.ready = true;
</script>"""

SAME_SITE_PAGE = """<!doctype html><meta charset="utf-8"><title>client</title>
<script type="module">
import { Client, Session, Unauthorized } from "./client.js";
let skew = 0, unauthorized = 0;
const session = new Session({ now: () => Date.now() + skew, onUnauthorized: () => { unauthorized++; },
                              exchange: (s) => s.refresh() });        // the README's browser session
let made;
const client = (baseUrl) => (made ??= new Client({ baseUrl, session }));
window.signIn = async ({ baseUrl, email, password }) => {
  await client(baseUrl).session.login(email, password);
  return (await client(baseUrl).me()).user.email;
};
window.afterReload = async ({ baseUrl }) => {
  const held = { signedIn: session.signedIn, refreshToken: session.refreshToken ?? null };
  const me = await client(baseUrl).me();            // no token in memory: the exchange's refresh sends the cookie
  return { held, email: me.user.email, signedIn: session.signedIn, unauthorized };
};
window.spentElsewhere = async ({ baseUrl, email, password }) => {
  const grant = await client(baseUrl).session.login(email, password);
  // another tab refreshes with this refresh token: spent, the one this page holds is used up
  const other = await fetch(`${baseUrl}/api/v1/auth/refresh`, {
    method: "POST", credentials: "omit", headers: { "content-type": "application/json" },
    body: JSON.stringify({ refreshToken: grant.refreshToken }) });
  skew = grant.expiresIn * 1000;                    // this page's access token has expired
  const outcomes = [];
  for (let i = 0; i < 2; i++) {
    try { await client(baseUrl).me(); outcomes.push("answered"); }
    catch (e) { outcomes.push(e instanceof Unauthorized ? `Unauthorized ${e.status}` : String(e)); }
  }
  return { other: other.status, outcomes, unauthorized };
};
window.ready = true;
</script>"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The page and the bundle, served from http://localhost:PORT (another site than 127.0.0.1)."""
    with bundle_site(tmp_path_factory.mktemp("site"), PAGE, "localhost") as url:
        yield url


@pytest.fixture(scope="module")
def same_site(tmp_path_factory):
    """The session's page and the bundle, served from http://127.0.0.1:PORT (the API's site)."""
    with bundle_site(tmp_path_factory.mktemp("same-site"), SAME_SITE_PAGE, "127.0.0.1") as url:
        yield url


@pytest.fixture(scope="module")
def cross_origin_stack(site, same_site, tmp_path_factory):
    stack = LocalStack(port=0, log=lambda _m: None, containers=2,
                       parameters={"LogLevel": "ERROR", "AllowedOrigins": f"{site},{same_site}"})
    stack.start()
    stack.credentials = bootstrap(stack.base_url, tmp_path_factory.mktemp("creds") / "dev-credentials.json")
    proxy = DroppingProxy(stack.base_url).start()
    yield stack, proxy
    proxy.stop()
    stack.stop()


def test_the_client_in_chromium_from_another_origin(page, site, cross_origin_stack):
    stack, proxy = cross_origin_stack
    page.goto(f"{site}/index.html")
    page.wait_for_function("window.ready === true")
    user = stack.credentials["user"]
    result = page.evaluate("(config) => window.scenario(config)",
                           {"baseUrl": proxy.url, "email": user["email"], "password": user["password"]})
    assert page.problems == []
    assert result["email"] == user["email"] and result["project"] in result["listed"]
    # the answer whole across the dropped connection: every event once, in order, resumed after the last seen
    assert "[offline model]" in result["text"] and result["names"][-1] == "done"
    assert result["ids"] == sorted(set(result["ids"])), result["ids"]
    assert len(proxy.streams) == 2 and proxy.streams[1]["lastEventId"] == str(result["ids"][1]), proxy.streams
    assert result["refreshed"] and result["refreshedUser"] == user["email"]
    assert result["status"] == 401 and result["unauthorized"] == 1
    assert result["token"] not in result["stored"] and result["stored"] == "{}{}"


def _open(page, site):
    page.goto(f"{site}/index.html")
    page.wait_for_function("window.ready === true")


def test_a_reload_keeps_the_session_through_the_refresh_cookie(page, same_site, cross_origin_stack):
    user = cross_origin_stack[0].credentials["user"]
    config = {"baseUrl": cross_origin_stack[0].base_url, "email": user["email"], "password": user["password"]}
    _open(page, same_site)
    assert page.evaluate("(c) => window.signIn(c)", config) == user["email"]
    page.reload()
    page.wait_for_function("window.ready === true")
    result = page.evaluate("(c) => window.afterReload(c)", config)
    # nothing survived in memory (so `s.refreshToken ? s.refresh() : null` could not restore it) ...
    assert result["held"] == {"signedIn": False, "refreshToken": None}
    # ... and the exchange's refresh, with the cookie, did
    assert result["email"] == user["email"] and result["signedIn"] and result["unauthorized"] == 0
    assert page.problems == []


def test_a_refresh_token_spent_elsewhere_calls_on_unauthorized(page, same_site, cross_origin_stack):
    user = cross_origin_stack[0].credentials["user"]
    config = {"baseUrl": cross_origin_stack[0].base_url, "email": user["email"], "password": user["password"]}
    _open(page, same_site)
    result = page.evaluate("(c) => window.spentElsewhere(c)", config)
    assert result["other"] == 200
    assert result["outcomes"] == ["Unauthorized 401", "Unauthorized 401"]
    assert result["unauthorized"] == 2
