"""The sessions table: one item per sign-in (a refresh-token family), partition key id.

Item: {id, userId, tenantId, tokenHash (of the current refresh token), generation, created_at,
expiresAt, revokedAt?, ttl}. A refresh rotates the token with a write conditional on the
hash of the token presented, so one token can be used once; a token of an older generation
means it was stolen or replayed, and the whole family is revoked (RFC 9700, section 4.14.2).
"""

from __future__ import annotations

from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import from_item, to_item, values
from svc_core.data import rate_limits_table
from svc_core.data.common import create_item, is_condition_failure, transact
from svc_core.platform.config import settings


class StaleToken(Exception):
    """The presented token is not the family's current one (or the family is revoked)."""


def _table() -> str:
    return settings().sessions_table


def create(session: dict[str, Any]) -> None:
    create_item(_table(), to_item({**session, "ttl": session["expiresAt"]}), "id")


def get(session_id: str) -> dict[str, Any] | None:
    answer = aws.client("dynamodb").get_item(TableName=_table(), Key={"id": {"S": session_id}}, ConsistentRead=True)
    return from_item(answer.get("Item"))


def rotate(session_id: str, presented_hash: str, new_hash: str, now: int) -> None:
    """Replace the current token, only if it is the one presented and the family is live."""
    try:
        aws.client("dynamodb").update_item(
            TableName=_table(), Key={"id": {"S": session_id}},
            # usedHashes keeps every rotated-out token's hash, so a replay is recognised as one.
            UpdateExpression="SET tokenHash = :new, generation = generation + :one, rotatedAt = :now "
                             "ADD usedHashes :oldset",
            ConditionExpression="tokenHash = :old AND attribute_not_exists(revokedAt) AND expiresAt > :now",
            ExpressionAttributeValues=values(new=new_hash, one=1, now=now, old=presented_hash,
                                             oldset={presented_hash}))
    except Exception as exc:
        if is_condition_failure(exc):
            raise StaleToken() from None
        raise


def ids_for_user(user_id: str) -> list[str]:
    """Every session of the user, live or not (the byUser index)."""
    found: list[str] = []
    query: dict[str, Any] = {"TableName": _table(), "IndexName": "byUser", "KeyConditionExpression": "userId = :u",
                             "ExpressionAttributeValues": values(u=user_id)}
    while True:
        answer = aws.client("dynamodb").query(**query)
        found += [item["id"]["S"] for item in answer.get("Items", [])]
        if "LastEvaluatedKey" not in answer:
            return found
        query["ExclusiveStartKey"] = answer["LastEvaluatedKey"]


def revoke(session_id: str, now: int) -> None:
    """End the family and every access token issued in it (their rate-limit counter is the
    session id, and the revocation mark makes the next request 401)."""
    transact([
        {"Update": {"TableName": _table(), "Key": {"id": {"S": session_id}},
                    "UpdateExpression": "SET revokedAt = if_not_exists(revokedAt, :now)",
                    "ConditionExpression": "attribute_exists(id)",
                    "ExpressionAttributeValues": values(now=now)}},
        rate_limits_table.revoke_item(session_id, now),
    ])
