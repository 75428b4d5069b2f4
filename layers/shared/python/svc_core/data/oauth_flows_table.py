"""Pending OAuth flows, partition key stateHash (the SHA-256 of the `state` the client holds, so
a reader of the table cannot finish anyone's flow); TTL cleans up.

A flow is consumed once: by the conditional Delete that `consume_item` builds, which the
connections table writes in the same transaction as the new connection (a flow yields at most
one connection, whatever the concurrency). Expiry is enforced in code on every read
(`expiresAt`) and in that Delete's condition; TTL only removes the item later.
"""

from __future__ import annotations

from typing import Any

from svc_core.adapters.dynamo import values
from svc_core.data.table import Table

RETENTION_SECONDS = 3600  # kept an hour after expiry, so a late authorize still learns "expired"


_TABLE = Table("oauth_flows_table", ("stateHash",))


def create(flow: dict[str, Any]) -> None:
    _TABLE.create({**flow, "ttl": flow["expiresAt"] + RETENTION_SECONDS})


def get(state_hash: str) -> dict[str, Any] | None:
    return _TABLE.get(state_hash)


def consume_item(state_hash: str, *, tenant_id: str, user_id: str, provider: str, now: int) -> dict[str, Any]:
    """The transaction entry that deletes the flow if it is still there, unexpired, and was
    started by this user in this tenant for this provider."""
    return _TABLE.delete_entry(
        _TABLE.key(state_hash),
        ConditionExpression="tenantId = :t AND userId = :u AND provider = :p AND expiresAt > :now",
        ExpressionAttributeValues=values(t=tenant_id, u=user_id, p=provider, now=now))
