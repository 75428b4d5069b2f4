"""What the table modules share: paged queries, conditional-failure detection, transactions."""

from __future__ import annotations

import contextlib
import contextvars
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from svc_core.adapters import aws
from svc_core.platform.config import settings


class ConditionFailed(Exception):
    """A conditional write found the item not in the state it required."""


def is_condition_failure(exc: Exception) -> bool:
    return aws.error_code(exc) == "ConditionalCheckFailedException"


def conditional(write: Callable[..., Any], **request: Any) -> dict[str, Any]:
    """One conditional write (put_item, update_item, delete_item ...), its answer; ConditionFailed when
    its condition fails."""
    try:
        return write(**request)
    except Exception as exc:
        if is_condition_failure(exc):
            raise ConditionFailed() from None
        raise


def read_item(table: str, key: dict[str, Any], public: Callable[[dict[str, Any]], dict[str, Any]]
              ) -> dict[str, Any] | None:
    """One item by its key, read consistently, as `public` shows it; None when absent."""
    item = aws.client("dynamodb").get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
    return public(item) if item else None


@dataclass(frozen=True)
class ItemRead:
    """One item to read in read_items: its table, its key, and how its table module shows it."""
    table: str
    key: dict[str, Any]
    public: Callable[[dict[str, Any]], dict[str, Any]]


BATCH_GET_LIMIT = 100   # DynamoDB's most keys in one BatchGetItem
BATCH_GET_ATTEMPTS = 8  # rounds for the keys DynamoDB leaves unprocessed (throttled), with a growing pause


def read_items(reads: list[ItemRead]) -> list[dict[str, Any] | None]:
    """Several items, of one table or several, read consistently in one round trip (BatchGetItem);
    each as its `public` shows it, or None when absent, in the order asked. Keys DynamoDB leaves
    unprocessed are asked again; a read it still leaves unanswered raises, never answers None."""
    if not reads or len(reads) > BATCH_GET_LIMIT:
        raise ValueError(f"read_items reads 1 to {BATCH_GET_LIMIT} items")
    pending: dict[str, dict[str, Any]] = {}
    for read in reads:
        pending.setdefault(read.table, {"Keys": [], "ConsistentRead": True})["Keys"].append(read.key)
    key_names = {read.table: tuple(read.key) for read in reads}
    found: dict[tuple[str, str], dict[str, Any]] = {}
    client, pause = aws.client("dynamodb"), 0.05
    for attempt in range(BATCH_GET_ATTEMPTS):
        answer = client.batch_get_item(RequestItems=pending)
        for table, items in answer.get("Responses", {}).items():
            for item in items:
                found[(table, _key_text({name: item[name] for name in key_names[table]}))] = item
        pending = answer.get("UnprocessedKeys") or {}
        if not pending:
            return [read.public(item) if (item := found.get((read.table, _key_text(read.key)))) else None
                    for read in reads]
        if attempt + 1 < BATCH_GET_ATTEMPTS:
            time.sleep(pause * random.uniform(0.5, 1.5))
            pause = min(pause * 2, 1.0)
    raise RuntimeError("DynamoDB left keys of a BatchGetItem unprocessed after every attempt")


def _key_text(key: dict[str, Any]) -> str:
    """A key's attribute values as one comparable text (the same key always gives the same text)."""
    return repr(sorted((name, sorted(value.items())) for name, value in key.items()))


BATCH_WRITE_LIMIT = 25   # DynamoDB's most requests in one BatchWriteItem


def delete_partition(table: str, partition: dict[str, Any], sort_key: str) -> int:
    """Delete every item of one partition (`partition` = {name: attribute value}); the number deleted.
    Reads the keys only, page by page, and deletes them 25 at a time, sending back what DynamoDB
    leaves unprocessed (with a growing pause) until nothing is left."""
    (name, value), = partition.items()
    client, deleted, start = aws.client("dynamodb"), 0, None
    while True:
        query = {"TableName": table, "KeyConditionExpression": "#p = :p", "ProjectionExpression": "#p, #s",
                 "ExpressionAttributeNames": {"#p": name, "#s": sort_key},
                 "ExpressionAttributeValues": {":p": value}, "ConsistentRead": True}
        if start:
            query["ExclusiveStartKey"] = start
        answer = client.query(**query)
        keys = answer.get("Items", [])
        write_batches(client, table, [{"DeleteRequest": {"Key": key}} for key in keys])
        deleted += len(keys)
        start = answer.get("LastEvaluatedKey")
        if not start:
            return deleted


def write_batches(client: Any, table: str, requests: list[dict[str, Any]]) -> None:
    """BatchWriteItem requests (puts or deletes) of one table, 25 at a time, sending again what DynamoDB
    leaves unprocessed (with a growing pause) until nothing is left."""
    for i in range(0, len(requests), BATCH_WRITE_LIMIT):
        pending, pause = requests[i:i + BATCH_WRITE_LIMIT], 0.05
        while pending:
            left = client.batch_write_item(RequestItems={table: pending}).get("UnprocessedItems", {})
            pending = left.get(table, [])
            if pending:
                time.sleep(pause)
                pause = min(pause * 2, 2.0)


