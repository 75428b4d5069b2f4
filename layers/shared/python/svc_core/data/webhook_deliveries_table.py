"""The webhook deliveries table: one item per delivery attempt, kept 30 days (TTL).

Partition webhookId, sort attemptKey = "<attemptedAt ms, 13 digits>#<eventId>#<attempt, 2 digits>",
so a webhook's attempts read newest first. Item: {webhookId, attemptKey, tenantId, eventId,
eventType, attempt, outcome (delivered, retrying, failed, disabled, skipped), statusCode or null,
latencyMs or null, error or null, nextRetryAt (ISO) or null, attemptedAt (ISO), ttl}.

Beside them, one mark per event delivered to the webhook, attemptKey = "!delivered#<eventId>"
(which sorts before every attempt, so listings skip the marks with `attemptKey >= "0"`), state
"sending" (with leaseUntil, while one attempt sends it) or "delivered": an event that reaches the
delivery queue twice, even at the same moment (its publisher retried a call that had gone
through), is sent once. A redelivery or a replay sends the event again under its own mark,
"!delivered#<eventId>#<rdl_ or rpl_ id>" (its messages deduplicated the same way), and when it
delivers, sets the event's own mark too (a replay of failed events then passes it by).

A delivery hidden on the queue until its next attempt has "!waiting#<eventId>[#<rdl_ or rpl_ id>]":
{tenantId, eventId, attempt (the failed one), dueAt (epoch seconds), receiptHandle (what SQS answered
the receive that hid it), ttl}, removed when the delivery ends. It is this cell's own queue's: a move
between cells brings the tenant's hidden deliveries back at once with it (so they are sent on to the new
cell with their schedule) and never copies it.

Replays (domain/webhook_replays.py) keep their items here too, beside the marks:
- "!replay#<rpl_ id>": the replay {replayId, tenantId, since, until, onlyFailed, status (running,
  completed), position (the last event id looked at, or "start" before the first), matched, queued,
  skipped, delivered, failed, created_at, completed_at};
- "!replayed#<eventId>": the event was queued by the replay `replayId` (so another replay does not
  send it twice); removed when that replay's delivery of it fails for good (a later replay may try);
- "!replay-running": the one running replay of the webhook, until leaseUntil at the latest.
"""

from __future__ import annotations

import math
import time
from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import from_item, to_item, values
from svc_core.contracts.cursors import AttemptPosition
from svc_core.data.common import is_condition_failure
from svc_core.data.table import Table

RETENTION_SECONDS = 30 * 86400
_TABLE = Table("webhook_deliveries_table", ("webhookId", "attemptKey"))


def attempt_key(attempted_at_ms: int, event_id: str, attempt: int) -> str:
    return f"{attempted_at_ms:013d}#{event_id}#{attempt:02d}"


FIRST_ATTEMPT_KEY = "0"
MARK_ATTEMPTS = 8   # about 10 s of tries: longer than a datastore's short stall
DELIVERED_PREFIX, WAITING_PREFIX = "!delivered#", "!waiting#"


def _mark_key(webhook_id: str, event_id: str, send_id: str | None = None) -> dict[str, Any]:
    suffix = f"#{send_id}" if send_id else ""
    return _TABLE.key(webhook_id, f"{DELIVERED_PREFIX}{event_id}{suffix}")


def claim(webhook_id: str, event_id: str, now: float, lease_seconds: float, send_id: str | None = None) -> str | float:
    """Take the event's send to this webhook (or its resend send_id): "claimed" (send it),
    "delivered" (it was sent), or the time another attempt's claim ends (it is sending now; try
    after that)."""
    item = {**_mark_key(webhook_id, event_id, send_id), "state": {"S": "sending"},
            "leaseUntil": {"N": str(round(now + lease_seconds, 3))},
            "ttl": {"N": str(int(now) + RETENTION_SECONDS)}}
    try:
        aws.client("dynamodb").put_item(
            TableName=_TABLE.name, Item=item, ReturnValuesOnConditionCheckFailure="ALL_OLD",
            ConditionExpression="attribute_not_exists(webhookId) OR (#s = :sending AND leaseUntil < :now)",
            ExpressionAttributeNames={"#s": "state"},
            ExpressionAttributeValues={":sending": {"S": "sending"}, ":now": {"N": str(now)}})
        return "claimed"
    except Exception as exc:
        if not is_condition_failure(exc):
            raise
        old = getattr(exc, "response", {}).get("Item") or {}
        if old.get("state", {}).get("S") != "sending":
            return "delivered"
        return float(old["leaseUntil"]["N"])


