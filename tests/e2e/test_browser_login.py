"""The command-line login's approval page, driven in headless Chromium over real HTTP.

Debian's chromium, launched by Playwright (its own browser download does not work here). In CI
the browser must be there (scripts/bootstrap_browser.sh installs it); elsewhere the tests skip.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time

import httpx

PASSWORD = "a long enough browser password"


def start_login(http: httpx.Client) -> dict:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    started = http.post("/api/v1/cli/auth/start", json={
        "state": secrets.token_hex(32), "codeChallenge": challenge, "codeChallengeMethod": "S256",
        "cliVersion": "2.0.1", "platform": "linux-aarch64"})
    assert started.status_code == 201, started.text
    return {**started.json()["data"], "verifier": verifier}


def poll_status(http: httpx.Client, login_id: str, until: str) -> str:
    seen = None
    for _ in range(50):
        seen = http.get("/api/v1/cli/auth/status", params={"loginId": login_id}).json()["data"]["status"]
        if seen == until:
            break
        time.sleep(0.1)
    return seen


def register(http: httpx.Client) -> str:
    email = f"browser-{secrets.token_hex(4)}@example.com"
    made = http.post("/api/v1/auth/register", json={"email": email, "password": PASSWORD, "name": "Grace"})
    assert made.status_code == 201, made.text
    return email


def test_sign_in_compare_the_code_approve_and_the_cli_gets_a_working_key(local_stack, page):
    with httpx.Client(base_url=local_stack.base_url, timeout=10) as http:
        email = register(http)
        login = start_login(http)
        # The local stack serves http://127.0.0.1:port: authUrl points there (PUBLIC_BASE_URL).
        assert login["authUrl"].startswith(local_stack.base_url + "/api/v1/cli/auth/approve?")

        response = page.goto(login["authUrl"])
        assert response.status == 200 and response.headers["content-type"].startswith("text/html")
        policy = response.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy and "default-src 'none'" in policy
        assert response.headers["cache-control"] == "no-store"

        page.wait_for_selector("#sign-in:not([hidden])")
        page.fill("#email", email)
        page.fill("#password", PASSWORD)
        page.click("#sign-in-button")
        page.wait_for_selector("#decision:not([hidden])")
        assert page.text_content("#code") == login["verificationCode"]
        assert page.text_content("#cli-version") == "2.0.1"
        assert page.text_content("#platform") == "linux-aarch64"
        assert page.text_content("#who") == email
        page.click("#approve")
        page.wait_for_selector("text=Approved.")

        assert poll_status(http, login["loginId"], "approved") == "approved"
        token = http.post("/api/v1/cli/auth/token",
                          json={"loginId": login["loginId"], "codeVerifier": login["verifier"]})
        assert token.status_code == 200, token.text
        issued = token.json()["data"]
        assert issued["token"].startswith("svc_cli_") and issued["user"]["email"] == email
        projects = http.get("/api/v1/projects", headers={"Authorization": f"Bearer {issued['token']}"})
        assert projects.status_code == 200, projects.text
    assert page.problems == []


def test_signed_in_already_the_page_skips_the_form_and_a_denial_is_final(local_stack, page):
    with httpx.Client(base_url=local_stack.base_url, timeout=10) as http:
        email = register(http)
        first, second = start_login(http), start_login(http)
        page.goto(first["authUrl"])
        page.wait_for_selector("#sign-in:not([hidden])")
        page.fill("#email", email)
        page.fill("#password", PASSWORD)
        page.click("#sign-in-button")
        page.wait_for_selector("#decision:not([hidden])")

        page.goto(second["authUrl"])  # the refresh cookie of the first sign-in is enough
        page.wait_for_selector("#decision:not([hidden])")
        assert page.is_hidden("#sign-in")
        assert page.text_content("#code") == second["verificationCode"]
        page.click("#deny")
        page.wait_for_selector("text=Denied.")

        assert poll_status(http, second["loginId"], "expired") == "expired"  # the spec's value for a denied login
        assert http.get("/api/v1/cli/auth/status", params={"loginId": second["loginId"]}).json()["data"]["reason"] \
            == "denied"
        refused = http.post("/api/v1/cli/auth/token",
                            json={"loginId": second["loginId"], "codeVerifier": second["verifier"]})
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "LOGIN_SESSION_EXPIRED"
        assert refused.json()["error"]["details"]["reason"] == "denied"
        page.reload()  # coming back shows the outcome, and no buttons
        page.wait_for_selector("text=This login was denied.")
        assert page.is_hidden("#decision")
    assert page.problems == []


def test_a_link_without_its_state_says_so_and_offers_nothing(local_stack, page):
    with httpx.Client(base_url=local_stack.base_url, timeout=10) as http:
        login = start_login(http)
    page.goto(login["authUrl"].split("#")[0])
    page.wait_for_selector("text=This address is incomplete")
    assert page.is_hidden("#sign-in") and page.is_hidden("#decision")
