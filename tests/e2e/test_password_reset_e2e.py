"""A forgotten password on the local stack over real HTTP: the request, the e-mail read from the local
mailbox, the token taken from its link, the new password set on the API's own reset page in headless
Chromium (the page the link opens when the deployment names no dashboard), and the sign-in with it;
the old password, refresh token and access token no longer work, and the link works once."""

from __future__ import annotations

import httpx

from svc_core.platform import ids
from tests.support import mailbox

PASSWORD = "the password that was forgotten"
NEW_PASSWORD = "the password set from the mail"


def test_forgot_the_mail_its_link_the_reset_page_and_a_sign_in_with_the_new_password(local_stack, page):
    email = f"forgetful-{ids.new_ulid().lower()}@example.com"
    with httpx.Client(base_url=local_stack.base_url, timeout=30) as http:
        made = http.post("/api/v1/auth/register", json={"email": email, "password": PASSWORD, "name": "Fay"})
        assert made.status_code == 201, made.text
        before = http.post("/api/v1/auth/login", json={"email": email, "password": PASSWORD}).json()["data"]

        asked = http.post("/api/v1/auth/password/forgot", json={"email": email})
        assert asked.status_code == 202 and asked.json()["data"] == {"email": email, "expiresIn": 1800}
        stranger = f"nobody-{ids.new_ulid().lower()}@example.com"
        assert http.post("/api/v1/auth/password/forgot", json={"email": stranger}).json()["data"]["expiresIn"] == 1800

        # The mail: in the mailbox's page and the tests' helper, for the address alone.
        shown = http.get("/_local/mailbox", params={"to": email})
        link = mailbox.latest_link(to=email)
        assert link.startswith(local_stack.base_url + "/api/v1/auth/password/reset-page#token=prt_"), link
        assert link in shown.text and mailbox.messages(to=stranger) == []
        token = mailbox.token_of(link)
        assert token not in asked.text

        # The page the link opens: the token read from the fragment and taken out of the address bar.
        response = page.goto(link)
        assert response.status == 200 and response.headers["content-type"].startswith("text/html")
        policy = response.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
        page.wait_for_selector("#reset:not([hidden])")
        assert "token" not in page.url
        page.fill("#password", NEW_PASSWORD)
        page.fill("#repeat", NEW_PASSWORD + " typo")
        page.click("#reset-button")
        page.wait_for_selector("#message.error")
        assert "differ" in page.text_content("#message")
        page.fill("#repeat", NEW_PASSWORD)
        page.click("#reset-button")
        page.wait_for_selector("#reset[hidden]", state="attached")
        assert f"The password of {email} is set" in page.text_content("#message")

        # The new password signs in; the old one, and everything the old session held, do not.
        assert http.post("/api/v1/auth/login", json={"email": email, "password": PASSWORD}).status_code == 401
        after = http.post("/api/v1/auth/login", json={"email": email, "password": NEW_PASSWORD})
        assert after.status_code == 200 and after.json()["data"]["user"]["email"] == email
        assert http.post("/api/v1/auth/refresh", json={"refreshToken": before["refreshToken"]}).status_code == 401
        old = http.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {before['accessToken']}"})
        assert old.status_code == 401 and old.json()["error"]["details"]["reason"] == "session_ended"
        assert http.get("/api/v1/auth/me", headers={
            "Authorization": f"Bearer {after.json()['data']['accessToken']}"}).status_code == 200

        # The link worked once: the page says so when it is opened again (a new document, not a jump to its fragment).
        page.goto("about:blank")
        page.goto(link)
        page.wait_for_selector("#reset:not([hidden])")
        page.fill("#password", "yet another new password")
        page.fill("#repeat", "yet another new password")
        page.click("#reset-button")
        page.wait_for_selector("#message.error")
        assert "used already" in page.text_content("#message")
        assert http.post("/api/v1/auth/password/reset", json={"token": token, "password": "x" * 12}).status_code == 409
