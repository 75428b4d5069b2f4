"""The projects table: partition tenantId, sort id (a ULID, so reverse order is newest first).

Every write goes in one transaction with its outbox event (see outbox_table), and every
update or delete is conditional on the version the caller read, so the event describes
exactly the change that was made.
"""

from __future__ import annotations

from typing import Any

from svc_core.adapters.dynamo import from_item, to_item, values
from svc_core.data import outbox_table
from svc_core.data.common import query_tenant_items, read_item, transact
from svc_core.platform.config import settings


def _table() -> str:
    return settings().projects_table


def _key(tenant_id: str, project_id: str) -> dict[str, Any]:
    return {"tenantId": {"S": tenant_id}, "id": {"S": project_id}}


def _public(item: dict[str, Any]) -> dict[str, Any]:
    record = from_item(item)
    record.pop("tenantId", None)
    return record


def get(tenant_id: str, project_id: str) -> dict[str, Any] | None:
    return read_item(_table(), _key(tenant_id, project_id), _public)


def list_for_tenant(tenant_id: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
    return query_tenant_items(_table(), tenant_id, limit, after, _key, _public)


def create(tenant_id: str, project: dict[str, Any], event: dict[str, Any], now: float,
           answer: dict[str, Any] | None = None) -> None:
    """The project and its event; `answer`: the request's answer, kept with the write (common.transact)."""
    transact([
        {"Put": {"TableName": _table(), "Item": to_item({"tenantId": tenant_id, **project}),
                 "ConditionExpression": "attribute_not_exists(id)"}},
        outbox_table.put_event_item(event, now),
    ], answer=answer)


def replace(tenant_id: str, project: dict[str, Any], seen_updated_at: str, event: dict[str, Any],
            now: float) -> None:
    """Store the new version if the stored one is still the version the caller read."""
    transact([
        {"Put": {"TableName": _table(), "Item": to_item({"tenantId": tenant_id, **project}),
                 "ConditionExpression": "updated_at = :seen",
                 "ExpressionAttributeValues": values(seen=seen_updated_at)}},
        outbox_table.put_event_item(event, now),
    ])


def delete(tenant_id: str, project_id: str, seen_updated_at: str, event: dict[str, Any], now: float) -> None:
    transact([
        {"Delete": {"TableName": _table(), "Key": _key(tenant_id, project_id),
                    "ConditionExpression": "updated_at = :seen",
                    "ExpressionAttributeValues": values(seen=seen_updated_at)}},
        outbox_table.put_event_item(event, now),
    ])
