"""The webhooks table: a tenant's webhook subscriptions. Partition tenantId, sort id (whk_ ULID).

Item: {tenantId, id, url, events: [names or "*"], enabled, description?, secrets: [{sealed,
created_at, expiresAt (epoch seconds) or null}], failingSince (epoch seconds) or null,
disabledReason or null, disabledAt or null, version, created_at, updated_at}.
Secrets are sealed (svc_core/adapters/sealing.py) with the context {purpose: "webhook-secret", tenantId,
webhookId}; the sealed plaintext is the secret's text in the Standard Webhooks form
("whsec_" + base64), UTF-8. The current one comes first (expiresAt null); several may sign at
once during a rotation (the previous ones until their expiresAt; a write drops the expired).
Writes by the API are conditional on the version read; the delivery side only moves failingSince and enabled.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import values
from svc_core.data.common import ConditionFailed, transact
from svc_core.data.table import Table

_TABLE = Table("webhooks_table", ("tenantId", "id"), private=("tenantId",),
               listed=("id", "url", "events", "enabled", "description", "disabledReason", "disabledAt",
                       "failingSince", "version", "created_at", "updated_at"))  # never the sealed secrets


def _update(tenant_id: str, webhook_id: str, **request: Any) -> dict[str, Any]:
    return _TABLE.update(_TABLE.key(tenant_id, webhook_id), ReturnValues="ALL_NEW", **request)


def create(tenant_id: str, webhook: dict[str, Any], also: Sequence[dict[str, Any]] = ()) -> None:
    """Store a new subscription, with `also` (its audit entry) in the same transaction."""
    _TABLE.create({"tenantId": tenant_id, **webhook}, also=also)


def get(tenant_id: str, webhook_id: str) -> dict[str, Any] | None:
    """The subscription with its sealed secrets, or None."""
    return _TABLE.get(tenant_id, webhook_id)


def list_for_tenant(tenant_id: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """Newest first, after the webhook id `after`, without the sealed secrets."""
    return _TABLE.list_for_tenant(tenant_id, limit, after)


def count_for_tenant(tenant_id: str) -> int:
    """How many subscriptions the tenant has (keys only are read)."""
    query: dict[str, Any] = {"TableName": _TABLE.name, "KeyConditionExpression": "tenantId = :t",
                             "ExpressionAttributeValues": values(t=tenant_id), "Select": "COUNT",
                             "ConsistentRead": True}
    count = 0
    while True:
        answer = aws.client("dynamodb").query(**query)
        count += answer.get("Count", 0)
        if "LastEvaluatedKey" not in answer:
            return count
        query["ExclusiveStartKey"] = answer["LastEvaluatedKey"]


def subscribers(tenant_id: str, event_type: str) -> list[dict[str, Any]]:
    """Every enabled subscription of the tenant that wants this event type (or "*"), secrets
    included: what the fan-out needs. A tenant has few subscriptions: all pages are read."""
    found: list[dict[str, Any]] = []
    query: dict[str, Any] = {"TableName": _TABLE.name, "KeyConditionExpression": "tenantId = :t",
                             "ExpressionAttributeValues": values(t=tenant_id)}
    while True:
        answer = aws.client("dynamodb").query(**query)
        found += [_TABLE.public(i) for i in answer.get("Items", [])]
        if "LastEvaluatedKey" not in answer:
            break
        query["ExclusiveStartKey"] = answer["LastEvaluatedKey"]
    return [w for w in found if w.get("enabled") and (event_type in w["events"] or "*" in w["events"])]


def replace(tenant_id: str, webhook: dict[str, Any], expected_version: int,
            also: Sequence[dict[str, Any]] = ()) -> None:
    """Write the whole subscription (the API's changes), if nobody changed it since it was read,
    with `also` (the audit entry) in the same transaction."""
    transact([_TABLE.put_entry({"tenantId": tenant_id, **webhook},
                               ConditionExpression="attribute_exists(id) AND version = :v",
                               ExpressionAttributeValues=values(v=expected_version)), *also])


def delete(tenant_id: str, webhook_id: str, also: Sequence[dict[str, Any]] = ()) -> None:
    transact([_TABLE.delete_entry(_TABLE.key(tenant_id, webhook_id), ConditionExpression="attribute_exists(id)"),
              *also])


# ---- what deliveries change ----------------------------------------------------------------

def mark_failing(tenant_id: str, webhook_id: str, since: int) -> dict[str, Any]:
    """Start the failing streak at `since`, unless one is running already (a stored null is none:
    if_not_exists would keep it). Returns the subscription; ConditionFailed when it is gone."""
    try:
        return _update(tenant_id, webhook_id, UpdateExpression="SET failingSince = :s",
                       ConditionExpression="attribute_exists(id) AND (attribute_not_exists(failingSince) "
                                           "OR attribute_type(failingSince, :null))",
                       ExpressionAttributeValues=values(s=since, null="NULL"))
    except ConditionFailed:
        current = get(tenant_id, webhook_id)  # a streak is running (or the subscription is gone)
        if current is None:
            raise
        return current


def clear_failing(tenant_id: str, webhook_id: str) -> None:
    """A delivery succeeded: the streak ends."""
    try:
        _update(tenant_id, webhook_id, UpdateExpression="REMOVE failingSince",
                ConditionExpression="attribute_exists(id) AND attribute_exists(failingSince)")
    except ConditionFailed:
        pass  # deleted, or no streak: nothing to end


def disable(tenant_id: str, webhook_id: str, reason: str, at: str) -> dict[str, Any]:
    """Stop deliveries to this subscription and say why (the tenant sees it; PATCH enabled re-enables)."""
    return _update(tenant_id, webhook_id,
                   UpdateExpression="SET enabled = :f, disabledReason = :r, disabledAt = :at, "
                                    "version = version + :one, updated_at = :at REMOVE failingSince",
                   ConditionExpression="attribute_exists(id)",
                   ExpressionAttributeValues=values(f=False, r=reason, at=at, one=1))
