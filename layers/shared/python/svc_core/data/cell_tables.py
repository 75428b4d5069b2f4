"""Every table and the files bucket of a cell, this one or another, as a move between cells reads and
writes them (domain/tenant_moves.py): whole items in DynamoDB's own form (a copy keeps every attribute
and type as stored), a tenant's objects, and their deletion. The one data module that speaks to any
table: a move copies items it does not interpret, so it goes through no table's own module.

A Place names a cell's resources: its region, its tables by logical id (template.yaml) and bucket, its
data key, its webhook queues by logical id (data/cell_queues.py sends to them), and on the local stack
the endpoints of its own emulators (a deployed cell's are AWS's regional ones). This cell's is made from
its settings; another's is published in the directory (directory_table.cell_resources), written when that
cell was deployed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from svc_core.adapters import aws
from svc_core.contracts import cells
from svc_core.contracts.tenant_items import TABLE_SETTINGS
from svc_core.data.common import write_batches
from svc_core.platform.config import settings

DIRECTORY = "DirectoryTable"


@dataclass(frozen=True)
class Place:
    region: str
    tables: dict[str, str]           # logical id -> physical name (the directory's too)
    bucket: str
    data_key: str
    endpoints: dict[str, str] = field(default_factory=dict)  # service -> URL (local stack only)
    queues: dict[str, str] = field(default_factory=dict)     # logical id -> URL (the webhook queues)

    def client(self, service: str) -> Any:
        if self.region == cells.here() and not self.endpoints:
            return aws.client(service)
        return aws.client_in(service, self.region, self.endpoints.get(service))

    def view(self) -> dict[str, Any]:
        return {"region": self.region, "tables": self.tables, "bucket": self.bucket, "dataKey": self.data_key,
                **({"endpoints": self.endpoints} if self.endpoints else {}),
                **({"queues": self.queues} if self.queues else {})}

    @classmethod
    def of(cls, view: dict[str, Any]) -> Place:
        return cls(view["region"], dict(view["tables"]), view["bucket"], view["dataKey"], dict(view.get("endpoints") or {}),
                   dict(view.get("queues") or {}))


def here(endpoints: dict[str, str] | None = None) -> Place:
    """This cell's resources, from its settings (endpoints: the local stack's, for another cell to use)."""
    config = settings()
    tables = {logical_id: getattr(config, setting) for logical_id, setting in TABLE_SETTINGS.items()}
    queues = {"WebhookQueue": config.webhook_queue_url, "WebhookDeadLetterQueue": config.webhook_dead_letter_queue_url,
              "WebhookDeliveryQueue": config.webhook_delivery_queue_url,
              "WebhookDeliveryDeadLetterQueue": config.webhook_delivery_dead_letter_queue_url}
    return Place(cells.here(), {**tables, DIRECTORY: config.directory_table}, config.project_files_bucket,
                 config.tenant_data_key_id, endpoints or {}, {k: url for k, url in queues.items() if url})


@cache
def _key_names(region: str, table: str, endpoint: str | None) -> tuple[str, ...]:
    client = aws.client_in("dynamodb", region, endpoint) if endpoint or region != cells.here() \
        else aws.client("dynamodb")
    schema = client.describe_table(TableName=table)["Table"]["KeySchema"]
    return tuple(k["AttributeName"] for k in sorted(schema, key=lambda k: k["KeyType"] != "HASH"))


def key_names(place: Place, logical_id: str) -> tuple[str, ...]:
    return _key_names(place.region, place.tables[logical_id], place.endpoints.get("dynamodb"))


def scan(place: Place, logical_id: str) -> Iterator[dict[str, Any]]:
    """Every item of the table, as stored (read consistently)."""
    client, request = place.client("dynamodb"), {"TableName": place.tables[logical_id], "ConsistentRead": True}
    while True:
        answer = client.scan(**request)
        yield from answer.get("Items", [])
        if not answer.get("LastEvaluatedKey"):
            return
        request["ExclusiveStartKey"] = answer["LastEvaluatedKey"]


def get(place: Place, logical_id: str, key: dict[str, Any]) -> dict[str, Any] | None:
    return place.client("dynamodb").get_item(TableName=place.tables[logical_id], Key=key,
                                             ConsistentRead=True).get("Item")


def _batch(place: Place, logical_id: str, requests: list[dict[str, Any]]) -> None:
    write_batches(place.client("dynamodb"), place.tables[logical_id], requests)


def put_all(place: Place, logical_id: str, items: Iterable[dict[str, Any]]) -> None:
    _batch(place, logical_id, [{"PutRequest": {"Item": item}} for item in items])


def delete_all(place: Place, logical_id: str, keys: Iterable[dict[str, Any]]) -> None:
    _batch(place, logical_id, [{"DeleteRequest": {"Key": key}} for key in keys])


def update(place: Place, logical_id: str, key: dict[str, Any], **request: Any) -> None:
    place.client("dynamodb").update_item(TableName=place.tables[logical_id], Key=key, **request)


# ---- the bucket ---------------------------------------------------------------------------------

def objects(place: Place, prefix: str) -> dict[str, str]:
    """The current objects under the prefix: key -> ETag."""
    found: dict[str, str] = {}
    for page in place.client("s3").get_paginator("list_objects_v2").paginate(Bucket=place.bucket, Prefix=prefix):
        for entry in page.get("Contents", []):
            found[entry["Key"]] = entry["ETag"]
    return found


def copy_object(source: Place, target: Place, key: str) -> None:
    """One object from a cell's bucket to another's (read and written: the buckets are in two regions)."""
    read = source.client("s3").get_object(Bucket=source.bucket, Key=key)
    body = read["Body"].read()
    extra = {"ContentType": read["ContentType"]} if read.get("ContentType") else {}
    target.client("s3").put_object(Bucket=target.bucket, Key=key, Body=body, Metadata=read.get("Metadata") or {},
                                   **extra)


def delete_every_version(place: Place, prefix: str) -> int:
    """Every version and delete marker under the prefix (a noncurrent version is a copy of the data too)."""
    client, removed = place.client("s3"), 0
    for page in client.get_paginator("list_object_versions").paginate(Bucket=place.bucket, Prefix=prefix):
        doomed = [{"Key": v["Key"], "VersionId": v["VersionId"]}
                  for v in [*page.get("Versions", []), *page.get("DeleteMarkers", [])]]
        for i in range(0, len(doomed), 1000):
            client.delete_objects(Bucket=place.bucket, Delete={"Objects": doomed[i:i + 1000], "Quiet": True})
        removed += len(doomed)
    return removed


def has_object(place: Place, key: str) -> bool:
    try:
        place.client("s3").head_object(Bucket=place.bucket, Key=key)
    except place.client("s3").exceptions.ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
            return False
        raise
    return True


def delete_object(place: Place, key: str) -> None:
    """Every version and delete marker of exactly this key (others sharing it as a prefix stay)."""
    client = place.client("s3")
    for page in client.get_paginator("list_object_versions").paginate(Bucket=place.bucket, Prefix=key):
        doomed = [{"Key": v["Key"], "VersionId": v["VersionId"]}
                  for v in [*page.get("Versions", []), *page.get("DeleteMarkers", [])] if v["Key"] == key]
        if doomed:
            client.delete_objects(Bucket=place.bucket, Delete={"Objects": doomed, "Quiet": True})
