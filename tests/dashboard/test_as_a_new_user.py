"""The dashboard as the README leads a new user to it: the local stack started as scripts/dev starts it
(`python -m devstack`, its own process), the dashboard's address read from what it prints, the
development user's e-mail and password from the credentials file it writes, and a sign-in in Chromium."""

from __future__ import annotations

import re
import time

from playwright.sync_api import expect

from tests.support.stack_process import StackProcess


def test_open_the_printed_address_and_sign_in_with_the_printed_user(browser, tmp_path):
    stack = StackProcess(tmp_path / "dev-credentials.json")
    try:
        credentials = stack.wait_ready()
        deadline = time.monotonic() + 10
        while not (printed := re.search(r"^dashboard: (http://127\.0\.0\.1:\d+)/", stack.output, re.M)):
            assert time.monotonic() < deadline, stack.output[-3000:]
            time.sleep(0.1)
        page = browser.new_page()
        page.goto(printed.group(1) + "/")
        page.get_by_label("E-mail").fill(credentials["user"]["email"])
        page.get_by_label("Password").fill(credentials["user"]["password"])
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("main")).to_contain_text(credentials["user"]["email"])
        expect(page.get_by_role("navigation", name="Main").get_by_role("link", name="API keys")).to_be_visible()
        page.close()
    finally:
        assert stack.stop() == 0, stack.output[-3000:]
