"""The global directory's replication between the cells of a local stack, as a DynamoDB global table
replicates between its regions.

Each cell's DirectoryTable has its own stream (NEW_AND_OLD_IMAGES); a poller per cell reads it
(devstack/pollers.py, as Lambda would) and hands each change to the replicator, which applies it to
every other cell's table once `lag` seconds have passed since it was read. Last writer wins by the
item's version, (`updatedAt`, `writtenIn`): a put lands only where the cell has no item or an older
version (the region breaks a tie, so two writes of the same instant settle alike everywhere), a
delete only where the cell's item is the version deleted or an older one. A delete leaves no
tombstone: a newer write elsewhere survives it, and reaches the cell that deleted.

Its own writes come back on the target's stream: they are not replicated again. It remembers what
it applied (the item's image, or its removal) and skips the change that matches once; an image whose
`writtenIn` is not the stream's own region was replicated there, and is skipped too.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

import botocore.session
from botocore.config import Config

from devstack.pollers import StreamPoller, log_error

UPDATED_AT, WRITTEN_IN = "updatedAt", "writtenIn"
# The poller's mapping: a failed record is retried (with the poller's back-off), the ones before it are done.
MAPPING = {"BatchSize": 100, "FunctionResponseTypes": ["ReportBatchItemFailures"]}


@dataclass
class Cell:
    """A cell as the replicator reaches it: its region, its DynamoDB endpoint and its directory's name."""
    region: str
    dynamodb_endpoint: str
    table: str

    def clients(self) -> dict[str, Any]:
        session = botocore.session.get_session()
        return {service: session.create_client(service, region_name=self.region, endpoint_url=self.dynamodb_endpoint,
                                               aws_access_key_id="local", aws_secret_access_key="local",
                                               config=Config(retries={"mode": "standard", "max_attempts": 3}))
                for service in ("dynamodb", "dynamodbstreams")}


class Stopping(Exception):
    """The replicator stops while a change waits for its lag: the change stays unapplied."""


