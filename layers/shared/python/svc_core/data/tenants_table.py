"""The tenants table: one item per tenant, partition key id."""

from __future__ import annotations

from typing import Any

from svc_core import aws
from svc_core.config import settings
from svc_core.dynamo import from_item, to_item


def _table() -> str:
    return settings().tenants_table


def put_new(tenant: dict[str, Any]) -> dict[str, Any]:
    """A TransactWriteItems entry that creates a tenant."""
    return {"Put": {"TableName": _table(), "Item": to_item(tenant),
                    "ConditionExpression": "attribute_not_exists(id)"}}


def get(tenant_id: str) -> dict[str, Any] | None:
    answer = aws.client("dynamodb").get_item(TableName=_table(), Key={"id": {"S": tenant_id}})
    return from_item(answer.get("Item"))
