"""The TypeScript client in headless Chromium, from another origin than the API (the local stack's
CORS allows the page's origin): sign in, list, create, stream a chat answer across a dropped
connection, refresh before expiry, and onUnauthorized after logout; the access token never reaches
the page's storage or cookies. The bundle is the package's own, built by its esbuild."""

from __future__ import annotations

import subprocess
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler

import pytest

from devstack.bootstrap import bootstrap
from devstack.loopback_server import LoopbackHTTPServer
from devstack.stack import LocalStack
from tests.support.dropping_proxy import DroppingProxy
from tests.support.typescript import PACKAGE, npx

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


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The page and the bundle, served from http://localhost:PORT (another site than 127.0.0.1)."""
    root = tmp_path_factory.mktemp("site")
    subprocess.run(npx("esbuild", "src/index.ts", "--bundle", "--format=esm", "--platform=browser",
                       "--target=es2022", f"--outfile={root / 'client.js'}"), cwd=PACKAGE, check=True,
                   capture_output=True)
    (root / "index.html").write_text(PAGE)
    handler = partial(SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None
    server = LoopbackHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://localhost:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def cross_origin_stack(site, tmp_path_factory):
    stack = LocalStack(port=0, log=lambda _m: None, containers=2,
                       parameters={"LogLevel": "ERROR", "AllowedOrigins": site})
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
