"""Every route enforces the permission table (docs/organizations.md): called with a signed-in user's
token of each role, a route answers 403 naming its scope exactly when the role lacks that scope, and
lets every other role past the scope check. The table's cells and ROLE_SCOPES are held alike by
tests/unit/test_permission_table.py."""

from __future__ import annotations

import pytest

from devstack.routes import routes
from svc_core.auth.roles import ROLE_SCOPES, ROLES
from svc_core.http.api import AUTHENTICATED
from svc_core.platform import ids
from tests.support.functions import call, served_routes
from tests.support.stack import provisioned_stack

SERVED = served_routes()
SCOPED = [r for r in routes() if (spec := SERVED[(r.method, r.path)].spec).scope not in (None, AUTHENTICATED)
          and not spec.public and not spec.stream]


@pytest.fixture(scope="module")
def stack(emulator):
    yield from provisioned_stack(emulator)  # each test makes its own tenant: no wipe between them


def test_the_scoped_routes_are_found():
    assert len(SCOPED) > 50 and {"GET /api/v1/members", "DELETE /api/v1/api-keys/{id}"} <= {
        f"{r.method} {r.path}" for r in SCOPED}


@pytest.mark.parametrize("route", SCOPED, ids=lambda r: r.event)
def test_a_role_is_refused_a_route_exactly_when_it_lacks_the_routes_scope(stack, route):
    scope = SERVED[(route.method, route.path)].spec.scope
    tenant_id = stack.new_tenant()
    params = {name: ids.new_id("usr" if name == "userId" else "proj") for name in route.path_parameters}
    for role in ROLES:
        reply = call(route.directory, route.event, token=stack.user_token(tenant_id, role), path_params=params)
        denied = reply.status == 403 and (reply.error or {}).get("details", {}).get("requiredScope") == scope
        assert denied == (scope not in ROLE_SCOPES[role]), (role, scope, reply)