def mark_delivered(webhook_id: str, event_id: str, delivered_at: float, send_id: str | None = None) -> None:
    """Kept for the retention; retried longer than other writes: the receiver has the event, and a
    mark lost here would send it again."""
    item = {**_mark_key(webhook_id, event_id, send_id), "state": {"S": "delivered"},
            "ttl": {"N": str(int(delivered_at) + RETENTION_SECONDS)}}
    for attempt in range(MARK_ATTEMPTS):
        try:
            aws.client("dynamodb").put_item(TableName=_TABLE.name, Item=item)
            return
        except Exception:
            if attempt == MARK_ATTEMPTS - 1:
                raise
            time.sleep(min(2.0, 0.1 * 2 ** attempt))


def is_delivered(webhook_id: str, event_id: str) -> bool:
    """Whether the event was delivered to this webhook (by its own delivery or a resend)."""
    item = aws.client("dynamodb").get_item(TableName=_TABLE.name, Key=_mark_key(webhook_id, event_id),
                                           ConsistentRead=True).get("Item")
    return bool(item) and item.get("state", {}).get("S") == "delivered"


def release(webhook_id: str, event_id: str, send_id: str | None = None) -> None:
    """Give the claim back after an attempt that did not deliver, so the retry can take it."""
    try:
        aws.client("dynamodb").delete_item(
            TableName=_TABLE.name, Key=_mark_key(webhook_id, event_id, send_id), ConditionExpression="#s = :sending",
            ExpressionAttributeNames={"#s": "state"}, ExpressionAttributeValues={":sending": {"S": "sending"}})
    except Exception as exc:
        if not is_condition_failure(exc):
            raise


def _waiting_key(webhook_id: str, event_id: str, send_id: str | None) -> dict[str, Any]:
    return _TABLE.key(webhook_id, f"{WAITING_PREFIX}{event_id}" + (f"#{send_id}" if send_id else ""))


def park(tenant_id: str, webhook_id: str, event_id: str, send_id: str | None, attempt: int, due_at: float,
         receipt_handle: str, *, only_raising: bool = False) -> bool:
    """The delivery waits on the queue until due_at (kept in whole seconds, rounded up: never sooner),
    hidden by the receive whose handle this is, `attempt` attempts made. only_raising: not over a wait
    recorded with as many attempts or more (False: that one stands)."""
    due = math.ceil(due_at)
    item = {**_waiting_key(webhook_id, event_id, send_id), "tenantId": {"S": tenant_id}, "eventId": {"S": event_id},
            "attempt": {"N": str(attempt)}, "dueAt": {"N": str(due)}, "receiptHandle": {"S": receipt_handle},
            "ttl": {"N": str(due + 86400)}}
    condition = {"ConditionExpression": "attribute_not_exists(#a) OR #a < :attempt",
                 "ExpressionAttributeNames": {"#a": "attempt"},
                 "ExpressionAttributeValues": {":attempt": {"N": str(attempt)}}} if only_raising else {}
    try:
        aws.client("dynamodb").put_item(TableName=_TABLE.name, Item=item, **condition)
    except Exception as exc:
        if not (only_raising and is_condition_failure(exc)):
            raise
        return False
    return True


