"""The permission table (auth/roles.py, docs/organizations.md) held by every route: for each route
that needs a scope and each role, a member of that role is refused with 403 `details.requiredScope`
exactly when the role's row lacks the scope, and gets past the check otherwise (to a 404 for an
object that does not exist, a 400 for an empty body, or the answer itself).

The routes and their scopes are read from the template and the OpenAPI document (devstack/routes.py),
so a new route is a new row of cells here as soon as it is routed."""

from __future__ import annotations

import pytest

from devstack import routes
from svc_core.auth.roles import ROLE_SCOPES, ROLES
from tests.support.functions import call
from tests.support.stack import provisioned_stack


@pytest.fixture(scope="module")
def stack(emulator):
    yield from provisioned_stack(emulator)


SCOPED = [r for r in routes.routes() if r.required_scope]
CELLS = [(route, role) for route in SCOPED for role in ROLES]
# A well-formed id for every path parameter: an object that does not exist, so an admitted write
# touches nothing (the route's own tests show what it does to objects that exist).
PLACEHOLDER = "x_01JD2Q7ZB6V8S3K4X9W2M5N7PA"


def test_every_role_and_every_scoped_route_is_a_cell():
    assert len(SCOPED) > 40 and set(ROLES) == set(ROLE_SCOPES)
    assert {r.required_scope for r in SCOPED} <= set().union(*ROLE_SCOPES.values())  # owner holds them all


@pytest.mark.parametrize(("route", "role"), CELLS, ids=[f"{r.event}-{role}" for r, role in CELLS])
def test_a_role_passes_a_routes_scope_check_exactly_when_the_table_grants_it(stack, route, role):
    scope = route.required_scope
    granted = scope in ROLE_SCOPES[role]
    if granted and route.streams:
        pytest.skip("an admitted stream stays open; its scope is held by the stream's own tests")
    tenant_id = stack.new_tenant()
    token = stack.user_token(tenant_id, role)
    reply = call(route.directory, route.event, token=token,
                 path_params={name: PLACEHOLDER for name in route.path_parameters},
                 body={} if route.is_write else None)
    refused_for_scope = reply.status == 403 and (reply.json or {}).get("error", {}).get(
        "details", {}).get("requiredScope") == scope
    assert refused_for_scope is not granted, reply
    assert reply.status < 500, reply
