"""The sessions table: one item per sign-in (a refresh-token family), partition key id.

Item: {id, userId, tenantId (the first tenant), currentTenantId (the tenant of its latest refresh: a
refresh naming none stays there), tenantIds (every tenant it has minted an access token for: a
string set), tokenHash (of the current refresh token), generation, created_at, expiresAt, revokedAt?,
ttl}. tenantIds tells a member's removal which sign-ins to end (a refresh
may move a session to another tenant of the user's); sessions written before it have tenantId only.
A refresh rotates the token with a write conditional on the hash of the token presented, so one
token can be used once; a token of an older generation means it was stolen or replayed, and the
whole family is revoked (RFC 9700, section 4.14.2).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import values
from svc_core.data import rate_limits_table
from svc_core.data.common import BATCH_GET_LIMIT, ConditionFailed, read_items, transact
from svc_core.data.table import Table


class StaleToken(Exception):
    """The presented token is not the family's current one (or the family is revoked)."""


_TABLE = Table("sessions_table", ("id",))


def create(session: dict[str, Any], also: Sequence[dict[str, Any]] = ()) -> None:
    """Store a new session, with `also` (the sign-in's audit entry) in the same transaction."""
    _TABLE.create(_stored(session), also=also)


def create_entry(session: dict[str, Any]) -> dict[str, Any]:
    """The TransactWriteItems entry of a new session (for the account's cell, when that is another)."""
    return _TABLE.put_entry(_stored(session), ConditionExpression="attribute_not_exists(id)")


def _stored(session: dict[str, Any]) -> dict[str, Any]:
    return {**session, "tenantIds": {session["tenantId"]}, "ttl": session["expiresAt"]}


def get(session_id: str) -> dict[str, Any] | None:
    return _TABLE.get(session_id)


def rotate(session_id: str, presented_hash: str, new_hash: str, now: int, tenant_id: str) -> None:
    """Replace the current token, only if it is the one presented and the family is live; the
    access token it comes with is for tenant_id (added to the session's tenantIds)."""
    try:
        _TABLE.update(
            _TABLE.key(session_id),
            # usedHashes keeps every rotated-out token's hash, so a replay is recognised as one.
            UpdateExpression="SET tokenHash = :new, generation = generation + :one, rotatedAt = :now, "
                             "currentTenantId = :current ADD usedHashes :oldset, tenantIds :tenant",
            ConditionExpression="tokenHash = :old AND attribute_not_exists(revokedAt) AND expiresAt > :now",
            ExpressionAttributeValues=values(new=new_hash, one=1, now=now, old=presented_hash,
                                             oldset={presented_hash}, tenant={tenant_id}, current=tenant_id))
    except ConditionFailed:
        raise StaleToken() from None


def ids_for_user(user_id: str) -> list[str]:
    """Every session of the user, live or not (the byUser index)."""
    found: list[str] = []
    query: dict[str, Any] = {"TableName": _TABLE.name, "IndexName": "byUser", "KeyConditionExpression": "userId = :u",
                             "ExpressionAttributeValues": values(u=user_id)}
    while True:
        answer = aws.client("dynamodb").query(**query)
        found += [item["id"]["S"] for item in answer.get("Items", [])]
        if "LastEvaluatedKey" not in answer:
            return found
        query["ExclusiveStartKey"] = answer["LastEvaluatedKey"]


def is_open(session: dict[str, Any], now: float) -> bool:
    """Whether the session still works: not ended, its refresh token not expired."""
    return session.get("revokedAt") is None and int(session["expiresAt"]) > now


def page_for_user(user_id: str, limit: int, after: str | None, now: float) -> tuple[list[dict[str, Any]], str | None]:
    """A page of the user's open sessions, newest first (ids are ULIDs), after the id `after`."""
    return open_page(ids_for_user(user_id), lambda chunk: read_items([_TABLE.read(i) for i in chunk]),
                     limit, after, now)


def open_page(session_ids: list[str], read: Callable[[list[str]], list[dict[str, Any] | None]], limit: int,
              after: str | None, now: float) -> tuple[list[dict[str, Any]], str | None]:
    """A page of the open sessions among session_ids, newest first, after the id `after`; `read` reads
    a chunk of them (None: gone). The byUser index holds keys only and in no order: the ids are sorted
    here, and read a batch at a time until the page is full (ended ones are skipped). The last id shown
    when more may follow."""
    ordered = sorted((i for i in session_ids if after is None or i < after), reverse=True)
    found: list[dict[str, Any]] = []
    for start in range(0, len(ordered), BATCH_GET_LIMIT):
        chunk = ordered[start:start + BATCH_GET_LIMIT]
        for position, session in enumerate(read(chunk), start):
            if session is not None and is_open(session, now):
                found.append(session)
                if len(found) == limit:
                    return found, (session["id"] if position + 1 < len(ordered) else None)
    return found, None


def tenants_of(session: dict[str, Any]) -> set[str]:
    """Every tenant the session has minted an access token for."""
    return set(session.get("tenantIds") or ()) | {session["tenantId"]}


def revoke_entries(session_id: str, now: int) -> list[dict[str, Any]]:
    """The writes that end the family and every access token issued in it (their rate-limit counter
    is the session id, and the revocation mark makes the next request 401)."""
    return [
        _TABLE.update_entry(_TABLE.key(session_id), UpdateExpression="SET revokedAt = if_not_exists(revokedAt, :now)",
                            ConditionExpression="attribute_exists(id)", ExpressionAttributeValues=values(now=now)),
        rate_limits_table.revoke_item(session_id, now),
    ]


def revoke(session_id: str, now: int) -> None:
    transact(revoke_entries(session_id, now))
