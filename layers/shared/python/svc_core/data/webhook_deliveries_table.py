"""The webhook deliveries table: one item per delivery attempt, kept 30 days (TTL).

Partition webhookId, sort attemptKey = "<attemptedAt ms, 13 digits>#<eventId>#<attempt, 2 digits>",
so a webhook's attempts read newest first. Item: {webhookId, attemptKey, tenantId, eventId,
eventType, attempt, outcome (delivered, retrying, failed, disabled, skipped), statusCode or null,
latencyMs or null, error or null, nextRetryAt (ISO) or null, attemptedAt (ISO), ttl}.

Beside them, one mark per event delivered to the webhook, attemptKey = "!delivered#<eventId>"
(which sorts before every attempt, so listings skip the marks with `attemptKey >= "0"`), state
"sending" (with leaseUntil, while one attempt sends it) or "delivered": an event that reaches the
delivery queue twice, even at the same moment (its publisher retried a call that had gone
through), is sent once.
"""

from __future__ import annotations

import time
from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import from_item, to_item, values
from svc_core.data.common import is_condition_failure
from svc_core.platform.config import settings
from svc_core.rules.cursors import AttemptPosition

RETENTION_SECONDS = 30 * 86400


def _table() -> str:
    return settings().webhook_deliveries_table


def attempt_key(attempted_at_ms: int, event_id: str, attempt: int) -> str:
    return f"{attempted_at_ms:013d}#{event_id}#{attempt:02d}"


FIRST_ATTEMPT_KEY = "0"
MARK_ATTEMPTS = 8   # about 10 s of tries: longer than a datastore's short stall


def _mark_key(webhook_id: str, event_id: str) -> dict[str, Any]:
    return {"webhookId": {"S": webhook_id}, "attemptKey": {"S": f"!delivered#{event_id}"}}


def claim(webhook_id: str, event_id: str, now: float, lease_seconds: float) -> str | float:
    """Take the event's send to this webhook: "claimed" (send it), "delivered" (it was sent), or
    the time another attempt's claim ends (it is sending now; try after that)."""
    item = {**_mark_key(webhook_id, event_id), "state": {"S": "sending"},
            "leaseUntil": {"N": str(round(now + lease_seconds, 3))},
            "ttl": {"N": str(int(now) + RETENTION_SECONDS)}}
    try:
        aws.client("dynamodb").put_item(
            TableName=_table(), Item=item, ReturnValuesOnConditionCheckFailure="ALL_OLD",
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


def mark_delivered(webhook_id: str, event_id: str, delivered_at: float) -> None:
    """Kept for the retention; retried longer than other writes: the receiver has the event, and a
    mark lost here would send it again."""
    item = {**_mark_key(webhook_id, event_id), "state": {"S": "delivered"},
            "ttl": {"N": str(int(delivered_at) + RETENTION_SECONDS)}}
    for attempt in range(MARK_ATTEMPTS):
        try:
            aws.client("dynamodb").put_item(TableName=_table(), Item=item)
            return
        except Exception:
            if attempt == MARK_ATTEMPTS - 1:
                raise
            time.sleep(min(2.0, 0.1 * 2 ** attempt))


def release(webhook_id: str, event_id: str) -> None:
    """Give the claim back after an attempt that did not deliver, so the retry can take it."""
    try:
        aws.client("dynamodb").delete_item(
            TableName=_table(), Key=_mark_key(webhook_id, event_id), ConditionExpression="#s = :sending",
            ExpressionAttributeNames={"#s": "state"}, ExpressionAttributeValues={":sending": {"S": "sending"}})
    except Exception as exc:
        if not is_condition_failure(exc):
            raise


def record(attempt: dict[str, Any], attempted_at: float) -> None:
    """Store one attempt (attempt carries every field of the item but attemptKey and ttl)."""
    item = {**attempt, "attemptKey": attempt_key(int(attempted_at * 1000), attempt["eventId"], attempt["attempt"]),
            "ttl": int(attempted_at) + RETENTION_SECONDS}
    aws.client("dynamodb").put_item(TableName=_table(), Item=to_item(item))


def list_for_webhook(tenant_id: str, webhook_id: str, limit: int, after: AttemptPosition | None
                     ) -> tuple[list[dict[str, Any]], AttemptPosition | None]:
    """Newest first, after the position `after` (the last read of the previous page, or any
    position), and the position of the last attempt read when more may follow. Only the tenant's
    own attempts (the webhook id was checked by the caller too): the filter may leave a page short,
    so the next page continues after the last attempt read, shown or not."""
    query: dict[str, Any] = {"TableName": _table(), "KeyConditionExpression": "webhookId = :w AND attemptKey >= :a",
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