def bounded_addition(start: int, delta: int, *, at_most: int | None = None,
                     at_least: int | None = None, tag: str = "") -> tuple[str, list[str], dict[str, Any]]:
    """An update adding delta to the number named #c<tag> (an item without it counts as `start`),
    only if the result stays within at_most / at_least (None: unbounded): the SET clause, the
    conditions to AND into the ConditionExpression, and the values they name (plain, for values()).
    `tag` tells apart the names of several counters changed by one update."""
    name = f"#c{tag}"
    conditions, vals = [], {f"start{tag}": start, f"delta{tag}": delta}
    # The bound is on the value before the change: value + delta <= at_most  <=>  value <= at_most - delta.
    for bound, op in ((at_most, "<="), (at_least, ">=")):
        if bound is None:
            continue
        limit = bound - delta
        word = ("most" if op == "<=" else "least") + tag
        vals[word] = limit
        holds_now = start <= limit if op == "<=" else start >= limit
        test = f"{name} {op} :{word}"
        conditions.append(f"({f'attribute_not_exists({name}) OR ' if holds_now else f'attribute_exists({name}) AND '}{test})")
    return f"{name} = if_not_exists({name}, :start{tag}) + :delta{tag}", conditions, vals


TRANSACTION_ATTEMPTS = 3

# A write the current request's writes carry in their transactions (an Idempotency-Key's record,
# see idempotency_table): given the answer the write stands for (or None), it gives the item to add.
_companion: contextvars.ContextVar[Callable[[dict[str, Any] | None], dict[str, Any]] | None] = \
    contextvars.ContextVar("companion_write", default=None)


@contextlib.contextmanager
def writes_carrying(companion: Callable[[dict[str, Any] | None], dict[str, Any]]):
    """Within this block every transact() and create_item() adds companion(answer)'s item to its
    transaction: the write and the companion commit together or not at all."""
    reset = _companion.set(companion)
    try:
        yield
    finally:
        _companion.reset(reset)


class TokenReused(Exception):
    """DynamoDB answered IdempotentParameterMismatch: a ClientRequestToken came back with other items.

    transact() makes one token per logical write and sends it only with that write's items, so this
    is a defect, never a conflict: it is not retried (a fresh token could apply the write twice) and
    not answered 409; it surfaces as a server error."""


def new_request_token() -> str:
    """A ClientRequestToken: 32 hex characters (DynamoDB takes at most 36)."""
    return uuid.uuid4().hex


def transact(items: list[dict[str, Any]], token: str | None = None, answer: dict[str, Any] | None = None) -> None:
    """All the writes or none; ConditionFailed when any condition does not hold. `answer`: what the
    request answers when this write commits (a create's object), kept by a companion write (see
    writes_carrying) for a retry that comes back after the answer was lost.

    Every call is one logical write with one ClientRequestToken (made here unless given), sent
    with every attempt: botocore's own retries re-send the same parameters, and the
    TransactionConflict retries below reuse it too. DynamoDB runs a token's transaction once for
    10 minutes: when an attempt committed but its answer was lost (a read timeout), the next
    attempt answers success instead of failing on its own "must not exist" condition.

    Why the conflict retries keep the token: a cancelled transaction wrote nothing, and DynamoDB
    runs a later use of a token whose earlier use was cancelled afresh (DynamoDB Local does;
    tests/integration/test_write_retries.py checks it), so reuse costs nothing; and if an earlier
    attempt of this same write did commit unseen, reuse answers success where a new token would
    run the write again and fail (or apply it twice). Were DynamoDB ever to answer a reused token
    with its earlier cancellation, the retries would end in ConditionFailed: a refusal, never a
    double write.

    DynamoDB cancels a transaction that collides with another one on the same item
    (TransactionConflict); that is retried a few times, then reported as ConditionFailed
    (the caller answers 409), never as a server error. IdempotentParameterMismatch is TokenReused.
    """
    token = token or new_request_token()
    companion = _companion.get()
    if companion is not None:
        items = [*items, companion(answer)]
    try:
        transact_retrying(items, token, TRANSACTION_ATTEMPTS, lambda attempt: 0.02 * 2 ** attempt)
    except Exception as exc:
        if aws.error_code(exc) != "TransactionCanceledException":
            raise
        codes = set(cancellation_reasons(exc))
        if codes and not codes & {"ConditionalCheckFailed", "TransactionConflict"}:
            raise
        if _event_stored(items):
            return  # an earlier attempt of this very write committed (see _event_stored)
        raise ConditionFailed() from exc


def cancellation_reasons(exc: Exception) -> list[str | None]:
    """The reason codes of a cancelled transaction, one per item in order (None: that item was fine)."""
    if aws.error_code(exc) != "TransactionCanceledException":
        return []
    return [r.get("Code") for r in getattr(exc, "response", {}).get("CancellationReasons", [])]


