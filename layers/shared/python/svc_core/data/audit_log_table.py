"""The audit log table: security-relevant actions of a tenant, append-only.

Partition tenantId, sort id (aud_ ULID: time-ordered, so a time range is a key range). Item: the
entry as domain/audit.py builds it {id, tenantId, action, actor, target, changes, sourceIp,
requestId, created_at} and ttl (its time + the retention). Entries are only ever put, with a
condition that the id is new, in the same transaction as the change they record; nothing here
updates or deletes one, and template.yaml gives no function the right to.
"""

from __future__ import annotations

from typing import Any

from svc_core.data.table import Table


def _shown(record: dict[str, Any]) -> dict[str, Any]:
    """An entry made outside a request (the service's own change) stores no requestId (a None is not
    stored): it reads as null, as the document's AuditEntry requires the field."""
    return {"requestId": None, **record}


_TABLE = Table("audit_log_table", ("tenantId", "id"), private=("ttl",), shown=_shown)


def put_entry(entry: dict[str, Any], expires_at: int) -> dict[str, Any]:
    """A TransactWriteItems entry that appends one audit entry."""
    return _TABLE.put_entry({**entry, "ttl": expires_at}, ConditionExpression="attribute_not_exists(id)")


_READS_PER_PAGE = 5   # a filtered page reads at most this many times before it answers short


def query(tenant_id: str, *, low: str, high: str, limit: int, now: float, after: str | None = None,
          actor: str | None = None, action: str | None = None, target: str | None = None
          ) -> tuple[list[dict[str, Any]], str | None]:
    """The tenant's entries with low <= id <= high, newest first, continuing after the id `after`,
    by this actor (its id), of this action and about this target (its id) only when given; at most
    `limit`, and the id of the last entry read when more may follow (a filtered page may be short).
    An entry past its retention is not shown, whether or not the TTL removed it yet."""
    names: dict[str, str] = {"#ttl": "ttl"}
    vals: dict[str, Any] = {":now": {"N": str(int(now))}}
    conditions = ["#ttl > :now"]
    for name, path, value in (("actor", "#actor.#id", actor), ("action", "#action", action),
                              ("target", "#target.#id", target)):
        if value is not None:
            names.update({f"#{part}": part for part in path.replace("#", "").split(".")})
            vals[f":{name}"] = {"S": value}
            conditions.append(f"{path} = :{name}")
    return _TABLE.range_page(tenant_id, low, high, newest_first=True, limit=limit, after=after,
                             reads=_READS_PER_PAGE, FilterExpression=" AND ".join(conditions),
                             ExpressionAttributeNames=names, ExpressionAttributeValues=vals)
