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
