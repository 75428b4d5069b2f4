"""The projects table: partition tenantId, sort id (a ULID, so reverse order is newest first).

Every write goes in one transaction with its outbox event (see outbox_table), and every
update or delete is conditional on the version the caller read, so the event describes
exactly the change that was made.
"""

from __future__ import annotations

from typing import Any

from svc_core import aws
from svc_core.config import settings
from svc_core.data import outbox_table
from svc_core.data.common import decode_cursor, encode_cursor, transact
from svc_core.dynamo import from_item, to_item, values


def _table() -> str:
    return settings().projects_table


def _key(tenant_id: str, project_id: str) -> dict[str, Any]:
    return {"tenantId": {"S": tenant_id}, "id": {"S": project_id}}


def _public(item: dict[str, Any]) -> dict[str, Any]:
    record = from_item(item)
    record.pop("tenantId", None)
    return record


def get(tenant_id: str, project_id: str) -> dict[str, Any] | None:
    answer = aws.client("dynamodb").get_item(TableName=_table(), Key=_key(tenant_id, project_id),
                                             ConsistentRead=True)
    item = answer.get("Item")
    return _public(item) if item else None


def list_for_tenant(tenant_id: str, limit: int, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
    query: dict[str, Any] = {
        "TableName": _table(), "KeyConditionExpression": "tenantId = :t",
        "ExpressionAttributeValues": values(t=tenant_id), "ScanIndexForward": False, "Limit": limit,
    }
    if cursor:
        query["ExclusiveStartKey"] = _key(tenant_id, decode_cursor(cursor)["after"])
    answer = aws.client("dynamodb").query(**query)
    items = [_public(i) for i in answer.get("Items", [])]
    next_cursor = None
    if answer.get("LastEvaluatedKey") and items:
        next_cursor = encode_cursor({"after": items[-1]["id"]})
    return items, next_cursor


def create(tenant_id: str, project: dict[str, Any], event: dict[str, Any], now: float) -> None:
    transact([
        {"Put": {"TableName": _table(), "Item": to_item({"tenantId": tenant_id, **project}),
                 "ConditionExpression": "attribute_not_exists(id)"}},
        outbox_table.put_event_item(event, now),
    ])


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
