"""The objects a route's path parameter names (/agents/{id}/runs: an agent), made for a tenant by the
tests that call every route of a kind (devstack/routes.py: a list, a function's everyday read). How to
make one is the one thing a route does not say, so it is kept here once, by collection: a new route
under a collection named here is covered by those tests as it is; one under a new collection fails
until its way of making an object is added."""

from __future__ import annotations

from collections.abc import Iterable

from tests.support.functions import call
from tests.support.webhook_receiver import register

# The collection a path parameter names -> how to make one of its objects for a tenant: (function
# directory, create event, body) through the API, or a function of the tenant id.
MADE = {
    "projects": ("projects", "Projects-CreateProject", {"name": "P"}),
    "sessions": ("chat", "Chat-CreateChatSession", {"title": "t"}),
    "agents": ("agents", "Agents-CreateAgent", {"name": "Reader", "systemPrompt": "Read.",
                                                "config": {"autonomyLevel": "suggest"}}),
    "webhooks": lambda tenant_id: register(tenant_id, "https://hooks.example.com/x", []),
}


def make(collection: str, tenant_id: str, key: str) -> str:
    """A new object of the collection, the tenant's; its id."""
    how = MADE[collection]
    if callable(how):
        return how(tenant_id)
    directory, event_name, body = how
    reply = call(directory, event_name, token=key, body=body)
    assert reply.status == 201, reply
    return reply.data["id"]


def make_each(collections: Iterable[str], tenant_id: str, key: str) -> dict[str, str]:
    """collection -> the id of one new object of it, for each collection."""
    return {collection: make(collection, tenant_id, key) for collection in collections}


# The lists of a person's own account (their sessions): a user's access token reads them, an API key is
# refused (403 user_required), so the tests that call every list send these a user's token instead.
PERSONAL = {"Auth-ListSessions"}


def personal_token(tenant_id: str) -> str:
    """An access token of a user of the tenant signed in twice (two open sessions), as /auth/login mints
    it for the later one."""
    from svc_core.auth import tokens
    from svc_core.auth.roles import ROLE_SCOPES
    from svc_core.data import sessions_table
    from svc_core.platform import ids, timeutil
    from tests.support.stack import set_up_writes
    user_id, now = ids.new_id("usr"), timeutil.now()
    session_ids = [ids.new_id("ses") for _ in range(2)]
    with set_up_writes():
        for session_id in session_ids:
            sessions_table.create({"id": session_id, "userId": user_id, "tenantId": tenant_id, "tokenHash": "-",
                                   "generation": 1, "created_at": timeutil.iso(now), "expiresAt": int(now) + 86400})
    token, _ = tokens.mint(subject=user_id, tenant_id=tenant_id, scopes=ROLE_SCOPES["owner"], credential="user",
                           extra={"sid": session_ids[-1]})
    return token


def credential_for(event: str, tenant_id: str, key: str) -> str:
    """What the tests that call every list send for this list: the tenant's key, or a person's token."""
    return personal_token(tenant_id) if event in PERSONAL else key
