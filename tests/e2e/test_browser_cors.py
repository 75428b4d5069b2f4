"""A front-end on another origin, in headless Chromium: a page served by a small HTTP server on its own
loopback port calls the local stack's gateway with fetch(..., {credentials: "include"}) and reads a
chat answer with EventSource({withCredentials: true}), as a single-page app on its dev server does.

The page's origin is added to the running stack's AllowedOrigins for these tests (LocalStack.allow_origins,
what `scripts/dev --allow-origin` sets at start); the same page from an origin that is not allowed is
refused by the browser. The refresh cookie (SameSite=Strict, Path=/api/v1/auth) travels from a page on
the same site as the API (127.0.0.1:<port> to 127.0.0.1:<gateway>: another origin, the same site), and
not from another site (localhost:<port> to 127.0.0.1): there the page refreshes with the body's token.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from tests.e2e.test_browser_login import PASSWORD

pytestmark = pytest.mark.long_running   # minutes long: its test process starts with it (tests/conftest.py)

PAGE = """<!doctype html><meta charset="utf-8"><title>front-end</title>
<script>
const API = API_BASE + "/api/v1";
async function call(method, path, {token, body} = {}) {
  const headers = {};
  if (token) headers["Authorization"] = "Bearer " + token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const answer = await fetch(API + path, {method, headers, credentials: "include",
                                          body: body === undefined ? undefined : JSON.stringify(body)});
  const text = await answer.text();
  return {status: answer.status, json: text ? JSON.parse(text) : null,
          requestId: answer.headers.get("X-Request-Id"),
          remaining: answer.headers.get("X-RateLimit-Remaining")};
}
window.run = async (email, password) => {
  const out = {};
  const login = await call("POST", "/auth/login", {body: {email, password}});
  out.login = login.status;
  let pair = login.json.data;
  out.me = (await call("GET", "/auth/me", {token: pair.accessToken})).json.data.user.email;
  // The refresh cookie first (no token in the body); where it does not travel, the body's token.
  const byCookie = await call("POST", "/auth/refresh", {body: {}});
  out.cookieRefresh = byCookie.status;
  if (byCookie.status === 200) {
    pair = byCookie.json.data;
  } else {
    const byBody = await call("POST", "/auth/refresh", {body: {refreshToken: pair.refreshToken}});
    out.bodyRefresh = byBody.status;
    pair = byBody.json.data;
  }
  const listed = await call("GET", "/projects", {token: pair.accessToken});
  out.projects = listed.status;
  out.requestId = listed.requestId;
  out.remaining = listed.remaining;
  const session = (await call("POST", "/chat/sessions", {token: pair.accessToken, body: {title: "CORS"}})).json.data;
  const issued = await call("POST", `/chat/sessions/${session.id}/stream-token`, {token: pair.accessToken});
  out.streamToken = issued.status;
  out.sent = (await call("POST", `/chat/sessions/${session.id}/messages`,
                         {token: pair.accessToken, body: {content: "Hello from another origin."}})).status;
  out.events = await new Promise((resolve) => {
    const seen = [];
    const source = new EventSource(issued.json.data.streamUrl, {withCredentials: true});
    source.addEventListener("content_delta", (e) => seen.push(JSON.parse(e.data).text));
    source.addEventListener("done", () => { source.close(); resolve(seen); });
    source.onerror = () => { source.close(); resolve(seen.concat(["<error>"])); };
  });
  return out;
};
window.tryLogin = async (email, password) => {
  try {
    await call("POST", "/auth/login", {body: {email, password}});
    return "answered";
  } catch (error) {
    return error.name + ": " + error.message;  // the browser refused to give the page the answer
  }
};
</script>"""


@contextlib.contextmanager
def serve_page(html: str):
    """The page on its own loopback port: another origin than the gateway's."""
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            body = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def front_end(local_stack):
    """Three servers of the page: two allowed origins (the API's site and another site), one not."""
    html = PAGE.replace("API_BASE", f'"{local_stack.base_url}"')
    before = local_stack.parameters["AllowedOrigins"]
    with serve_page(html) as same_site, serve_page(html) as other_site, serve_page(html) as refused:
        origins = {"same_site": f"http://127.0.0.1:{same_site}", "other_site": f"http://localhost:{other_site}",
                   "refused": f"http://127.0.0.1:{refused}"}
        local_stack.allow_origins([*before.split(","), origins["same_site"], origins["other_site"]])
        try:
            yield origins
        finally:
            local_stack.allow_origins(before.split(","))


@pytest.fixture
def email(local_stack):
    address = f"cors-{secrets.token_hex(4)}@example.com"
    with httpx.Client(base_url=local_stack.base_url, timeout=10) as http:
        made = http.post("/api/v1/auth/register", json={"email": address, "password": PASSWORD, "name": "Ada"})
    assert made.status_code == 201, made.text
    return address


def test_a_page_on_an_allowed_origin_signs_in_refreshes_by_cookie_lists_and_streams(page, front_end, email):
    page.goto(front_end["same_site"] + "/app.html")
    out = page.evaluate("([e, p]) => window.run(e, p)", [email, PASSWORD])
    assert out["login"] == 200 and out["me"] == email
    assert out["cookieRefresh"] == 200, out  # same site: the SameSite=Strict cookie travels
    assert out["projects"] == 200 and out["requestId"] and out["remaining"] is not None  # exposed headers
    assert out["streamToken"] == 201 and out["sent"] == 202
    assert out["events"] and "<error>" not in out["events"], out
    assert "".join(out["events"]).startswith("[offline model]")
    assert page.problems == []


def test_a_page_on_another_allowed_site_refreshes_with_the_body_token(page, front_end, email):
    page.goto(front_end["other_site"] + "/app.html")
    out = page.evaluate("([e, p]) => window.run(e, p)", [email, PASSWORD])
    assert out["login"] == 200 and out["me"] == email
    assert out["cookieRefresh"] == 401 and out["bodyRefresh"] == 200, out  # the cookie stays on its site
    assert out["projects"] == 200 and out["events"] and "<error>" not in out["events"], out


def test_a_page_on_an_origin_not_allowed_is_refused_by_the_browser(page, front_end, email):
    page.goto(front_end["refused"] + "/app.html")
    refused = page.evaluate("([e, p]) => window.tryLogin(e, p)", [email, PASSWORD])
    assert refused.startswith("TypeError"), refused  # fetch rejects: the page never sees the answer
    page.problems.clear()  # the browser's console note on the CORS refusal is what this test expects
