"""End-to-end: the local stack as a user starts it, over real HTTP on loopback."""

from __future__ import annotations

import pytest

from devstack.bootstrap import bootstrap
from devstack.stack import LocalStack


class Recorder:
    """Keeps the events the gateway hands to functions, so tests can look at them."""

    def __init__(self) -> None:
        self.events: list[dict] = []

    def wrap(self, function) -> None:
        original = function.invoke

        def invoke(event, **kwargs):
            self.events.append(event)
            return original(event, **kwargs)

        function.invoke = invoke


@pytest.fixture(scope="package")
def local_stack(tmp_path_factory):
    stack = LocalStack(port=0, log=lambda _msg: None, containers=2)
    stack.start()
    credentials = bootstrap(stack.base_url, tmp_path_factory.mktemp("creds") / "dev-credentials.json")
    # The package's tests share the development tenant and together make more projects than the free
    # plan's 10 (the quota has its own tests): the plan above it.
    from svc_core.domain.tenants import set_plan
    set_plan(credentials["tenantId"], "starter")
    recorder = Recorder()
    for function in stack.gateway.functions.values():
        recorder.wrap(function)
    stack.credentials = credentials
    stack.recorder = recorder
    yield stack
    stack.stop()
