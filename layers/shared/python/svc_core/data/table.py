"""One table as its data module sees it: its name, its key, and how its items are shown.

Each table module builds one Table and keeps its own functions (the names its callers use) thin
over it: the key built from its parts, a read by key, a page of a partition newest first, and
conditional writes that answer ConditionFailed. What is particular to a table (its transactions,
its conditions, its indexes) stays in its module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import from_item, to_attr, to_item, values
from svc_core.data.common import ItemRead, conditional, create_item, projection, query_page, read_item
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

    def list_for_tenant(self, tenant_id: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
        """A page of a table partitioned by tenantId and sorted by id: the tenant's items newest
        first, after the id `after` (the last of the previous page, or any position)."""
        return self.page(tenant_id, limit, after)

    def create(self, record: dict[str, Any], answer: dict[str, Any] | None = None) -> None:
        """Store a new item unless one with its key exists (ConditionFailed); `answer`: the request's
        answer, kept with the write (common.create_item)."""
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
