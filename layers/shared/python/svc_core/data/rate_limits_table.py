"""The rate-limits table: one counter item per credential, for fixed windows.

Item: {pk: credential id, windowStart, hits, ttl, revokedAt?}; or a mark that something is
remembered for a while, {pk, ttl} (an address an account signed in from). Each request is one
conditional UpdateItem that adds to the counter of the current window (or starts a new
window), so the count is exact under any concurrency. The same condition refuses a
credential that carries a revocation mark, which makes a revoked API key fail on its next
use in every container, although containers cache key records.

Open streams are counted here too, per holder (a credential, a tenant): item {pk: "streams#...",
leases: {lease id: expiresAt}, ttl}. A stream's lease is one entry in each of its holders' maps,
added to all of them at once (one transaction) only while each holds fewer than its cap, renewed
while the stream runs, removed when it ends. An entry whose expiry has passed (its container died)
is counted by nobody and dropped by the next stream that finds its holder full.
"""

from __future__ import annotations

import random
import time
from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import values
from svc_core.data.common import cancellation_reasons, is_condition_failure
from svc_core.data.table import Table
from svc_core.platform.config import settings

_TABLE = Table("rate_limits_table", ("pk",))


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
        TableName=_TABLE.name,
        Key=_TABLE.key(pk),
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
        TableName=_TABLE.name,
        Key=_TABLE.key(pk),
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


def credential_ended(pk: str, generation: int | None = None) -> bool:
    """Whether the credential is revoked (or, generation given: that API key value was ended by a
    rotation), as its counter says now (a consistent read; nothing counted)."""
    answer = aws.client("dynamodb").get_item(TableName=_TABLE.name, Key=_TABLE.key(pk), ConsistentRead=True)
    return _ended(answer.get("Item") or {}, generation)


def revoke_item(pk: str, now: float) -> dict[str, Any]:
    """A TransactWriteItems entry that marks a credential revoked (kept: no TTL)."""
    return {"Update": {
        "TableName": _TABLE.name,
        "Key": _TABLE.key(pk),
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
        "TableName": _TABLE.name,
        "Key": _TABLE.key(pk),
        "UpdateExpression": "SET valuesBefore = :gen, #ttl = :ttl",
        "ExpressionAttributeNames": {"#ttl": "ttl"},
        "ExpressionAttributeValues": values(gen=generation, ttl=int(now) + 2 * settings().rate_limit_window_seconds),
    }}


def hits_in(pk: str, window_start: int) -> int:
    """How many were counted in this window (0 when the counter is in another window)."""
    answer = aws.client("dynamodb").get_item(TableName=_TABLE.name, Key=_TABLE.key(pk),
                                             ConsistentRead=True)
    item = answer.get("Item") or {}
    if int(item.get("windowStart", {}).get("N", "-1")) != window_start:
        return 0
    return int(item["hits"]["N"])


def remember(pk: str, until: int) -> None:
    """Keep a mark (no counter) until the Unix time `until`; its TTL removes it after that."""
    aws.client("dynamodb").put_item(TableName=_TABLE.name,
                                    Item={**_TABLE.key(pk), "ttl": {"N": str(int(until))}})


def remembered(pk: str, now: float) -> bool:
    """Whether a mark is kept at `now` (DynamoDB's TTL deletes late, so its time is compared here)."""
    answer = aws.client("dynamodb").get_item(TableName=_TABLE.name, Key=_TABLE.key(pk),
                                             ConsistentRead=True)
    return int((answer.get("Item") or {}).get("ttl", {}).get("N", "0")) > now


# ---- stream leases ------------------------------------------------------------------------------

LEASE_ATTEMPTS = 8
LEASE_ITEM_TTL_SECONDS = 3600  # an idle holder's item goes an hour after its last lease's expiry


class HolderFull(Exception):
    """A holder already has its cap of live leases: which one (its index), and when the first of them
    expires (epoch seconds)."""

    def __init__(self, index: int, soonest_expiry: int) -> None:
        super().__init__(index, soonest_expiry)
        self.index, self.soonest_expiry = index, soonest_expiry