def transact_retrying(items: list[dict[str, Any]], token: str, attempts: int, pause: Callable[[int], float]) -> None:
    """The transaction's retry loop: sent with its token until it commits, tried again after
    pause(attempt) seconds while it only collides with another transaction (TransactionConflict).
    Raises the last cancellation when a condition failed, the cancellation was for another reason,
    or the collisions outlasted the attempts; TokenReused on IdempotentParameterMismatch."""
    for attempt in range(attempts):
        try:
            aws.client("dynamodb").transact_write_items(TransactItems=items, ClientRequestToken=token)
            return
        except Exception as exc:
            if aws.error_code(exc) in ("IdempotentParameterMismatchException", "IdempotentParameterMismatch"):
                raise TokenReused(f"ClientRequestToken {token} was used with other items") from exc
            reasons = cancellation_reasons(exc)
            if "TransactionConflict" not in reasons or "ConditionalCheckFailed" in reasons or attempt == attempts - 1:
                raise
            time.sleep(pause(attempt))


def _event_stored(items: list[dict[str, Any]]) -> bool:
    """Whether the outbox event (or the audit entry) this transaction carries is stored: then the
    transaction committed.

    The token cannot always tell: when a timed-out attempt and its retry reach the datastore together
    (after a stall), DynamoDB Local checks the retry's conditions against the first one's writes and
    cancels it, and moto keeps no tokens at all. An event's id (an audit entry's) is new for every
    write, so its item is the write's own witness."""
    witnesses = {settings().outbox_table: ("id",), settings().audit_log_table: ("tenantId", "id")}
    for item in items:
        put = item.get("Put")
        if put and put["TableName"] in witnesses:
            key = {name: put["Item"][name] for name in witnesses[put["TableName"]]}
            found = aws.client("dynamodb").get_item(TableName=put["TableName"], Key=key, ConsistentRead=True)
            return same_item(found.get("Item"), put["Item"])
    return False


def _normal(attr: Any) -> Any:
    """An attribute value as DynamoDB stores it: numbers compare by value ("1.50" is 1.5)."""
    if isinstance(attr, dict) and len(attr) == 1:
        (kind, value), = attr.items()
        if kind == "N":
            return ("N", Decimal(value))
        if kind == "NS":
            return ("NS", frozenset(Decimal(v) for v in value))
        if kind in ("SS", "BS"):
            return (kind, frozenset(value))
        if kind == "L":
            return ("L", [_normal(v) for v in value])
        if kind == "M":
            return ("M", {k: _normal(v) for k, v in value.items()})
    return attr


def same_item(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """Whether two items (attribute-value maps) hold the same attributes and values."""
    if a is None or b is None:
        return a is b
    return a.keys() == b.keys() and all(_normal(a[k]) == _normal(b[k]) for k in a)


def create_item(table: str, item: dict[str, Any], key_attribute: str, client: Any = None,
                answer: dict[str, Any] | None = None) -> None:
    """Store a new item (attribute values) unless one with its key exists: ConditionFailed then.

    A put_item with attribute_not_exists is not idempotent by itself: when botocore retries it after
    a read timeout and the first attempt had committed, the retry finds the item and its condition
    fails. The put asks DynamoDB for the item it found (ReturnValuesOnConditionCheckFailure=ALL_OLD);
    an item equal to the one being written is this write's own earlier attempt, so it is success.
    (New items carry fresh ids and timestamps: another writer producing the very same item is not a case.)
    """
    if _companion.get() is not None:  # with its companion, in one transaction (its token makes a retry harmless)
        transact([{"Put": {"TableName": table, "Item": item, "ConditionExpression": "attribute_not_exists(#k)",
                           "ExpressionAttributeNames": {"#k": key_attribute}}}], answer=answer)
        return
    client = client or aws.client("dynamodb")
    try:
        client.put_item(TableName=table, Item=item, ConditionExpression="attribute_not_exists(#k)",
                        ExpressionAttributeNames={"#k": key_attribute},
                        ReturnValuesOnConditionCheckFailure="ALL_OLD")
    except Exception as exc:
        if not is_condition_failure(exc):
            raise
        if same_item(getattr(exc, "response", {}).get("Item"), item):
            return
        raise ConditionFailed() from None


def query_page(query: dict[str, Any], start_key: dict[str, Any] | None,
               public: Callable[[dict[str, Any]], dict[str, Any]]) -> tuple[list[dict[str, Any]], str | None]:
    """One page of a Query (its Limit set) sorted by id, continuing after start_key: the full key (of
    the table, and of the index when the Query names one) an item with the position's id would
    have, whether or not it exists. The items as `public` shows them, and the last one's id when more
    may follow."""
    if start_key:
        query = {**query, "ExclusiveStartKey": start_key}
    answer = aws.client("dynamodb").query(**query)
    items = [public(i) for i in answer.get("Items", [])]
    last_id = items[-1]["id"] if answer.get("LastEvaluatedKey") and items else None
    return items, last_id


def projection(names: tuple[str, ...]) -> dict[str, Any]:
    """ProjectionExpression and its names for a Query that reads only these attributes."""
    return {"ProjectionExpression": ", ".join(f"#p{i}" for i in range(len(names))),
            "ExpressionAttributeNames": {f"#p{i}": name for i, name in enumerate(names)}}
