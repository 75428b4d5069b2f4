"""The usage table: one item per model call, the single record the billing debits.

Partition tenantId, sort sk = `<ISO time>#<ULID>` (a tenant's calls in time order, so a billing
period is one key range). Item: tenantId, sk, source ("run" | "message"), sourceId (run_… or
msg_…), model, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, estimated,
priceVersion, microCredits, created_at, failed (true: the call failed after the provider had counted or
streamed tokens, and what was received is billed; svc_core/domain/metering.py builds it).

Index bySource (partition sourceId, sort sk) finds a run's or a message's calls; like every
index it is eventually consistent (a record is usually there within a second of its write).
Records are never updated or deleted by the service.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import values
from svc_core.data.table import Table

BY_SOURCE_INDEX = "bySource"
_COUNTS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "microCredits")
_TABLE = Table("usage_table", ("tenantId", "sk"), private=("sk",))


def put_new(usage_record: dict[str, Any]) -> dict[str, Any]:
    """A TransactWriteItems entry storing one call's record, once: the billing writes it in the same
    transaction as the ledger's debit (svc_core/domain/billing_ledger.py), so a record and its
    debit exist together or not at all."""
    return _TABLE.put_entry(usage_record, ConditionExpression="attribute_not_exists(sk)")


def record(usage_record: dict[str, Any]) -> None:
    """Store one call's record (its sort key is new: a write never replaces another record)."""
    aws.client("dynamodb").put_item(**put_new(usage_record)["Put"])


def _pages(query: dict[str, Any]) -> Iterator[dict[str, Any]]:
    while True:
        answer = aws.client("dynamodb").query(**query)
        yield from (_TABLE.public(i) for i in answer.get("Items", []))
        if "LastEvaluatedKey" not in answer:
            return
        query = {**query, "ExclusiveStartKey": answer["LastEvaluatedKey"]}


def records_for(tenant_id: str, source_id: str) -> list[dict[str, Any]]:
    """The calls of one run or message of this tenant, oldest first."""
    return list(_pages({"TableName": _TABLE.name, "IndexName": BY_SOURCE_INDEX,
                        "KeyConditionExpression": "sourceId = :s", "FilterExpression": "tenantId = :t",
                        "ExpressionAttributeValues": values(s=source_id, t=tenant_id)}))


def records_between(tenant_id: str, start_iso: str, end_iso: str) -> list[dict[str, Any]]:
    """A tenant's calls with start_iso <= created_at < end_iso, oldest first (read consistently)."""
    return list(_pages({"TableName": _TABLE.name, "ConsistentRead": True,
                        "KeyConditionExpression": "tenantId = :t AND sk BETWEEN :a AND :b",
                        "FilterExpression": "created_at < :end",
                        "ExpressionAttributeValues": values(t=tenant_id, a=start_iso, b=end_iso + "#~",
                                                            end=end_iso)}))


def summed(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals of some records: the four token counts, microCredits, calls, and whether any was estimated."""
    totals: dict[str, Any] = {name: sum(r.get(name, 0) for r in records) for name in _COUNTS}
    totals["calls"] = len(records)
    totals["estimated"] = any(r.get("estimated") for r in records)
    return totals


def total_for(tenant_id: str, source_id: str) -> dict[str, Any]:
    """What one run or message used and cost: the sum of its records (zero when it has none)."""
    return summed(records_for(tenant_id, source_id))
