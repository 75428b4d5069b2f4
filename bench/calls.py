"""3. AWS calls per request, for every route of template.yaml's API events except ANY.

For each route: one warm-up request (fills the key, secret and signing-key caches and the
rate-limit window), then one counted request, on fresh resources where the route changes
them (a new project to delete, a new key to revoke or rotate). Calls are counted at the
botocore level (before-call), on every client of svc_core.adapters.aws, by operation name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.awstime import AwsCalls
from bench.fixture import Fixture, quiet_stdout, route_event, wait_for_window_room

READ_TARGET, WRITE_TARGET = 2, 3


@dataclass
class RouteCalls:
    method: str
    path: str
    function: str
    status: int
    operations: dict[str, int]
    note: str = ""

    @property
    def count(self) -> int:
        return sum(self.operations.values())

    @property
    def target(self) -> int:
        return READ_TARGET if self.method == "GET" else WRITE_TARGET


def _scenarios(fx: Fixture) -> dict[tuple[str, str], Callable[[], dict[str, Any]]]:
    """The request arguments for each route (made anew for each request)."""
    serial = iter(range(1, 1_000_000))
    key_body = {"name": "bench key", "type": "sdk", "environment": "Development", "scopes": ["projects:read"]}
    return {
        ("GET", "/api/v1/projects"): lambda: {},
        ("POST", "/api/v1/projects"): lambda: {"body": {"name": f"bench {next(serial)}", "language": "python"}},
        ("GET", "/api/v1/projects/{id}"): lambda: {"path_params": {"id": fx.project_id}},
        ("PATCH", "/api/v1/projects/{id}"): lambda: {"path_params": {"id": fx.project_id},
                                                     "body": {"description": f"edit {next(serial)}"}},
        ("DELETE", "/api/v1/projects/{id}"): lambda: {"path_params": {"id": fx.new_project()}},
        ("POST", "/api/v1/api-keys"): lambda: {"body": dict(key_body)},
        ("GET", "/api/v1/api-keys"): lambda: {},
        ("GET", "/api/v1/api-keys/{id}"): lambda: {"path_params": {"id": fx.key_id}},
        ("DELETE", "/api/v1/api-keys/{id}"): lambda: {"path_params": {"id": fx.new_key_id(["projects:read"])}},
        ("POST", "/api/v1/api-keys/{id}/rotate"): lambda: {"path_params": {"id": fx.new_key_id(["projects:read"])},
                                                           "body": {"overlapSeconds": 3600}},
        ("GET", "/api/v1/.well-known/jwks.json"): lambda: {},
        ("GET", "/api/v1/openapi.json"): lambda: {},
    }


def measure(fixture: Fixture) -> list[RouteCalls]:
    from devstack import routes
    from tests.support.functions import load_function

    scenarios = _scenarios(fixture)
    calls = AwsCalls().install()
    results = []
    try:
        for route in routes.routes():
            logical_id, event_key, method, path = route.function, route.event_key, route.method, route.path
            module = load_function(route.directory)
            spec = module.api.specs.get((method, path))
            token = None if spec is not None and spec.public else fixture.key
            make_args = scenarios.get((method, path))
            note = "" if make_args is not None else "no scenario in bench/calls.py: sent without parameters"
            make_args = make_args or (lambda: {})

            # Bound now (default values): each route's request, not the loop's last.
            def one_request(logical_id=logical_id, event_key=event_key, method=method, path=path, token=token,
                            make_args=make_args, module=module) -> dict[str, Any]:
                event = route_event(logical_id, event_key, method, path, token=token, **make_args())
                calls.reset()
                with quiet_stdout():
                    return module.lambda_handler(event, None)

            wait_for_window_room()
            one_request()
            response = one_request()
            results.append(RouteCalls(method, path, logical_id, response["statusCode"], dict(calls.operations),
                                      note))
    finally:
        calls.uninstall()
    return results
