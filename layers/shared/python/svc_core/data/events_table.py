"""The events table: the event log, every published event of a tenant, kept 30 days (TTL).

Partition tenantId, sort id (evt_ ULID: time-ordered, so a time range is a key range). Item: the
event's envelope {id, type, timestamp, tenantId, data} as the bus and the webhooks carry it, with
objectId (the id of the object the event is about, for the objectId filter) and ttl (the event's
time + 30 days, so a repeated write of one event is the same item).

The outbox publisher writes each event here before putting it on the bus, conditional on the id:
a stream record handed back after a failed put writes nothing twice.
"""

from __future__ import annotations

from typing import Any

from svc_core.data.common import ConditionFailed, read_item
from svc_core.data.table import Table

RETENTION_SECONDS = 30 * 86400
_READS_PER_PAGE = 5   # a filtered page reads at most this many times before it answers short
_TABLE = Table("events_table", ("tenantId", "id"), private=("ttl", "objectId"))


def put(payload: dict[str, Any], object_id: str | None, expires_at: int) -> bool:
    """Store one event unless stored already; whether this call stored it."""
    item = {**payload, "objectId": object_id, "ttl": expires_at}
    try:
        _TABLE.put(item, ConditionExpression="attribute_not_exists(id)")
        return True
    except ConditionFailed:
        return False


def get(tenant_id: str, event_id: str, now: float) -> dict[str, Any] | None:
    item = read_item(_TABLE.name, _TABLE.key(tenant_id, event_id), lambda i: i)
    if item is None or int(item.get("ttl", {}).get("N", "0")) <= now:
        return None  # expired, whether or not DynamoDB removed it yet
    return _TABLE.public(item)


def query(tenant_id: str, *, low: str, high: str, newest_first: bool, limit: int, now: float,
          after: str | None = None, event_types: list[str] | None = None, object_id: str | None = None
          ) -> tuple[list[dict[str, Any]], str | None]:
    """Events with low <= id <= high, in id order (or reversed), continuing after the id `after`,
    of these types and this object only when given; at most `limit`, and the id of the last event
    read when more may follow (a filtered page may be short, and go on after an event not shown)."""
    names: dict[str, str] = {"#ttl": "ttl"}
    vals: dict[str, Any] = {":now": {"N": str(int(now))}}
    conditions = ["#ttl > :now"]
    if event_types:
        names["#type"] = "type"
        keys = [f":e{i}" for i in range(len(event_types))]
        vals.update({k: {"S": t} for k, t in zip(keys, event_types, strict=False)})
        conditions.append(f"#type IN ({', '.join(keys)})")
    if object_id is not None:
        vals[":o"] = {"S": object_id}
        conditions.append("objectId = :o")
    return _TABLE.range_page(tenant_id, low, high, newest_first=newest_first, limit=limit, after=after,
                             reads=_READS_PER_PAGE, FilterExpression=" AND ".join(conditions),
                             ExpressionAttributeNames=names, ExpressionAttributeValues=vals)
