"""The invitations table (partition tenantId, sort id): a tenant's invitations to join it.

An item: id (ivt_…), email (as typed), emailKey (its normalised form), role, status (pending,
accepted, revoked, expired), invitedBy, created_at, sent_at, expiresAt (epoch seconds), secretHash
(the SHA-256 of the one live link's token; the token itself is never stored). A pending invitation
has no ttl: it holds a seat until it is accepted, revoked or found expired, and DynamoDB must not
drop it before its seat is given back. A settled one gets a ttl (SETTLED_DAYS later).
The byId index (id -> tenantId, keys only) finds an invitation from its token, which names the id only.
"""

from __future__ import annotations

from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import from_item, values
from svc_core.data.table import Table

_TABLE = Table("invitations_table", ("tenantId", "id"), private=("ttl", "secretHash"))
SETTLED_DAYS = 90   # how long an accepted, revoked or expired invitation stays listed


def put_new_entry(tenant_id: str, record: dict[str, Any]) -> dict[str, Any]:
    """A TransactWriteItems entry creating a pending invitation."""
    return _TABLE.put_entry({"tenantId": tenant_id, **record}, ConditionExpression="attribute_not_exists(id)")


def get(tenant_id: str, invitation_id: str) -> dict[str, Any] | None:
    """The invitation read consistently, with its secretHash (for the domain's check only)."""
    item = aws.client("dynamodb").get_item(TableName=_TABLE.name, Key=_TABLE.key(tenant_id, invitation_id),
                                           ConsistentRead=True).get("Item")
    if not item:
        return None
    record = from_item(item)
    record.pop("ttl", None)
    return record


def tenant_of(invitation_id: str) -> str | None:
    """The tenant an invitation belongs to (the byId index; None: no such invitation)."""
    answer = aws.client("dynamodb").query(
        TableName=_TABLE.name, IndexName="byId", KeyConditionExpression="id = :id",
        ExpressionAttributeValues=values(id=invitation_id), Limit=1)
    items = answer.get("Items", [])
    return items[0]["tenantId"]["S"] if items else None


def list_for_tenant(tenant_id: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """A page of the tenant's invitations, newest first (no secret hash)."""
    return _TABLE.list_for_tenant(tenant_id, limit, after)


def pending_expired(tenant_id: str, now: int) -> list[dict[str, Any]]:
    """Every pending invitation of the tenant whose link expired by `now` (read consistently)."""
    request: dict[str, Any] = {
        "TableName": _TABLE.name, "KeyConditionExpression": "tenantId = :t", "ConsistentRead": True,
        "FilterExpression": "#s = :pending AND expiresAt <= :now", "ExpressionAttributeNames": {"#s": "status"},
        "ExpressionAttributeValues": values(t=tenant_id, pending="pending", now=now),
        "ProjectionExpression": "id, expiresAt, #s"}
    found: list[dict[str, Any]] = []
    while True:
        answer = aws.client("dynamodb").query(**request)
        found += [from_item(item) for item in answer.get("Items", [])]
        if "LastEvaluatedKey" not in answer:
            return found
        request["ExclusiveStartKey"] = answer["LastEvaluatedKey"]


def settle_entry(tenant_id: str, invitation_id: str, *, status: str, expected_status: str, at: str, now: int,
                 secret_hash: str | None = None, not_expired_at: int | None = None,
                 expired_by: int | None = None) -> dict[str, Any]:
    """A TransactWriteItems entry moving the invitation from expected_status to status (accepted,
    revoked, expired), only if it is still in expected_status and, when given, still carries
    secret_hash (the link presented is the live one), has not expired at not_expired_at, or had
    expired by expired_by. The settled item is dropped SETTLED_DAYS later."""
    condition = ["#s = :expected"]
    vals: dict[str, Any] = {"status": status, "expected": expected_status, "at": at,
                            "ttl": now + SETTLED_DAYS * 86400}
    if secret_hash is not None:
        condition.append("secretHash = :hash")
        vals["hash"] = secret_hash
    if not_expired_at is not None:
        condition.append("expiresAt > :now")
        vals["now"] = not_expired_at
    if expired_by is not None:
        condition.append("expiresAt <= :by")
        vals["by"] = expired_by
    return _TABLE.update_entry(
        _TABLE.key(tenant_id, invitation_id),
        UpdateExpression="SET #s = :status, updated_at = :at, #ttl = :ttl REMOVE secretHash",
        ConditionExpression=" AND ".join(condition), ExpressionAttributeNames={"#s": "status", "#ttl": "ttl"},
        ExpressionAttributeValues=values(**vals))


def renew_entry(tenant_id: str, invitation_id: str, *, expected_status: str, secret_hash: str, expires_at: int,
                at: str) -> dict[str, Any]:
    """A TransactWriteItems entry giving the invitation a new link (the old one dies) and a new expiry,
    pending again, only if it is still in expected_status (pending, or expired once its seat was freed)."""
    return _TABLE.update_entry(
        _TABLE.key(tenant_id, invitation_id),
        UpdateExpression="SET #s = :pending, secretHash = :hash, expiresAt = :exp, sent_at = :at, updated_at = :at "
                         "REMOVE #ttl",
        ConditionExpression="#s = :expected", ExpressionAttributeNames={"#s": "status", "#ttl": "ttl"},
        ExpressionAttributeValues=values(pending="pending", hash=secret_hash, exp=expires_at, at=at,
                                         expected=expected_status))
