"""The issue's end-to-end test: `svc login` runs in a real terminal (a pty) while headless
Chromium approves the login in the browser; then commands use the stored credential, and
`svc logout` revokes it.

The browser part is the one of tests/e2e/test_browser_login.py (Debian's chromium through
Playwright; in CI it must be there, elsewhere the test skips without it).
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys

import httpx
import pytest

from tests.e2e.test_browser_login import PASSWORD, register
from tests.support.terminal import Terminal

pytestmark = pytest.mark.long_running   # minutes long: its test process starts with it (tests/conftest.py)

AUTH_URL = re.compile(r"(http://127\.0\.0\.1:\d+/api/v1/cli/auth/approve\?loginId=[\w-]+#state=[0-9a-f]{64})")
CODE = re.compile(r"code: ([A-Z0-9]{4}-[A-Z0-9]{4})")


def svc(base_url: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "svc_client.cli", "--base-url", base_url, *args], env=env,
                          capture_output=True, text=True, timeout=60)


def test_login_in_a_terminal_approved_in_chromium_then_commands_use_the_stored_key(
        local_stack, page, tmp_path):
    base = local_stack.base_url
    env = {k: v for k, v in os.environ.items() if not k.startswith("SVC_")}
    # BROWSER=true: the CLI really calls the system's browser opener, which here does nothing;
    # Chromium below plays the user's browser with the address the terminal shows.
    env.update({"SVC_CONFIG_DIR": str(tmp_path / "svc"), "SVC_CREDENTIAL_STORE": "file", "BROWSER": "true",
                "TERM": "xterm-256color", "PYTHONUNBUFFERED": "1"})
    with httpx.Client(base_url=base, timeout=10) as http:
        email = register(http)

    terminal = Terminal([sys.executable, "-m", "svc_client.cli", "--base-url", base, "login"], env)
    try:
        auth_url = terminal.wait_for(AUTH_URL).group(1)
        code = terminal.wait_for(CODE).group(1)
        terminal.wait_for(re.compile(r"Waiting for the approval"))  # the spinner, polling

        page.goto(auth_url)
        page.wait_for_selector("#sign-in:not([hidden])")
        page.fill("#email", email)
        page.fill("#password", PASSWORD)
        page.click("#sign-in-button")
        page.wait_for_selector("#decision:not([hidden])")
        assert page.text_content("#code") == code      # the user compares the codes
        page.click("#approve")
        page.wait_for_selector("text=Approved.")

        assert terminal.finish() == 0, terminal.text
    finally:
        if terminal.process.poll() is None:
            terminal.process.kill()
    assert f"Logged in as {email}" in terminal.text

    stored_file = tmp_path / "svc" / "credentials.json"
    assert stat.S_IMODE(os.stat(stored_file).st_mode) == 0o600
    stored = json.loads(stored_file.read_text())["default"]
    assert stored["apiKey"].startswith("svc_cli_") and stored["keyId"].startswith("key_")

    made = svc(base, env, "projects", "create", "From the terminal", "-o", "json")
    assert made.returncode == 0, made.stderr
    project = json.loads(made.stdout)
    who = svc(base, env, "whoami", "--output", "json")
    assert json.loads(who.stdout)["tenant"]["role"] == "api_key"
    assert f"{email} (command-line key)" in svc(base, env, "whoami").stdout
    listed = svc(base, env, "projects", "list", "-o", "json")
    assert [p["id"] for p in json.loads(listed.stdout)["items"]] == [project["id"]]

    # The last step: a chat answer streamed in the terminal, with the stored credential.
    chat = Terminal([sys.executable, "-m", "svc_client.cli", "--base-url", base, "chat", "--project", project["id"]],
                    env)
    try:
        chat.wait_for(re.compile(r"you> $", re.M))
        chat.type("What is in this project?\r")
        chat.wait_for(re.compile(r"\[offline model\].*\n.*micro-credits", re.S))
        chat.wait_for(re.compile(r"you> $", re.M))
        chat.type("\x04")  # Ctrl-D ends the session
        assert chat.finish() == 0, chat.text
    finally:
        if chat.process.poll() is None:
            chat.process.kill()

    out = svc(base, env, "logout", "-o", "json")
    assert json.loads(out.stdout) == {"loggedOut": True, "revoked": True, "profile": "default"}
    refused = httpx.get(f"{base}/api/v1/projects", headers={"Authorization": f"Bearer {stored['apiKey']}"})
    assert refused.status_code == 401
    assert "default" not in json.loads(stored_file.read_text())


def test_a_login_denied_in_the_browser_ends_with_a_clear_message(local_stack, tmp_path):
    base = local_stack.base_url
    env = {k: v for k, v in os.environ.items() if not k.startswith("SVC_")}
    env.update({"SVC_CONFIG_DIR": str(tmp_path / "svc"), "SVC_CREDENTIAL_STORE": "file", "BROWSER": "true"})
    with httpx.Client(base_url=base, timeout=10) as http:
        email = register(http)
        terminal = Terminal([sys.executable, "-m", "svc_client.cli", "--base-url", base, "login"], env)
        try:
            auth_url = terminal.wait_for(AUTH_URL).group(1)
            login_id = re.search(r"loginId=([\w-]+)", auth_url).group(1)
            state = auth_url.split("#state=")[1]
            token = http.post("/api/v1/auth/login", json={"email": email, "password": PASSWORD}).json()["data"]
            denied = http.post("/api/v1/cli/auth/deny", json={"loginId": login_id, "state": state},
                               headers={"Authorization": f"Bearer {token['accessToken']}"})
            assert denied.status_code == 200, denied.text
            assert terminal.finish() == 1
        finally:
            if terminal.process.poll() is None:
                terminal.process.kill()
    assert "the login was denied in the browser" in terminal.text
    assert not (tmp_path / "svc" / "credentials.json").exists()
