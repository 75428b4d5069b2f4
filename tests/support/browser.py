"""Headless Chromium for the browser tests, as pytest fixtures (`browser`, a module's browser; `page`, a
fresh context's page that collects console errors and uncaught script errors in `page.problems`).

Debian's chromium, launched by Playwright (its own browser download does not work here). In CI
the browser must be there (scripts/bootstrap_browser.sh installs it); elsewhere the tests skip.
A plugin of the root conftest, so every test directory has the fixtures without importing them.
"""

from __future__ import annotations

import os

import pytest

from tests.support.ci import in_ci

EXPECT_TIMEOUT_MS = 20_000
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Without the background-networking flags Chromium keeps dialling Google, which this network refuses.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
                 "--disable-background-networking", "--disable-component-update"]


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        if in_ci():
            pytest.fail(f"{CHROMIUM} is missing: scripts/bootstrap_browser.sh should have installed it")
        pytest.skip(f"{CHROMIUM} is not installed (scripts/bootstrap_browser.sh installs it)")
    from playwright.sync_api import expect, sync_playwright
    # An expectation ends as soon as it holds; Playwright's 5 s were too short for a page whose API
    # answers slowly on a loaded machine (seen in CI: an overview's card not yet there after 5 s).
    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield launched
        launched.close()


def watched(opened):
    """The page, collecting console errors (a CSP refusal is one) and uncaught script errors in
    `page.problems`; not the browser's notes on answers such as the expected 401 of the silent refresh
    (or a page without an icon's 404 of /favicon.ico: the dashboard has its icon)."""
    opened.problems = []
    opened.on("console", lambda message: message.type == "error"
              and not message.text.startswith("Failed to load resource")
              and opened.problems.append(message.text))
    opened.on("pageerror", lambda error: opened.problems.append(str(error)))
    return opened


@pytest.fixture
def page(browser):
    context = browser.new_context()
    yield watched(context.new_page())
    context.close()
