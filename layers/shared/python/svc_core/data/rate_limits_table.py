"""The rate-limits table: one counter item per credential, for fixed windows.

Item: {pk: credential id, windowStart, hits, ttl, revokedAt?}; or a mark that something is
remembered for a while, {pk, ttl} (an address an account signed in from). Each request is one
conditional UpdateItem that adds to the counter of the current window (or starts a new
window), so the count is exact under any concurrency. The same condition refuses a
credential that carries a revocation mark, which makes a revoked API key fail on its next
use in every container, although containers cache key records.
"""

from __future__ import annotations

from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import values
from svc_core.data.common import is_condition_failure
from svc_core.platform.config import settings


class CredentialRevoked(Exception):
    pass


_NAMES = {"#w": "windowStart", "#h": "hits", "#ttl": "ttl"}


def _still_valid(generation: int | None) -> tuple[str, dict[str, Any]]:
    """The condition (and its values) that the credential is not revoked, nor, given the API key
    value's generation, a value a rotation has ended."""
    if generation is None:
        return "attribute_not_exists(revokedAt)", {}
    return ("attribute_not_exists(revokedAt) AND (attribute_not_exists(valuesBefore) OR valuesBefore <= :gen)",
            values(gen=generation))


def _add_hit(pk: str, window_start: int, generation: int | None) -> int:
    valid, valid_values = _still_valid(generation)
    answer = aws.client("dynamodb").update_item(
        TableName=settings().rate_limits_table,
        Key={"pk": {"S": pk}},
        UpdateExpression="SET #h = #h + :one",
        ConditionExpression=f"#w = :w AND {valid}",
        ExpressionAttributeNames={"#w": "windowStart", "#h": "hits"},
        ExpressionAttributeValues={**values(one=1, w=window_start), **valid_values},
        ReturnValues="UPDATED_NEW",
        ReturnValuesOnConditionCheckFailure="ALL_OLD",
    )
    return int(answer["Attributes"]["hits"]["N"])


def _start_window(pk: str, window_start: int, ttl: int, generation: int | None) -> None:
    valid, valid_values = _still_valid(generation)
    aws.client("dynamodb").update_item(
        TableName=settings().rate_limits_table,
        Key={"pk": {"S": pk}},
        UpdateExpression="SET #w = :w, #h = :one, #ttl = :ttl",
        ConditionExpression=f"(attribute_not_exists(#w) OR #w < :w) AND {valid}",
        ExpressionAttributeNames=_NAMES,
        ExpressionAttributeValues={**values(w=window_start, one=1, ttl=ttl), **valid_values},
    )


def _ended(old: dict[str, Any], generation: int | None) -> bool:
    return "revokedAt" in old or (
        generation is not None and "valuesBefore" in old and int(old["valuesBefore"]["N"]) > generation)


def count_request(pk: str, window_start: int, window_seconds: int,
                  generation: int | None = None) -> tuple[int, int]:
    """Count one request; returns (hits in the window, the window's start). Raises
    CredentialRevoked when the credential is revoked or (generation given: an API key value's)
    the value was ended by a rotation.

    Usually one call: add to the current window. The first request of a window starts it
    with a second conditional call; if another request started it first, we add again.
    """
    for _ in range(4):
        try:
            return _add_hit(pk, window_start, generation), window_start
        except Exception as exc:
            if aws.error_code(exc) == "TransactionConflictException":
                continue  # a revocation's transaction holds the item for a moment: count again
            if not is_condition_failure(exc):
                raise
            old = getattr(exc, "response", {}).get("Item") or {}
            if _ended(old, generation):
                raise CredentialRevoked() from None
            if "windowStart" in old and int(old["windowStart"]["N"]) > window_start:
                window_start = int(old["windowStart"]["N"])  # another clock is ahead: use its window
                continue
        try:
            _start_window(pk, window_start, window_start + 2 * window_seconds, generation)
            return 1, window_start
        except Exception as exc:
            if not is_condition_failure(exc):
                raise
    raise RuntimeError("rate-limit counter did not settle")


def revoke_item(pk: str, now: float) -> dict[str, Any]:
    """A TransactWriteItems entry that marks a credential revoked (kept: no TTL)."""
    return {"Update": {
        "TableName": settings().rate_limits_table,
        "Key": {"pk": {"S": pk}},
        "UpdateExpression": "SET revokedAt = :now REMOVE #ttl",
        "ExpressionAttributeNames": {"#ttl": "ttl"},
        "ExpressionAttributeValues": values(now=int(now)),
    }}


def end_values_before_item(pk: str, generation: int, now: float) -> dict[str, Any]:
    """A TransactWriteItems entry that ends, on their next request, the API key's values older than
    `generation` (a rotation with no overlap). The mark outlives any container's cached key
    record: the item's time to live is set two windows away (never earlier than a window's own),
    more than a cache's minute; after that, the values' own records refuse them."""
    return {"Update": {
        "TableName": settings().rate_limits_table,
        "Key": {"pk": {"S": pk}},
        "UpdateExpression": "SET valuesBefore = :gen, #ttl = :ttl",
        "ExpressionAttributeNames": {"#ttl": "ttl"},
        "ExpressionAttributeValues": values(gen=generation, ttl=int(now) + 2 * settings().rate_limit_window_seconds),
    }}


def hits_in(pk: str, window_start: int) -> int:
    """How many were counted in this window (0 when the counter is in another window)."""
    answer = aws.client("dynamodb").get_item(TableName=settings().rate_limits_table, Key={"pk": {"S": pk}},
                                             ConsistentRead=True)
    item = answer.get("Item") or {}
    if int(item.get("windowStart", {}).get("N", "-1")) != window_start:
        return 0
    return int(item["hits"]["N"])


def remember(pk: str, until: int) -> None:
    """Keep a mark (no counter) until the Unix time `until`; its TTL removes it after that."""
    aws.client("dynamodb").put_item(TableName=settings().rate_limits_table,
                                    Item={"pk": {"S": pk}, "ttl": {"N": str(int(until))}})


def remembered(pk: str, now: float) -> bool:
    """Whether a mark is kept at `now` (DynamoDB's TTL deletes late, so its time is compared here)."""
    answer = aws.client("dynamodb").get_item(TableName=settings().rate_limits_table, Key={"pk": {"S": pk}},
                                             ConsistentRead=True)
    return int((answer.get("Item") or {}).get("ttl", {}).get("N", "0")) > now
