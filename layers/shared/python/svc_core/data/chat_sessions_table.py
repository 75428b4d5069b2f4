"""The chat sessions table: partition tenantId, sort id (`chs_` + a ULID, so reverse order is newest first).

Item: {tenantId, id, title, projectId|null, agentId|null, created_at, updated_at, lastEventId (the id
of the session's last stored event, 0 when none), activeTurn ({messageId, firstEventId} of the
assistant turn in progress, absent otherwise), latestTurn ({messageId, firstEventId} of the newest
assistant turn, absent before the first)}.

A turn starts in one transaction (start_turn: the user and the pending assistant message, and
activeTurn/latestTurn, only while no turn is active and lastEventId is what the caller read) and
ends in one (finish_turn: the assistant message's final state, lastEventId, activeTurn removed).
"""

from __future__ import annotations

from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import from_item, to_attr, to_item, values
from svc_core.data import chat_messages_table
from svc_core.data.common import conditional, create_item, query_tenant_items, read_item, transact
from svc_core.platform.config import settings


def _table() -> str:
    return settings().chat_sessions_table


def _key(tenant_id: str, session_id: str) -> dict[str, Any]:
    return {"tenantId": {"S": tenant_id}, "id": {"S": session_id}}


def _public(item: dict[str, Any]) -> dict[str, Any]:
    record = from_item(item)
    record.pop("tenantId", None)
    record["lastEventId"] = int(record.get("lastEventId") or 0)
    record.setdefault("activeTurn", None)
    record.setdefault("latestTurn", None)
    record.setdefault("projectId", None)
    record.setdefault("agentId", None)
    return record


def get(tenant_id: str, session_id: str) -> dict[str, Any] | None:
    return read_item(_table(), _key(tenant_id, session_id), _public)


def list_for_tenant(tenant_id: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
    return query_tenant_items(_table(), tenant_id, limit, after, _key, _public)


def create(tenant_id: str, session: dict[str, Any], answer: dict[str, Any] | None = None) -> None:
    """The session; `answer`: the request's answer, kept with the write (common.create_item)."""
    create_item(_table(), to_item({"tenantId": tenant_id, "lastEventId": 0, **session}), "id", answer=answer)


def delete(tenant_id: str, session_id: str) -> None:
    """Remove the session while no turn is active (else ConditionFailed). Its messages and events are
    unreachable from then on (every read goes through the session) and deleted by ChatCleanupFunction,
    which the table's stream tells of the removal."""
    conditional(aws.client("dynamodb").delete_item, TableName=_table(), Key=_key(tenant_id, session_id),
                ConditionExpression="attribute_exists(id) AND attribute_not_exists(activeTurn)")


def start_turn(tenant_id: str, session_id: str, user_message: dict[str, Any], assistant_message: dict[str, Any],
               turn: dict[str, Any], seen_last_event_id: int, now: str) -> None:
    """Store both messages and make `turn` the active and latest one, while no turn is active and the
    session's lastEventId is still the one read (else ConditionFailed: nothing is written)."""
    transact([
        {"Update": {"TableName": _table(), "Key": _key(tenant_id, session_id),
                    "UpdateExpression": "SET activeTurn = :turn, latestTurn = :turn, updated_at = :now",
                    "ConditionExpression": "attribute_exists(id) AND attribute_not_exists(activeTurn) "
                                           "AND lastEventId = :seen",
                    "ExpressionAttributeValues": values(turn=turn, now=now, seen=seen_last_event_id)}},
        chat_messages_table.put_entry(tenant_id, session_id, user_message),
        chat_messages_table.put_entry(tenant_id, session_id, assistant_message),
    ])


def undo_turn(tenant_id: str, session_id: str, user_message_id: str, assistant_message_id: str,
              previous: dict[str, Any]) -> None:
    """Take back a turn that could not be queued: both messages removed, the session as it was
    (`previous`: the session as read before the turn started)."""
    update = {"TableName": _table(), "Key": _key(tenant_id, session_id),
              "ConditionExpression": "activeTurn.messageId = :mid",
              "ExpressionAttributeValues": values(mid=assistant_message_id, updated=previous["updated_at"])}
    if previous.get("latestTurn") is None:
        update["UpdateExpression"] = "SET updated_at = :updated REMOVE activeTurn, latestTurn"
    else:
        update["UpdateExpression"] = "SET latestTurn = :prev, updated_at = :updated REMOVE activeTurn"
        update["ExpressionAttributeValues"][":prev"] = to_attr(previous["latestTurn"])
    transact([{"Update": update},
              chat_messages_table.delete_entry(tenant_id, session_id, user_message_id),
              chat_messages_table.delete_entry(tenant_id, session_id, assistant_message_id)])


def finish_turn(tenant_id: str, session_id: str, assistant_message: dict[str, Any], last_event_id: int,
                now: str) -> None:
    """Store the assistant message's final state, the session's lastEventId, and end the active turn,
    while that turn is still the active one and the message still open (else ConditionFailed)."""
    transact([
        {"Update": {"TableName": _table(), "Key": _key(tenant_id, session_id),
                    "UpdateExpression": "SET lastEventId = :last, updated_at = :now REMOVE activeTurn",
                    "ConditionExpression": "activeTurn.messageId = :mid",
                    "ExpressionAttributeValues": values(last=last_event_id, now=now, mid=assistant_message["id"])}},
        chat_messages_table.final_put_entry(tenant_id, session_id, assistant_message),
    ])
