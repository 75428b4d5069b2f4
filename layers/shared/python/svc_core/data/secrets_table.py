"""The secrets table: partition tenantId, sort sk. Two kinds of item per secret:

    SECRET#<id>             the secret: id (`sec_` + a ULID, so reverse order is newest first), name,
                            description, version, the value sealed (svc_core/adapters/sealing.py, never in
                            clear), created_at, updated_at
    NAME#<name lower-cased> the claim of its name: secretId

A secret and its name claim are written and deleted together in one transaction, each write
conditional, so a name is used at most once per tenant (case-insensitively) and a change is
made only to the version the caller read.
"""

from __future__ import annotations

from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import from_item, to_item, values
from svc_core.data.common import projection, query_page, transact
from svc_core.platform.config import settings

SECRET, NAME = "SECRET#", "NAME#"
# What a list reads: the sealed value stays in the table.
_LISTED = ("id", "name", "description", "version", "created_at", "updated_at")


def _table() -> str:
    return settings().secrets_table


def _key(tenant_id: str, sort_key: str) -> dict[str, Any]:
    return {"tenantId": {"S": tenant_id}, "sk": {"S": sort_key}}


def _secret_key(tenant_id: str, secret_id: str) -> dict[str, Any]:
    return _key(tenant_id, SECRET + secret_id)


def _name_key(tenant_id: str, name: str) -> dict[str, Any]:
    return _key(tenant_id, NAME + name.lower())


def _public(item: dict[str, Any]) -> dict[str, Any]:
    record = from_item(item)
    record.pop("tenantId", None)
    record.pop("sk", None)
    return record


def get(tenant_id: str, secret_id: str) -> dict[str, Any] | None:
    """The secret with its sealed value, or None."""
    answer = aws.client("dynamodb").get_item(TableName=_table(), Key=_secret_key(tenant_id, secret_id),
                                             ConsistentRead=True)
    item = answer.get("Item")
    return _public(item) if item else None


def id_of_name(tenant_id: str, name: str) -> str | None:
    """The id of the secret that holds this name (any case), or None."""
    answer = aws.client("dynamodb").get_item(TableName=_table(), Key=_name_key(tenant_id, name),
                                             ConsistentRead=True)
    item = answer.get("Item")
    return from_item(item)["secretId"] if item else None


def list_for_tenant(tenant_id: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """Newest first, after the secret id `after` (the last of the previous page, or any position)."""
    query = {"TableName": _table(), "KeyConditionExpression": "tenantId = :t AND begins_with(sk, :kind)",
             "ExpressionAttributeValues": values(t=tenant_id, kind=SECRET), "ScanIndexForward": False,
             "Limit": limit, **projection(_LISTED)}
    return query_page(query, _secret_key(tenant_id, after) if after else None, _public)


def create(tenant_id: str, secret: dict[str, Any], answer: dict[str, Any] | None = None) -> None:
    """Store the secret and claim its name; ConditionFailed (nothing stored) when the name is taken.
    `answer`: the request's answer (never the value), kept with the write (common.transact)."""
    transact([
        {"Put": {"TableName": _table(), "Item": to_item({"tenantId": tenant_id, "sk": SECRET + secret["id"], **secret}),
                 "ConditionExpression": "attribute_not_exists(sk)"}},
        {"Put": {"TableName": _table(),
                 "Item": to_item({"tenantId": tenant_id, "sk": NAME + secret["name"].lower(), "secretId": secret["id"]}),
                 "ConditionExpression": "attribute_not_exists(sk)"}},
    ], answer=answer)


def replace(tenant_id: str, secret: dict[str, Any], seen_version: int, seen_updated_at: str) -> None:
    """Store the new state if the stored one is still the one the caller read (else ConditionFailed)."""
    transact([
        {"Put": {"TableName": _table(), "Item": to_item({"tenantId": tenant_id, "sk": SECRET + secret["id"], **secret}),
                 "ConditionExpression": "version = :v AND updated_at = :u",
                 "ExpressionAttributeValues": values(v=seen_version, u=seen_updated_at)}},
    ])


def delete(tenant_id: str, secret_id: str, name: str, seen_version: int, seen_updated_at: str) -> None:
    """Delete the secret and free its name, both or neither (ConditionFailed)."""
    transact([
        {"Delete": {"TableName": _table(), "Key": _secret_key(tenant_id, secret_id),
                    "ConditionExpression": "version = :v AND updated_at = :u",
                    "ExpressionAttributeValues": values(v=seen_version, u=seen_updated_at)}},
        {"Delete": {"TableName": _table(), "Key": _name_key(tenant_id, name),
                    "ConditionExpression": "secretId = :id", "ExpressionAttributeValues": values(id=secret_id)}},
    ])
