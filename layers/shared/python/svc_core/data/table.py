"""One table as its data module sees it: its name, its key, and how its items are shown.

Each table module builds one Table and keeps its own functions (the names its callers use) thin
over it: the key built from its parts, a read by key, a page of a partition newest first, and
conditional writes that answer ConditionFailed. What is particular to a table (its transactions,
its conditions, its indexes) stays in its module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import from_item, to_attr, to_item, values
from svc_core.data.common import ItemRead, conditional, create_item, projection, query_page, read_item, transact
from svc_core.platform.config import settings


@dataclass(frozen=True)
class Table:
    """setting: the Settings field that names the table (its environment variable in capitals);
    key_names: the partition key's attribute, then the sort key's when there is one;
    private: attributes the table keeps to itself (never in what a read answers);
    listed: the attributes a page reads (None: all; a list leaves sealed values in the table);
    shown: what a read does to a record after the private attributes are dropped (defaults)."""
    setting: str
    key_names: tuple[str, ...]
    private: tuple[str, ...] = ()
    listed: tuple[str, ...] | None = None
    shown: Callable[[dict[str, Any]], dict[str, Any]] | None = None

    @property
    def name(self) -> str:
        return getattr(settings(), self.setting)

    def key(self, *parts: str | int) -> dict[str, Any]:
        """The key of the item whose key attributes have these values, in key_names' order."""
        return {name: to_attr(part) for name, part in zip(self.key_names, parts, strict=True)}

    def public(self, item: dict[str, Any]) -> dict[str, Any]:
        """A stored item as the table's readers see it."""
        record = from_item(item)
        for name in self.private:
            record.pop(name, None)
        return self.shown(record) if self.shown else record

    def get(self, *parts: str | int) -> dict[str, Any] | None:
        """The item with this key, read consistently; None when absent."""
        return read_item(self.name, self.key(*parts), self.public)

    def read(self, *parts: str | int) -> ItemRead:
        """The item with this key, for common.read_items (read with other items in one round trip)."""
        return ItemRead(self.name, self.key(*parts), self.public)

    def page(self, partition: str, limit: int, after: str | None, *, prefix: str = "",
             **query: Any) -> tuple[list[dict[str, Any]], str | None]:
        """One page of a partition's items whose sort key is prefix + an id, newest first (ids are
        ULIDs; `ScanIndexForward=True` reads oldest first), after the id `after`: the items and the
        last one's id when more may follow."""
        partition_key, sort_key = self.key_names
        request = {"TableName": self.name, "ScanIndexForward": False, "Limit": limit,
                   "KeyConditionExpression": f"{partition_key} = :p"
                                             + (f" AND begins_with({sort_key}, :prefix)" if prefix else ""),
                   "ExpressionAttributeValues": values(p=partition, **({"prefix": prefix} if prefix else {})),
                   **(projection(self.listed) if self.listed else {}), **query}
        return query_page(request, self.key(partition, prefix + after) if after else None, self.public)

    def range_page(self, partition: str, low: str, high: str, *, newest_first: bool, limit: int,
                   after: str | None, reads: int, **query: Any) -> tuple[list[dict[str, Any]], str | None]:
        """A partition's items with low <= sort key <= high, in order (or reversed), read
        consistently, continuing after the sort key `after`, through a FilterExpression in `query`
        (its names and values too): at most `limit` items in at most `reads` Query calls, and the
        sort key of the last item read when more may follow (a filtered page may be short, and go
        on after an item not shown)."""
        if after is not None:
            # DynamoDB refuses a start key outside the key condition, and one on the range's far end
            # too ("does not match the range"): at or past the far end nothing follows; before the
            # near end, the page starts at that end.
            if (after <= low) if newest_first else (after >= high):
                return [], None
            if (after > high) if newest_first else (after < low):
                after = None
        if low > high:
            return [], None
        partition_key, sort_key = self.key_names
        request: dict[str, Any] = {
            **query, "TableName": self.name, "ScanIndexForward": not newest_first, "ConsistentRead": True,
            "KeyConditionExpression": "#pk = :pk AND #sk BETWEEN :low AND :high",
            "ExpressionAttributeNames": {**query.get("ExpressionAttributeNames", {}), "#pk": partition_key,
                                         "#sk": sort_key},
            "ExpressionAttributeValues": {**query.get("ExpressionAttributeValues", {}),
                                          **values(pk=partition, low=low, high=high)}}
        items: list[dict[str, Any]] = []
        last = after
        for _ in range(reads):
            request["Limit"] = limit - len(items)
            if last:
                request["ExclusiveStartKey"] = self.key(partition, last)
            answer = aws.client("dynamodb").query(**request)
            items += [self.public(i) for i in answer.get("Items", [])]
            evaluated = answer.get("LastEvaluatedKey")
            if not evaluated:
                return items, None
            last = evaluated[sort_key]["S"]
            if len(items) >= limit:
                break
        return items, last

    def list_for_tenant(self, tenant_id: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
        """A page of a table partitioned by tenantId and sorted by id: the tenant's items newest
        first, after the id `after` (the last of the previous page, or any position)."""
        return self.page(tenant_id, limit, after)

    def create(self, record: dict[str, Any], answer: dict[str, Any] | None = None,
               also: Sequence[dict[str, Any]] = ()) -> None:
        """Store a new item unless one with its key exists (ConditionFailed); `answer`: the request's
        answer, kept with the write (common.create_item); `also`: more items of the same transaction
        (an audit entry, which is then the write's witness: common.transact)."""
        if also:
            transact([self.put_entry(record, ConditionExpression=f"attribute_not_exists({self.key_names[-1]})"),
                      *also], answer=answer)
            return
        create_item(self.name, to_item(record), self.key_names[-1], answer=answer)

    def put(self, record: dict[str, Any], **condition: Any) -> None:
        """Write the whole item, when the condition holds (else ConditionFailed)."""
        conditional(aws.client("dynamodb").put_item, TableName=self.name, Item=to_item(record), **condition)

    def update(self, key: dict[str, Any], **request: Any) -> dict[str, Any] | None:
        """UpdateItem on one item; ConditionFailed when its condition fails. With ReturnValues, the
        item's attributes as the table shows them."""
        answer = conditional(aws.client("dynamodb").update_item, TableName=self.name, Key=key, **request)
        return self.public(answer["Attributes"]) if "Attributes" in answer else None

    def delete(self, key: dict[str, Any], **condition: Any) -> None:
        """Delete one item, when the condition holds (else ConditionFailed)."""
        conditional(aws.client("dynamodb").delete_item, TableName=self.name, Key=key, **condition)

    def put_entry(self, record: dict[str, Any], **condition: Any) -> dict[str, Any]:
        """A TransactWriteItems entry that writes the whole item (when the condition holds)."""
        return {"Put": {"TableName": self.name, "Item": to_item(record), **condition}}

    def update_entry(self, key: dict[str, Any], **request: Any) -> dict[str, Any]:
        return {"Update": {"TableName": self.name, "Key": key, **request}}

    def delete_entry(self, key: dict[str, Any], **condition: Any) -> dict[str, Any]:
        return {"Delete": {"TableName": self.name, "Key": key, **condition}}
