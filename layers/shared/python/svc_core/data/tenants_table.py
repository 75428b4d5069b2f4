"""The tenants table: one item per tenant, partition key id."""

from __future__ import annotations

from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import from_item, to_item, values
from svc_core.data.common import ConditionFailed, ItemRead, is_condition_failure
from svc_core.platform.config import settings


def _table() -> str:
    return settings().tenants_table


def put_new(tenant: dict[str, Any]) -> dict[str, Any]:
    """A TransactWriteItems entry that creates a tenant."""
    return {"Put": {"TableName": _table(), "Item": to_item(tenant),
                    "ConditionExpression": "attribute_not_exists(id)"}}


def get(tenant_id: str) -> dict[str, Any] | None:
    answer = aws.client("dynamodb").get_item(TableName=_table(), Key={"id": {"S": tenant_id}})
    return from_item(answer.get("Item"))


SECTIONS = ("settings", "regionPreferences", "storage")  # the parts of a tenant set as a whole


def set_section(tenant_id: str, section: str, value: dict[str, Any], updated_at: str) -> dict[str, Any]:
    """Replace one section of an existing tenant; the tenant as it is now."""
    if section not in SECTIONS:
        raise ValueError(section)
    try:
        answer = aws.client("dynamodb").update_item(
            TableName=_table(), Key={"id": {"S": tenant_id}},
            UpdateExpression="SET #section = :value, updated_at = :at",
            ConditionExpression="attribute_exists(id)",
            ExpressionAttributeNames={"#section": section},
            ExpressionAttributeValues=values(value=value, at=updated_at), ReturnValues="ALL_NEW")
    except Exception as exc:
        if is_condition_failure(exc):
            raise ConditionFailed() from None
        raise
    return from_item(answer["Attributes"])


def consistent_read(tenant_id: str) -> ItemRead:
    """The tenant's item, for common.read_items (read with other items in one round trip)."""
    return ItemRead(_table(), {"id": {"S": tenant_id}}, from_item)


def get_consistent(tenant_id: str) -> dict[str, Any] | None:
    answer = aws.client("dynamodb").get_item(TableName=_table(), Key={"id": {"S": tenant_id}}, ConsistentRead=True)
    return from_item(answer.get("Item"))


def set_fields(tenant_id: str, **fields: Any) -> dict[str, Any]:
    """Set top-level attributes (plan, status, updated_at) of an existing tenant."""
    names = {f"#{k}": k for k in fields}
    try:
        answer = aws.client("dynamodb").update_item(
            TableName=_table(), Key={"id": {"S": tenant_id}},
            UpdateExpression="SET " + ", ".join(f"#{k} = :{k}" for k in fields),
            ConditionExpression="attribute_exists(id)", ExpressionAttributeNames=names,
            ExpressionAttributeValues=values(**fields), ReturnValues="ALL_NEW")
    except Exception as exc:
        if is_condition_failure(exc):
            raise ConditionFailed() from None
        raise
    return from_item(answer["Attributes"])
