"""The OAuth connections table: partition tenantId, sort id (`ocn_` + a ULID, so reverse order
is newest first). The provider's tokens are stored sealed (see svc_core/adapters/sealing.py), never in
clear. A connection is created in one transaction with the consumption of its flow.
"""

from __future__ import annotations

from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import from_item, to_item
from svc_core.data.common import ConditionFailed, is_condition_failure, projection, query_tenant_items, read_item, transact
from svc_core.platform.config import settings

_LISTED = ("tenantId", "id", "provider", "userId", "scopes", "tokenType", "hasRefreshToken", "created_at",
           "accessTokenExpiresAt")


def _table() -> str:
    return settings().oauth_connections_table


def _key(tenant_id: str, connection_id: str) -> dict[str, Any]:
    return {"tenantId": {"S": tenant_id}, "id": {"S": connection_id}}


def _public(item: dict[str, Any]) -> dict[str, Any]:
    record = from_item(item)
    record.pop("tenantId", None)
    return record


def create(tenant_id: str, connection: dict[str, Any], consume_flow: dict[str, Any]) -> None:
    """Store the connection and consume its flow, both or neither (ConditionFailed)."""
    transact([
        {"Put": {"TableName": _table(), "Item": to_item({"tenantId": tenant_id, **connection}),
                 "ConditionExpression": "attribute_not_exists(id)"}},
        consume_flow,
    ])


def get(tenant_id: str, connection_id: str) -> dict[str, Any] | None:
    return read_item(_table(), _key(tenant_id, connection_id), _public)


def list_for_tenant(tenant_id: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
    # The sealed tokens stay in the table: a list never needs them.
    return query_tenant_items(_table(), tenant_id, limit, after, _key, _public, **projection(_LISTED))


def delete(tenant_id: str, connection_id: str) -> None:
    """ConditionFailed when the connection is not there (any more)."""
    try:
        aws.client("dynamodb").delete_item(TableName=_table(), Key=_key(tenant_id, connection_id),
                                           ConditionExpression="attribute_exists(id)")
    except Exception as exc:
        if is_condition_failure(exc):
            raise ConditionFailed() from None
        raise
