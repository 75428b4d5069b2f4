"""The tenants table: one item per tenant, partition key id."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from svc_core.adapters import aws
from svc_core.adapters.dynamo import from_item, values
from svc_core.data.common import ItemRead, transact
from svc_core.data.table import Table

_TABLE = Table("tenants_table", ("id",))


def put_new(tenant: dict[str, Any]) -> dict[str, Any]:
    """A TransactWriteItems entry that creates a tenant."""
    return _TABLE.put_entry(tenant, ConditionExpression="attribute_not_exists(id)")


def get(tenant_id: str) -> dict[str, Any] | None:
    answer = aws.client("dynamodb").get_item(TableName=_TABLE.name, Key=_TABLE.key(tenant_id))
    return from_item(answer.get("Item"))


SECTIONS = ("settings", "regionPreferences", "storage")  # the parts of a tenant set as a whole


def set_section(tenant_id: str, section: str, value: dict[str, Any], updated_at: str,
                also: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """Replace one section of an existing tenant, with `also` (the audit entry) in the same
    transaction; the tenant as it is now."""
    if section not in SECTIONS:
        raise ValueError(section)
    return _changed(tenant_id, also, UpdateExpression="SET #section = :value, updated_at = :at",
                    ConditionExpression="attribute_exists(id)", ExpressionAttributeNames={"#section": section},
                    ExpressionAttributeValues=values(value=value, at=updated_at))


def _changed(tenant_id: str, also: Sequence[dict[str, Any]], **update: Any) -> dict[str, Any]:
    """One update of the tenant (ConditionFailed when its condition fails): alone, or in one
    transaction with `also`; the tenant as it is now."""
    if not also:
        return _TABLE.update(_TABLE.key(tenant_id), ReturnValues="ALL_NEW", **update)
    transact([_TABLE.update_entry(_TABLE.key(tenant_id), **update), *also])
    return _TABLE.get(tenant_id)


def consistent_read(tenant_id: str) -> ItemRead:
    """The tenant's item, for common.read_items (read with other items in one round trip)."""
    return _TABLE.read(tenant_id)


def get_consistent(tenant_id: str) -> dict[str, Any] | None:
    return _TABLE.get(tenant_id)


def set_fields(tenant_id: str, also: Sequence[dict[str, Any]] = (), **fields: Any) -> dict[str, Any]:
    """Set top-level attributes (plan, status, updated_at) of an existing tenant, with `also` (the
    audit entry) in the same transaction."""
    names = {f"#{k}": k for k in fields}
    return _changed(tenant_id, also, UpdateExpression="SET " + ", ".join(f"#{k} = :{k}" for k in fields),
                    ConditionExpression="attribute_exists(id)", ExpressionAttributeNames=names,
                    ExpressionAttributeValues=values(**fields))


# Counters on the tenant item, changed in the same transaction as what they count, with a condition
# that keeps them within bounds (a limit reached fails the whole transaction: ConditionFailed):
# - seatsUsed: members plus open invitations (the plan's seats bound it);
# - owners: members whose role is owner (never below one);
# - projectCount: live projects (the plan's projects bound it).
# A tenant written before a counter existed has none: it counts as COUNTER_DEFAULTS says.
COUNTER_DEFAULTS = {"seatsUsed": 1, "owners": 1, "projectCount": 0}


def count_entry(tenant_id: str, counter: str, delta: int, *, at_most: int | None = None,
                at_least: int | None = None) -> dict[str, Any]:
    """A TransactWriteItems entry adding delta to one of the tenant's counters, only if the result
    stays within at_most / at_least (None: unbounded) and the tenant exists."""
    return counts_entry(tenant_id, Count(counter, delta, at_most, at_least))


class Count(NamedTuple):
    """One counter's change in counts_entry: delta, and the bounds the result must stay within."""
    counter: str
    delta: int
    at_most: int | None = None
    at_least: int | None = None


def counts_entry(tenant_id: str, *changes: Count) -> dict[str, Any]:
    """count_entry for several counters at once (a transaction may touch the tenant's item only once:
    a removed owner frees a seat and leaves one owner fewer)."""
    conditions, vals, names, sets = ["attribute_exists(id)"], {}, {}, []
    for i, change in enumerate(changes):
        start = COUNTER_DEFAULTS[change.counter]
        names[f"#c{i}"] = change.counter
        vals.update({f"start{i}": start, f"delta{i}": change.delta})
        sets.append(f"#c{i} = if_not_exists(#c{i}, :start{i}) + :delta{i}")
        # The bound is on the value before the change: value + delta <= at_most  <=>  value <= at_most - delta.
        for bound, op, word in ((change.at_most, "<=", "most"), (change.at_least, ">=", "least")):
            if bound is None:
                continue
            limit = bound - change.delta
            vals[f"{word}{i}"] = limit
            holds_now = start <= limit if op == "<=" else start >= limit
            absent = f"attribute_not_exists(#c{i}) OR " if holds_now else f"attribute_exists(#c{i}) AND "
            conditions.append(f"({absent}#c{i} {op} :{word}{i})")
    return _TABLE.update_entry(_TABLE.key(tenant_id), UpdateExpression="SET " + ", ".join(sets),
                               ConditionExpression=" AND ".join(conditions), ExpressionAttributeNames=names,
                               ExpressionAttributeValues=values(**vals))
