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
from svc_core.adapters.dynamo import from_item, to_item, values
from svc_core.data.common import conditional, delete_partition, query_page, read_item
from svc_core.platform.config import settings

OPEN_STATUSES = ("pending", "streaming")


def _table() -> str:
    return settings().chat_messages_table


def _key(tenant_id: str, session_id: str, message_id: str) -> dict[str, Any]:
    return {"sessionKey": {"S": f"{tenant_id}#{session_id}"}, "id": {"S": message_id}}


def _public(item: dict[str, Any]) -> dict[str, Any]:
    record = from_item(item)
    for name in ("sessionKey", "tenantId"):
        record.pop(name, None)
    return record


def _item(tenant_id: str, session_id: str, message: dict[str, Any]) -> dict[str, Any]:
    return to_item({"sessionKey": f"{tenant_id}#{session_id}", "tenantId": tenant_id, "sessionId": session_id,
                    **message})


def get(tenant_id: str, session_id: str, message_id: str) -> dict[str, Any] | None:
    return read_item(_table(), _key(tenant_id, session_id, message_id), _public)


def newest(tenant_id: str, session_id: str, limit: int, before: str | None = None) -> tuple[list[dict[str, Any]], bool]:
    """The session's newest `limit` messages (older than the id `before`, if given), in chronological
    order, and whether older ones exist."""
    query: dict[str, Any] = {
        "TableName": _table(), "KeyConditionExpression": "sessionKey = :k" + (" AND id < :b" if before else ""),
        "ExpressionAttributeValues": values(k=f"{tenant_id}#{session_id}", **({"b": before} if before else {})),
        "ScanIndexForward": False, "Limit": limit, "ConsistentRead": True}
    answer = aws.client("dynamodb").query(**query)
    items = [_public(i) for i in answer.get("Items", [])]
    items.reverse()
    return items, bool(answer.get("LastEvaluatedKey"))


def list_for_session(tenant_id: str, session_id: str, limit: int, after: str | None
                     ) -> tuple[list[dict[str, Any]], str | None]:
    """Oldest first, after the message id `after` (the last of the previous page, or any position):
    the table's own key, the session's partition in id order."""
    query = {"TableName": _table(), "KeyConditionExpression": "sessionKey = :k",
             "ExpressionAttributeValues": values(k=f"{tenant_id}#{session_id}"), "Limit": limit, "ConsistentRead": True}
    return query_page(query, _key(tenant_id, session_id, after) if after else None, _public)


def put_entry(tenant_id: str, session_id: str, message: dict[str, Any]) -> dict[str, Any]:
    """A TransactWriteItems entry that stores a new message."""
    return {"Put": {"TableName": _table(), "Item": _item(tenant_id, session_id, message),
                    "ConditionExpression": "attribute_not_exists(id)"}}


def final_put_entry(tenant_id: str, session_id: str, message: dict[str, Any]) -> dict[str, Any]:
    """A TransactWriteItems entry that stores an assistant message's final state while it is still open."""
    return {"Put": {"TableName": _table(), "Item": _item(tenant_id, session_id, message),
                    "ConditionExpression": "#s IN (:pending, :streaming)", "ExpressionAttributeNames": {"#s": "status"},
                    "ExpressionAttributeValues": values(pending="pending", streaming="streaming")}}


def delete_entry(tenant_id: str, session_id: str, message_id: str) -> dict[str, Any]:
    return {"Delete": {"TableName": _table(), "Key": _key(tenant_id, session_id, message_id)}}


def start(tenant_id: str, session_id: str, message_id: str, started_at: str, model: str) -> None:
    """Mark a pending assistant message streaming (a worker took its turn); else ConditionFailed."""
    conditional(aws.client("dynamodb").update_item, TableName=_table(), Key=_key(tenant_id, session_id, message_id),
                UpdateExpression="SET #s = :streaming, started_at = :now, model = :model",
                ConditionExpression="#s = :pending", ExpressionAttributeNames={"#s": "status"},
                ExpressionAttributeValues=values(streaming="streaming", pending="pending", now=started_at,
                                                 model=model))


def delete_all(tenant_id: str, session_id: str) -> int:
    """Delete every message of the session (it was deleted); the number deleted."""
    return delete_partition(_table(), {"sessionKey": {"S": f"{tenant_id}#{session_id}"}}, "id")