def take_lease(holders: list[tuple[str, int]], lease_id: str, expires_at: int, now: int) -> None:
    """Add the lease to every holder's map at once, each holder (pk, cap) having fewer than its cap;
    HolderFull for the first holder whose cap is taken by live leases."""
    names = {"#l": "leases", "#id": lease_id, "#ttl": "ttl"}
    items = [{"Update": {
        "TableName": _TABLE.name, "Key": _TABLE.key(pk),
        "UpdateExpression": "SET #l.#id = :exp, #ttl = :ttl",
        "ConditionExpression": "attribute_exists(#l) AND size(#l) < :cap",  # the map exists once per holder
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values(exp=expires_at, ttl=expires_at + LEASE_ITEM_TTL_SECONDS, cap=cap),
    }} for pk, cap in holders]
    for attempt in range(LEASE_ATTEMPTS):
        try:
            aws.client("dynamodb").transact_write_items(TransactItems=items)
            return
        except Exception as exc:
            reasons = {code for code in cancellation_reasons(exc) if code not in (None, "None")}
            if not reasons or reasons - {"ConditionalCheckFailed", "TransactionConflict"}:
                raise
            if "TransactionConflict" in reasons:  # streams opening at once: not all again at the same moment
                time.sleep(random.uniform(0.01, 0.02 * 2 ** attempt))
        # A holder without its map yet, with expired leases, really full, or busy with another stream.
        for index, (pk, cap) in enumerate(holders):
            leases = _leases_of(pk)
            if leases is None:
                _start_map(pk, now + LEASE_ITEM_TTL_SECONDS)
                continue
            live = [expiry for expiry in leases.values() if expiry > now]
            if len(live) >= cap:
                raise HolderFull(index, min(live))
            expired = [lease for lease, expiry in leases.items() if expiry <= now]
            if expired:
                _drop_expired(pk, expired, now)
    raise RuntimeError("the stream leases did not settle")


def renew_lease(pks: list[str], lease_id: str, expires_at: int) -> bool:
    """Push the lease's expiry on in every holder; False when a holder no longer has it (it expired
    and was dropped: its slot may be another stream's now)."""
    kept = True
    for pk in pks:
        try:
            aws.client("dynamodb").update_item(
                TableName=_TABLE.name, Key=_TABLE.key(pk),
                UpdateExpression="SET #l.#id = :exp, #ttl = :ttl", ConditionExpression="attribute_exists(#l.#id)",
                ExpressionAttributeNames={"#l": "leases", "#id": lease_id, "#ttl": "ttl"},
                ExpressionAttributeValues=values(exp=expires_at, ttl=expires_at + LEASE_ITEM_TTL_SECONDS))
        except Exception as exc:
            if not is_condition_failure(exc):
                raise
            kept = False
    return kept


def release_lease(pks: list[str], lease_id: str) -> None:
    """Remove the lease from every holder (each is tried; the last failure is raised after)."""
    failure: Exception | None = None
    for pk in pks:
        try:
            aws.client("dynamodb").update_item(
                TableName=_TABLE.name, Key=_TABLE.key(pk),
                UpdateExpression="REMOVE #l.#id", ConditionExpression="attribute_exists(#l)",
                ExpressionAttributeNames={"#l": "leases", "#id": lease_id})
        except Exception as exc:
            if not is_condition_failure(exc):  # no map: nothing to remove
                failure = exc
    if failure is not None:
        raise failure


def _leases_of(pk: str) -> dict[str, int] | None:
    """The holder's leases (lease id: expiry), None when it has no map yet."""
    item = aws.client("dynamodb").get_item(TableName=_TABLE.name, Key=_TABLE.key(pk),
                                           ConsistentRead=True).get("Item") or {}
    if "leases" not in item:
        return None
    return {lease: int(value["N"]) for lease, value in item["leases"]["M"].items()}


def _start_map(pk: str, ttl: int) -> None:
    try:
        aws.client("dynamodb").update_item(
            TableName=_TABLE.name, Key=_TABLE.key(pk),
            UpdateExpression="SET #l = :empty, #ttl = :ttl", ConditionExpression="attribute_not_exists(#l)",
            ExpressionAttributeNames={"#l": "leases", "#ttl": "ttl"},
            ExpressionAttributeValues={":empty": {"M": {}}, ":ttl": {"N": str(ttl)}})
    except Exception as exc:
        if not is_condition_failure(exc):  # another stream made it first
            raise


def _drop_expired(pk: str, expired: list[str], now: int) -> None:
    """Remove leases that have expired, each only if it still has (renewed meanwhile, it stays)."""
    names = {"#l": "leases", **{f"#e{i}": lease for i, lease in enumerate(expired)}}
    try:
        aws.client("dynamodb").update_item(
            TableName=_TABLE.name, Key=_TABLE.key(pk),
            UpdateExpression="REMOVE " + ", ".join(f"#l.#e{i}" for i in range(len(expired))),
            ConditionExpression=" AND ".join(f"#l.#e{i} <= :now" for i in range(len(expired))),
            ExpressionAttributeNames=names, ExpressionAttributeValues=values(now=now))
    except Exception as exc:
        if not is_condition_failure(exc):
            raise
