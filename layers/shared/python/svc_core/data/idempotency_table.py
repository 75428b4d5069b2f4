"""The idempotency table: one record per (tenant, operation, Idempotency-Key), svc_core/http/idempotency.py's.

A record is claimed (PENDING, with a token of the request holding it, until `pendingUntil`) before
the request's work runs. Every write of the work that goes through common.transact or
common.create_item carries an update of the record in the same transaction (fence_item): the write
commits only while the record is still this request's, and when it commits the record says so
(COMMITTED, with the answer the write stands for when the caller gave one). The request then
stores its answer (COMPLETED). So a write whose answer was lost (the datastore stalled and the
request answered 503) is known from the record when the key comes back, and a claim taken over
after its time (by a retry) leaves the stalled request's late write nothing to commit.

Items: id (the key's hash), status, token, payload (the body's hash), pendingUntil, answer (JSON
text), expiration (the table's TTL: 24 hours after the claim).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from svc_core.adapters import aws
from svc_core.data.common import conditional, read_item
from svc_core.data.table import Table

PENDING, COMMITTED, COMPLETED = "PENDING", "COMMITTED", "COMPLETED"
_TABLE = Table("idempotency_table", ("id",))


@dataclass(frozen=True)
class Record:
    status: str
    token: str
    payload: str
    pending_until: float
    expiration: int
    answer: dict[str, Any] | None

    def running(self, now: float) -> bool:
        """Whether the claiming request may still be running (its writes may have committed already)."""
        return self.status != COMPLETED and self.pending_until > now


def get(record_id: str, now: float) -> Record | None:
    """The record of a key, None when there is none (or only an expired one the TTL has not removed)."""
    item = read_item(_TABLE.name, _TABLE.key(record_id), lambda i: i)
    if not item or int(item["expiration"]["N"]) <= now:
        return None
    answer = item.get("answer", {}).get("S")
    return Record(status=item["status"]["S"], token=item["token"]["S"], payload=item["payload"]["S"],
                  pending_until=float(item["pendingUntil"]["N"]), expiration=int(item["expiration"]["N"]),
                  answer=json.loads(answer) if answer else None)


def claim(record_id: str, token: str, payload: str, now: float, pending_seconds: float, lifetime: int,
          replacing: Record | None) -> None:
    """Make the key this request's: a new record, or one whose earlier claim ended with nothing
    committed (`replacing`, as read). ConditionFailed (common's) when another request got there first."""
    item = {"id": {"S": record_id}, "status": {"S": PENDING}, "token": {"S": token}, "payload": {"S": payload},
            "pendingUntil": {"N": f"{now + pending_seconds:.3f}"}, "expiration": {"N": str(int(now) + lifetime)}}
    if replacing is None:
        condition = {"ConditionExpression": "attribute_not_exists(id) OR expiration <= :now",
                     "ExpressionAttributeValues": {":now": {"N": str(int(now))}}}
    else:
        condition = {"ConditionExpression": "#s = :pending AND #t = :old AND pendingUntil <= :now",
                     "ExpressionAttributeNames": {"#s": "status", "#t": "token"},
                     "ExpressionAttributeValues": {":pending": {"S": PENDING}, ":old": {"S": replacing.token},
                                                   ":now": {"N": f"{now:.3f}"}}}
    conditional(aws.client("dynamodb").put_item, TableName=_TABLE.name, Item=item, **condition)


def fence_item(record_id: str, token: str, answer: dict[str, Any] | None) -> dict[str, Any]:
    """The update a write of the claiming request carries in its transaction (see the docstring)."""
    names = {"#s": "status", "#t": "token"}
    values: dict[str, Any] = {":committed": {"S": COMMITTED}, ":mine": {"S": token}}
    update = "SET #s = :committed"
    if answer is not None:
        update += ", answer = :answer"
        values[":answer"] = {"S": json.dumps(answer, separators=(",", ":"))}
    return _TABLE.update_entry(_TABLE.key(record_id), UpdateExpression=update, ConditionExpression="#t = :mine",
                               ExpressionAttributeNames=names, ExpressionAttributeValues=values)


def complete(record_id: str, token: str, answer: dict[str, Any]) -> None:
    """Store the request's answer: later requests with the key get it."""
    _TABLE.update(_TABLE.key(record_id), UpdateExpression="SET #s = :completed, answer = :answer",
                  ConditionExpression="#t = :mine", ExpressionAttributeNames={"#s": "status", "#t": "token"},
                  ExpressionAttributeValues={":completed": {"S": COMPLETED}, ":mine": {"S": token},
                                             ":answer": {"S": json.dumps(answer, separators=(",", ":"))}})


def release(record_id: str, token: str) -> None:
    """Remove the claim of a request that failed (refused, or an error of ours): the key may be sent again."""
    _TABLE.delete(_TABLE.key(record_id), ConditionExpression="#t = :mine", ExpressionAttributeNames={"#t": "token"},
                  ExpressionAttributeValues={":mine": {"S": token}})