def parked(webhook_id: str, event_id: str, send_id: str | None) -> dict[str, Any] | None:
    """{tenantId, eventId, attempt, dueAt, receiptHandle} of the delivery's wait; None: none recorded."""
    item = aws.client("dynamodb").get_item(TableName=_TABLE.name, Key=_waiting_key(webhook_id, event_id, send_id),
                                           ConsistentRead=True).get("Item")
    return from_item(item) if item else None


def unpark(webhook_id: str, event_id: str, send_id: str | None) -> None:
    """The delivery waits no more (it ended, or went to another cell). Writes nothing when no wait
    is recorded."""
    aws.client("dynamodb").delete_item(TableName=_TABLE.name, Key=_waiting_key(webhook_id, event_id, send_id))


def record(attempt: dict[str, Any], attempted_at: float) -> None:
    """Store one attempt (attempt carries every field of the item but attemptKey and ttl)."""
    item = {**attempt, "attemptKey": attempt_key(int(attempted_at * 1000), attempt["eventId"], attempt["attempt"]),
            "ttl": int(attempted_at) + RETENTION_SECONDS}
    aws.client("dynamodb").put_item(TableName=_TABLE.name, Item=to_item(item))


# ---- replays ------------------------------------------------------------------------------

_RUNNING = "!replay-running"


def _replay_key(webhook_id: str, replay_id: str) -> dict[str, Any]:
    return _TABLE.key(webhook_id, f"!replay#{replay_id}")


def start_replay(webhook_id: str, replay: dict[str, Any], now: float, lease_seconds: int) -> bool:
    """Store a new replay as the webhook's running one; False (nothing stored) while another runs."""
    lock = {**_TABLE.key(webhook_id, _RUNNING), "replayId": {"S": replay["replayId"]},
            "leaseUntil": {"N": str(int(now) + lease_seconds)}, "ttl": {"N": str(int(now) + lease_seconds)}}
    record = {**_replay_key(webhook_id, replay["replayId"]), **to_item({**replay, "ttl": int(now) + RETENTION_SECONDS})}
    try:
        aws.client("dynamodb").transact_write_items(TransactItems=[
            {"Put": {"TableName": _TABLE.name, "Item": lock,
                     "ConditionExpression": "attribute_not_exists(webhookId) OR leaseUntil < :now",
                     "ExpressionAttributeValues": values(now=int(now))}},
            {"Put": {"TableName": _TABLE.name, "Item": record, "ConditionExpression": "attribute_not_exists(webhookId)"}}])
        return True
    except Exception as exc:
        if aws.error_code(exc) == "TransactionCanceledException":
            return False
        raise


def get_replay(tenant_id: str, webhook_id: str, replay_id: str) -> dict[str, Any] | None:
    item = aws.client("dynamodb").get_item(TableName=_TABLE.name, Key=_replay_key(webhook_id, replay_id),
                                           ConsistentRead=True).get("Item")
    record = from_item(item) if item else None
    if record is None or record.get("tenantId") != tenant_id:
        return None
    for hidden in ("webhookId", "attemptKey", "ttl"):
        record.pop(hidden, None)
    return record


def advance_replay(webhook_id: str, replay_id: str, position: str, new_position: str | None,
                   counts: dict[str, int], finished_at: str | None) -> bool:
    """Move the replay from `position` to `new_position` adding the counts (completed when
    finished_at is given, and the webhook's running replay released); False when it was not at
    `position` any more (this step was applied already)."""
    names = {"#pos": "position"}
    sets = ["#pos = :new"]
    vals = values(old=position, new=new_position or position)
    if finished_at:
        names["#st"] = "status"
        sets += ["#st = :done", "completed_at = :at"]
        vals.update(values(done="completed", at=finished_at))
    adds = []
    for i, (name, amount) in enumerate(counts.items()):
        names[f"#c{i}"] = name
        vals[f":c{i}"] = {"N": str(amount)}
        adds.append(f"#c{i} :c{i}")
    expression = "SET " + ", ".join(sets) + (" ADD " + ", ".join(adds) if adds else "")
    try:
        aws.client("dynamodb").update_item(TableName=_TABLE.name, Key=_replay_key(webhook_id, replay_id),
                                           UpdateExpression=expression, ConditionExpression="#pos = :old",
                                           ExpressionAttributeNames=names, ExpressionAttributeValues=vals)
    except Exception as exc:
        if is_condition_failure(exc):
            return False
        raise
    if finished_at:
        try:
            aws.client("dynamodb").delete_item(TableName=_TABLE.name, Key=_TABLE.key(webhook_id, _RUNNING),
                                               ConditionExpression="replayId = :r",
                                               ExpressionAttributeValues=values(r=replay_id))
        except Exception as exc:
            if not is_condition_failure(exc):
                raise
    return True


