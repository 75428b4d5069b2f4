"""The projects table: partition tenantId, sort id (a ULID, so reverse order is newest first).

Every write goes in one transaction with its outbox event (see outbox_table), and every
update or delete is conditional on the version the caller read, so the event describes
exactly the change that was made. A create or delete also moves the tenant's projectCount
(tenants_table.count_entry) in its transaction: the plan's project quota.
"""

from __future__ import annotations

from typing import Any

from svc_core.adapters.dynamo import values
from svc_core.data import outbox_table, tenants_table
from svc_core.data.common import transact
from svc_core.data.table import Table

_TABLE = Table("projects_table", ("tenantId", "id"), private=("tenantId",))


def get(tenant_id: str, project_id: str) -> dict[str, Any] | None:
    return _TABLE.get(tenant_id, project_id)


def list_for_tenant(tenant_id: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
    return _TABLE.list_for_tenant(tenant_id, limit, after)


def create(tenant_id: str, project: dict[str, Any], event: dict[str, Any], now: float,
           answer: dict[str, Any] | None = None, *, plan: str | None = None, limit: int | None = None) -> None:
    """The project, its event and one more in the tenant's projectCount, up to `limit` (None: no
    limit) while the tenant is on `plan` (what the limit was read from); `answer`: the request's
    answer, kept with the write (common.transact). ConditionFailed when a condition fails."""
    transact([
        _TABLE.put_entry({"tenantId": tenant_id, **project}, ConditionExpression="attribute_not_exists(id)"),
        tenants_table.count_entry(tenant_id, "projectCount", 1, at_most=limit, plan=plan),
        outbox_table.put_event_item(event, now),
    ], answer=answer)


def replace(tenant_id: str, project: dict[str, Any], seen_updated_at: str, event: dict[str, Any],
            now: float) -> None:
    """Store the new version if the stored one is still the version the caller read."""
    transact([
        _TABLE.put_entry({"tenantId": tenant_id, **project}, ConditionExpression="updated_at = :seen",
                         ExpressionAttributeValues=values(seen=seen_updated_at)),
        outbox_table.put_event_item(event, now),
    ])


def delete(tenant_id: str, project_id: str, seen_updated_at: str, event: dict[str, Any], now: float, *,
           counted: bool = True) -> None:
    """Delete the project if it is still the version the caller read, with its event, giving its
    place in the tenant's projectCount back (counted=False: leave the count, which is at 0 already:
    a project made before projects were counted)."""
    transact([
        _TABLE.delete_entry(_TABLE.key(tenant_id, project_id), ConditionExpression="updated_at = :seen",
                            ExpressionAttributeValues=values(seen=seen_updated_at)),
        *([tenants_table.count_entry(tenant_id, "projectCount", -1, at_least=0)] if counted else []),
        outbox_table.put_event_item(event, now),
    ])
