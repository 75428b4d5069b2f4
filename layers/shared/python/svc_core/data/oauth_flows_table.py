"""Pending OAuth flows, partition key stateHash (the SHA-256 of the `state` the client holds, so
a reader of the table cannot finish anyone's flow); TTL cleans up.

A flow is consumed once: by the conditional Delete that `consume_item` builds, which the
connections table writes in the same transaction as the new connection (a flow yields at most
one connection, whatever the concurrency). Expiry is enforced in code on every read
(`expiresAt`) and in that Delete's condition; TTL only removes the item later.
"""

from __future__ import annotations

from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import from_item, to_item, values
from svc_core.data.common import create_item
from svc_core.platform.config import settings

RETENTION_SECONDS = 3600  # kept an hour after expiry, so a late authorize still learns "expired"


def _table() -> str:
    return settings().oauth_flows_table


def create(flow: dict[str, Any]) -> None:
    create_item(_table(), to_item({**flow, "ttl": flow["expiresAt"] + RETENTION_SECONDS}), "stateHash")


def get(state_hash: str) -> dict[str, Any] | None:
    answer = aws.client("dynamodb").get_item(TableName=_table(), Key={"stateHash": {"S": state_hash}},
                                             ConsistentRead=True)
    return from_item(answer.get("Item"))


def consume_item(state_hash: str, *, tenant_id: str, user_id: str, provider: str, now: int) -> dict[str, Any]:
    """The transaction entry that deletes the flow if it is still there, unexpired, and was
    started by this user in this tenant for this provider."""
    return {"Delete": {
        "TableName": _table(), "Key": {"stateHash": {"S": state_hash}},
        "ConditionExpression": "tenantId = :t AND userId = :u AND provider = :p AND expiresAt > :now",
        "ExpressionAttributeValues": values(t=tenant_id, u=user_id, p=provider, now=now),
    }}