class DirectoryReplicator:
    def __init__(self, cells: list[Cell], lag: float = 1.0, log=print) -> None:
        self.cells, self.lag, self.log = cells, lag, log
        self._clients = {cell.region: cell.clients() for cell in cells}
        self._lock = threading.Lock()
        self._applied_here: Counter = Counter()   # (region, fingerprint) of the writes it made, not yet read back
        self._waiting: dict[str, float] = {}      # event id -> when it was first handed over (monotonic)
        self.counts = Counter()                   # applied, superseded, echoes
        self.last_error: str | None = None
        self._stop = threading.Event()
        self.pollers: list[StreamPoller] = []

    def start(self) -> DirectoryReplicator:
        for cell in self.cells:
            self.pollers.append(StreamPoller(
                self._clients[cell.region], cell.table, lambda event, source=cell: self._replicate(source, event),
                MAPPING, log=self.log, function=f"replicator from {cell.region}").start())
        return self

    def stop(self) -> None:
        self._stop.set()
        for poller in self.pollers:
            poller.ask_to_stop()
        for poller in self.pollers:
            poller.stop()

    def status(self) -> dict[str, Any]:
        now = time.monotonic()
        with self._lock:
            oldest = min(self._waiting.values(), default=None)
            pending = len(self._waiting)
        return {"lagSeconds": self.lag, "applied": self.counts["applied"], "pending": pending,
                "superseded": self.counts["superseded"], "echoesSkipped": self.counts["echoes"],
                "lastError": self.last_error,
                "oldestPendingAgeSeconds": None if oldest is None else round(now - oldest, 3),
                "streams": [poller.status() for poller in self.pollers]}

    # -- a stream's batch ---------------------------------------------------------------------
    def _replicate(self, source: Cell, event: dict[str, Any]) -> dict[str, Any]:
        records = event["Records"]
        with self._lock:
            for record in records:
                self._waiting.setdefault(record["eventID"], time.monotonic())
        for record in records:  # in the stream's order; each judged when its turn comes (a retry starts at one)
            try:
                if self._is_echo(source, record):
                    with self._lock:
                        self._waiting.pop(record["eventID"], None)
                    continue
                self._wait_for_lag(record)
                for target in self.cells:
                    if target is not source:
                        self._apply(target, record)
            except Exception as exc:
                if not isinstance(exc, Stopping):
                    self.last_error = f"from {source.region}: {type(exc).__name__}: {exc}"
                    log_error(f"directory replication {self.last_error}")
                # This record and the ones after it come again (a replayed put or delete is refused
                # by its condition once applied, so nothing lands twice).
                return {"batchItemFailures": [{"itemIdentifier": record["dynamodb"]["SequenceNumber"]}]}
            with self._lock:
                self._waiting.pop(record["eventID"], None)
        return {"batchItemFailures": []}

    def _wait_for_lag(self, record: dict[str, Any]) -> None:
        with self._lock:
            due = self._waiting[record["eventID"]] + self.lag
        if self._stop.wait(max(0.0, due - time.monotonic())):
            raise Stopping()

    def _is_echo(self, source: Cell, record: dict[str, Any]) -> bool:
        """A change the replicator made itself in this cell (or one replicated into it)."""
        image = record["dynamodb"].get("NewImage")
        mark = (source.region, _fingerprint(record["dynamodb"]["Keys"], image))
        with self._lock:
            if self._applied_here[mark]:
                self._applied_here[mark] -= 1
                if not self._applied_here[mark]:
                    del self._applied_here[mark]
                self.counts["echoes"] += 1
                return True
            if image is not None and WRITTEN_IN in image and image[WRITTEN_IN].get("S") != source.region:
                self.counts["echoes"] += 1
                return True
        return False

    # -- one change, one target ---------------------------------------------------------------
    def _apply(self, target: Cell, record: dict[str, Any]) -> None:
        ddb = self._clients[target.region]["dynamodb"]
        keys, new = record["dynamodb"]["Keys"], record["dynamodb"].get("NewImage")
        if new is None:  # REMOVE: only the version deleted, or an older one
            condition, names, values = _older_than(record["dynamodb"].get("OldImage") or {}, or_equal=True)
            write = lambda: ddb.delete_item(TableName=target.table, Key=keys, **_expression(  # noqa: E731
                f"attribute_exists(#pk) AND ({condition})", {**names, "#pk": next(iter(keys))}, values))
        else:
            condition, names, values = _older_than(new)
            write = lambda: ddb.put_item(TableName=target.table, Item=new, **_expression(  # noqa: E731
                f"attribute_not_exists(#pk) OR {condition}", {**names, "#pk": next(iter(keys))}, values))
        mark = (target.region, _fingerprint(keys, new))
        with self._lock:  # counted before the write: its stream record may be read before put_item returns
            self._applied_here[mark] += 1
        try:
            write()
        except ddb.exceptions.ConditionalCheckFailedException:
            self._forget(mark)
            with self._lock:
                self.counts["superseded"] += 1
            return
        except Exception:
            self._forget(mark)
            raise
        with self._lock:
            self.counts["applied"] += 1

    def _forget(self, mark: tuple[str, str]) -> None:
        with self._lock:
            self._applied_here[mark] -= 1
            if self._applied_here[mark] <= 0:
                del self._applied_here[mark]


def _version(image: dict[str, Any]) -> tuple[str | None, str | None]:
    return (image.get(UPDATED_AT, {}).get("S"), image.get(WRITTEN_IN, {}).get("S"))


def _older_than(image: dict[str, Any], *, or_equal: bool = False) -> tuple[str, dict[str, str], dict[str, Any]]:
    """A condition true where the item's version is older than the image's (or the same, or_equal); an
    item without a version is the oldest."""
    updated, region = _version(image)
    if updated is None:
        return "attribute_not_exists(#u)", {"#u": UPDATED_AT}, {}
    compare = "<=" if or_equal else "<"
    if region is None:  # a tie is the same version only for a delete
        tie, names, values = ("OR #u = :u" if or_equal else ""), {"#u": UPDATED_AT}, {":u": {"S": updated}}
    else:
        tie = f"OR (#u = :u AND (attribute_not_exists(#w) OR #w {compare} :w))"
        names, values = {"#u": UPDATED_AT, "#w": WRITTEN_IN}, {":u": {"S": updated}, ":w": {"S": region}}
    return f"attribute_not_exists(#u) OR #u < :u {tie}".strip(), names, values


def _expression(condition: str, names: dict[str, str], values: dict[str, Any]) -> dict[str, Any]:
    return {"ConditionExpression": condition, "ExpressionAttributeNames": names,
            **({"ExpressionAttributeValues": values} if values else {})}


def _fingerprint(keys: dict[str, Any], image: dict[str, Any] | None) -> str:
    """The item's key and image (None: its removal), alike however the attributes and a set's members are ordered."""
    def canonical(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: sorted(v) if k in ("SS", "NS", "BS") else canonical(v) for k, v in value.items()}
        if isinstance(value, list):
            return [canonical(v) for v in value]
        return value
    return json.dumps([canonical(keys), canonical(image) if image is not None else "REMOVE"], sort_keys=True)
