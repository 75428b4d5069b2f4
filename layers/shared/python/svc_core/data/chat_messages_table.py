"""The chat messages table: the messages of chat sessions.

Partition sessionKey (`<tenantId>#<sessionId>`), sort id (`msg_` + a ULID: ascending is
chronological). Item: {sessionKey, id, tenantId, sessionId, role (user | assistant), content,
status (user: completed; assistant: pending, streaming, completed, failed), usage {inputTokens,
outputTokens, cacheReadTokens, cacheWriteTokens, microCredits, estimated}, model, error,
firstEventId, lastEventId, projectId, userMessageId (assistant), created_at, completed_at,
started_at (assistant: when a worker took the turn)}.

Messages are written in transactions with the session (data/chat_sessions_table.py), which uses
put_item_entry / final_put_entry / delete_entry; the worker marks a turn started with `start`.
"""

from __future__ import annotations

from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import values
from svc_core.data.common import delete_partition
from svc_core.data.table import Table

OPEN_STATUSES = ("pending", "streaming")
_TABLE = Table("chat_messages_table", ("sessionKey", "id"), private=("sessionKey", "tenantId"))


def _key(tenant_id: str, session_id: str, message_id: str) -> dict[str, Any]:
    return _TABLE.key(f"{tenant_id}#{session_id}", message_id)


def _record(tenant_id: str, session_id: str, message: dict[str, Any]) -> dict[str, Any]:
    return {"sessionKey": f"{tenant_id}#{session_id}", "tenantId": tenant_id, "sessionId": session_id, **message}


def get(tenant_id: str, session_id: str, message_id: str) -> dict[str, Any] | None:
    return _TABLE.get(f"{tenant_id}#{session_id}", message_id)


def newest(tenant_id: str, session_id: str, limit: int, before: str | None = None) -> tuple[list[dict[str, Any]], bool]:
    """The session's newest `limit` messages (older than the id `before`, if given), in chronological
    order, and whether older ones exist."""
    query: dict[str, Any] = {
        "TableName": _TABLE.name, "KeyConditionExpression": "sessionKey = :k" + (" AND id < :b" if before else ""),
        "ExpressionAttributeValues": values(k=f"{tenant_id}#{session_id}", **({"b": before} if before else {})),
        "ScanIndexForward": False, "Limit": limit, "ConsistentRead": True}
    answer = aws.client("dynamodb").query(**query)
    items = [_TABLE.public(i) for i in answer.get("Items", [])]
    items.reverse()
    return items, bool(answer.get("LastEvaluatedKey"))


def list_for_session(tenant_id: str, session_id: str, limit: int, after: str | None
                     ) -> tuple[list[dict[str, Any]], str | None]:
    """Oldest first, after the message id `after` (the last of the previous page, or any position):
    the table's own key, the session's partition in id order."""
    return _TABLE.page(f"{tenant_id}#{session_id}", limit, after, ScanIndexForward=True, ConsistentRead=True)


def put_entry(tenant_id: str, session_id: str, message: dict[str, Any]) -> dict[str, Any]:
    """A TransactWriteItems entry that stores a new message."""
    return _TABLE.put_entry(_record(tenant_id, session_id, message), ConditionExpression="attribute_not_exists(id)")


def final_put_entry(tenant_id: str, session_id: str, message: dict[str, Any]) -> dict[str, Any]:
    """A TransactWriteItems entry that stores an assistant message's final state while it is still open."""
    return _TABLE.put_entry(_record(tenant_id, session_id, message), ConditionExpression="#s IN (:pending, :streaming)",
                            ExpressionAttributeNames={"#s": "status"},
                            ExpressionAttributeValues=values(pending="pending", streaming="streaming"))


def delete_entry(tenant_id: str, session_id: str, message_id: str) -> dict[str, Any]:
    return _TABLE.delete_entry(_key(tenant_id, session_id, message_id))


def start(tenant_id: str, session_id: str, message_id: str, started_at: str, model: str) -> None:
    """Mark a pending assistant message streaming (a worker took its turn); else ConditionFailed."""
    _TABLE.update(_key(tenant_id, session_id, message_id),
                  UpdateExpression="SET #s = :streaming, started_at = :now, model = :model",
                  ConditionExpression="#s = :pending", ExpressionAttributeNames={"#s": "status"},
                  ExpressionAttributeValues=values(streaming="streaming", pending="pending", now=started_at,
                                                   model=model))


def delete_all(tenant_id: str, session_id: str) -> int:
    """Delete every message of the session (it was deleted); the number deleted."""
    return delete_partition(_TABLE.name, {"sessionKey": {"S": f"{tenant_id}#{session_id}"}}, "id")
