"""The agents table: partition tenantId, sort id (`agt_` + a ULID, so reverse order is newest first).

Item: {tenantId, id, name, systemPrompt, config: {autonomyLevel, model?, stepLimit, tools}, created_at,
updated_at}. Agents emit no events, so each write is a single conditional one: a create never
overwrites, and a replace or delete happens only to the version (updated_at) the caller read.
"""

from __future__ import annotations

from typing import Any

from svc_core.adapters.dynamo import values
from svc_core.data.table import Table

_TABLE = Table("agents_table", ("tenantId", "id"), private=("tenantId",))


def get(tenant_id: str, agent_id: str) -> dict[str, Any] | None:
    return _TABLE.get(tenant_id, agent_id)


def list_for_tenant(tenant_id: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
    return _TABLE.list_for_tenant(tenant_id, limit, after)


def create(tenant_id: str, agent: dict[str, Any], answer: dict[str, Any] | None = None) -> None:
    """The agent; `answer`: the request's answer, kept with the write (common.create_item)."""
    _TABLE.create({"tenantId": tenant_id, **agent}, answer)


def replace(tenant_id: str, agent: dict[str, Any], seen_updated_at: str) -> None:
    """Store the new version if the stored one is still the version the caller read (else ConditionFailed)."""
    _TABLE.put({"tenantId": tenant_id, **agent}, ConditionExpression="updated_at = :seen",
               ExpressionAttributeValues=values(seen=seen_updated_at))


def delete(tenant_id: str, agent_id: str, seen_updated_at: str) -> None:
    _TABLE.delete(_TABLE.key(tenant_id, agent_id), ConditionExpression="updated_at = :seen",
                  ExpressionAttributeValues=values(seen=seen_updated_at))
