"""The agents table: partition tenantId, sort id (`agt_` + a ULID, so reverse order is newest first).

Item: {tenantId, id, name, systemPrompt, config: {autonomyLevel, model?, stepLimit, tools}, created_at,
updated_at}. Agents emit no events, so each write is a single conditional one: a create never
overwrites, and a replace or delete happens only to the version (updated_at) the caller read.
"""

from __future__ import annotations

from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import from_item, to_item, values
from svc_core.data.common import ConditionFailed, create_item, is_condition_failure, query_tenant_items, read_item
from svc_core.platform.config import settings


def _table() -> str:
    return settings().agents_table


def _key(tenant_id: str, agent_id: str) -> dict[str, Any]:
    return {"tenantId": {"S": tenant_id}, "id": {"S": agent_id}}


def _public(item: dict[str, Any]) -> dict[str, Any]:
    record = from_item(item)
    record.pop("tenantId", None)
    return record


def _conditional(write, **request: Any) -> None:
    try:
        write(TableName=_table(), **request)
    except Exception as exc:
        if is_condition_failure(exc):
            raise ConditionFailed() from None
        raise


def get(tenant_id: str, agent_id: str) -> dict[str, Any] | None:
    return read_item(_table(), _key(tenant_id, agent_id), _public)


def list_for_tenant(tenant_id: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
    return query_tenant_items(_table(), tenant_id, limit, after, _key, _public)


def create(tenant_id: str, agent: dict[str, Any], answer: dict[str, Any] | None = None) -> None:
    """The agent; `answer`: the request's answer, kept with the write (common.create_item)."""
    create_item(_table(), to_item({"tenantId": tenant_id, **agent}), "id", answer=answer)


def replace(tenant_id: str, agent: dict[str, Any], seen_updated_at: str) -> None:
    """Store the new version if the stored one is still the version the caller read (else ConditionFailed)."""
    _conditional(aws.client("dynamodb").put_item, Item=to_item({"tenantId": tenant_id, **agent}),
                 ConditionExpression="updated_at = :seen", ExpressionAttributeValues=values(seen=seen_updated_at))


def delete(tenant_id: str, agent_id: str, seen_updated_at: str) -> None:
    _conditional(aws.client("dynamodb").delete_item, Key=_key(tenant_id, agent_id),
                 ConditionExpression="updated_at = :seen", ExpressionAttributeValues=values(seen=seen_updated_at))