def count_replayed(webhook_id: str, replay_id: str, outcome: str) -> None:
    """One of the replay's deliveries ended: outcome is "delivered" or "failed"."""
    aws.client("dynamodb").update_item(TableName=_TABLE.name, Key=_replay_key(webhook_id, replay_id),
                                       UpdateExpression="ADD #o :one", ConditionExpression="attribute_exists(webhookId)",
                                       ExpressionAttributeNames={"#o": outcome}, ExpressionAttributeValues=values(one=1))


def mark_replayed(webhook_id: str, event_id: str, replay_id: str, now: float) -> bool:
    """Note that this replay queues the event; False when another replay queued it already (true
    again for the same replay: a step handed back queues what it had queued)."""
    item = {**_TABLE.key(webhook_id, f"!replayed#{event_id}"), "replayId": {"S": replay_id},
            "ttl": {"N": str(int(now) + RETENTION_SECONDS)}}
    try:
        aws.client("dynamodb").put_item(TableName=_TABLE.name, Item=item,
                                        ConditionExpression="attribute_not_exists(webhookId) OR replayId = :r",
                                        ExpressionAttributeValues=values(r=replay_id))
        return True
    except Exception as exc:
        if is_condition_failure(exc):
            return False
        raise


def unmark_replayed(webhook_id: str, event_id: str, replay_id: str) -> None:
    """The replay's delivery of the event failed for good: a later replay may queue it again."""
    try:
        aws.client("dynamodb").delete_item(TableName=_TABLE.name, Key=_TABLE.key(webhook_id, f"!replayed#{event_id}"),
                                           ConditionExpression="replayId = :r", ExpressionAttributeValues=values(r=replay_id))
    except Exception as exc:
        if not is_condition_failure(exc):
            raise


def list_for_webhook(tenant_id: str, webhook_id: str, limit: int, after: AttemptPosition | None
                     ) -> tuple[list[dict[str, Any]], AttemptPosition | None]:
    """Newest first, after the position `after` (the last read of the previous page, or any
    position), and the position of the last attempt read when more may follow. Only the tenant's
    own attempts (the webhook id was checked by the caller too): the filter may leave a page short,
    so the next page continues after the last attempt read, shown or not."""
    query: dict[str, Any] = {"TableName": _TABLE.name, "KeyConditionExpression": "webhookId = :w AND attemptKey >= :a",
                             "FilterExpression": "tenantId = :t",
                             "ExpressionAttributeValues": values(w=webhook_id, t=tenant_id, a=FIRST_ATTEMPT_KEY),
                             "ScanIndexForward": False, "Limit": limit}
    if after:
        query["ExclusiveStartKey"] = {"webhookId": {"S": webhook_id}, "attemptKey": {"S": attempt_key(*after)}}
    answer = aws.client("dynamodb").query(**query)
    items = [from_item(i) for i in answer.get("Items", [])]
    last = answer.get("LastEvaluatedKey")
    for item in items:
        for hidden in ("ttl", "tenantId"):
            item.pop(hidden, None)
    return items, _position(last["attemptKey"]["S"]) if last else None


def _position(key: str) -> AttemptPosition:
    attempted_at_ms, event_id, attempt = key.split("#")
    return AttemptPosition(int(attempted_at_ms), event_id, int(attempt))
