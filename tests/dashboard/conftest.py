"""The dashboard in Chromium against the local stack: the app built from dashboard/ and served as
the local stack serves it (devstack/dashboard.py: the deployment's headers, config.json naming the
API), one stack for the tests of this directory in a test process."""

from __future__ import annotations

import pytest

from devstack import dashboard as app
from devstack.stack import LocalStack
from tests.support.dashboard import Dashboard


@pytest.fixture(scope="package")
def dashboard(tmp_path_factory):
    app.build()
    server = app.DashboardServer(port=0)
    stack = LocalStack(port=0, log=lambda _msg: None, containers=2,
                       parameters={"LogLevel": "ERROR", "AllowedOrigins": server.url,
                                   "DashboardUrl": server.url})
    stack.start()
    server.start(stack.base_url)
    yield Dashboard(stack=stack, server=server)
    server.stop()
    stack.stop()


@pytest.fixture
def page(browser, dashboard):
    """A fresh context (no cookie, nothing stored) at a laptop's width that may use the clipboard,
    collecting the page's problems (tests/support/browser.py)."""
    from tests.support.browser import watched
    from tests.support.dashboard import LAPTOP
    context = browser.new_context(viewport=LAPTOP, permissions=["clipboard-read", "clipboard-write"])
    yield watched(context.new_page())
    context.close()
