"""The OAuth connections table: partition tenantId, sort id (`ocn_` + a ULID, so reverse order
is newest first). The provider's tokens are stored sealed (see svc_core/adapters/sealing.py), never in
clear. A connection is created in one transaction with the consumption of its flow.
"""

from __future__ import annotations

from typing import Any

from svc_core.data.common import transact
from svc_core.data.table import Table

# A list reads these: the sealed tokens stay in the table.
_TABLE = Table("oauth_connections_table", ("tenantId", "id"), private=("tenantId",),
               listed=("tenantId", "id", "provider", "userId", "scopes", "tokenType", "hasRefreshToken",
                       "created_at", "accessTokenExpiresAt"))


def create(tenant_id: str, connection: dict[str, Any], consume_flow: dict[str, Any]) -> None:
    """Store the connection and consume its flow, both or neither (ConditionFailed)."""
    transact([
        _TABLE.put_entry({"tenantId": tenant_id, **connection}, ConditionExpression="attribute_not_exists(id)"),
        consume_flow,
    ])


def get(tenant_id: str, connection_id: str) -> dict[str, Any] | None:
    return _TABLE.get(tenant_id, connection_id)


def list_for_tenant(tenant_id: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
    return _TABLE.list_for_tenant(tenant_id, limit, after)


def delete(tenant_id: str, connection_id: str) -> None:
    """ConditionFailed when the connection is not there (any more)."""
    _TABLE.delete(_TABLE.key(tenant_id, connection_id), ConditionExpression="attribute_exists(id)")
