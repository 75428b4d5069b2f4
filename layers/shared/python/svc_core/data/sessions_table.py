"""The sessions table: one item per sign-in (a refresh-token family), partition key id.

Item: {id, userId, tenantId (the first tenant), tenantIds (every tenant it has minted an access
token for: a string set), tokenHash (of the current refresh token), generation, created_at,
expiresAt, revokedAt?, ttl}. tenantIds tells a member's removal which sign-ins to end (a refresh
may move a session to another tenant of the user's); sessions written before it have tenantId only.
A refresh rotates the token with a write conditional on the hash of the token presented, so one
token can be used once; a token of an older generation means it was stolen or replayed, and the
whole family is revoked (RFC 9700, section 4.14.2).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import values
from svc_core.data import rate_limits_table
from svc_core.data.common import ConditionFailed, transact
from svc_core.data.table import Table


class StaleToken(Exception):
    """The presented token is not the family's current one (or the family is revoked)."""


_TABLE = Table("sessions_table", ("id",))


def create(session: dict[str, Any], also: Sequence[dict[str, Any]] = ()) -> None:
    """Store a new session, with `also` (the sign-in's audit entry) in the same transaction."""
    _TABLE.create({**session, "tenantIds": {session["tenantId"]}, "ttl": session["expiresAt"]}, also=also)


def get(session_id: str) -> dict[str, Any] | None:
    return _TABLE.get(session_id)


def rotate(session_id: str, presented_hash: str, new_hash: str, now: int, tenant_id: str) -> None:
    """Replace the current token, only if it is the one presented and the family is live; the
    access token it comes with is for tenant_id (added to the session's tenantIds)."""
    try:
        _TABLE.update(
            _TABLE.key(session_id),
            # usedHashes keeps every rotated-out token's hash, so a replay is recognised as one.
            UpdateExpression="SET tokenHash = :new, generation = generation + :one, rotatedAt = :now "
                             "ADD usedHashes :oldset, tenantIds :tenant",
            ConditionExpression="tokenHash = :old AND attribute_not_exists(revokedAt) AND expiresAt > :now",
            ExpressionAttributeValues=values(new=new_hash, one=1, now=now, old=presented_hash,
                                             oldset={presented_hash}, tenant={tenant_id}))
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


def tenants_of(session: dict[str, Any]) -> set[str]:
    """Every tenant the session has minted an access token for."""
    return set(session.get("tenantIds") or ()) | {session["tenantId"]}


def revoke(session_id: str, now: int) -> None:
    """End the family and every access token issued in it (their rate-limit counter is the
    session id, and the revocation mark makes the next request 401)."""
    transact([
        _TABLE.update_entry(_TABLE.key(session_id), UpdateExpression="SET revokedAt = if_not_exists(revokedAt, :now)",
                            ConditionExpression="attribute_exists(id)", ExpressionAttributeValues=values(now=now)),
        rate_limits_table.revoke_item(session_id, now),
    ])
