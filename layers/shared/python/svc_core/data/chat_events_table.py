"""The chat events table: the stored events of chat sessions' assistant turns.

Partition sessionKey (`<tenantId>#<sessionId>`), sort seq (a number: the event id, 1, 2, 3 ...
per session, increasing across turns). Item: {sessionKey, seq, event, data (the event's data as a
JSON string, so any JSON the model gives survives as it was), ttl?}. The chat turn worker writes
each event here before anything else sees it; the stream endpoint only reads this table.

Functions (the contract shared with the stream endpoint):
- append(tenant_id, session_id, events): each {"id": int, "event": str, "data": dict}; every put is
  conditional on the id not existing, so two writers can never both store an event id;
- after(tenant_id, session_id, after_id, limit=200): the events with id > after_id, ascending.
"""

from __future__ import annotations

import json
from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import values
from svc_core.data.common import create_item, delete_partition
from svc_core.data.table import Table

_TABLE = Table("chat_events_table", ("sessionKey", "seq"))


def session_key(tenant_id: str, session_id: str) -> str:
    return f"{tenant_id}#{session_id}"


def _item(key: str, event: dict[str, Any]) -> dict[str, Any]:
    return {"sessionKey": {"S": key}, "seq": {"N": str(int(event["id"]))}, "event": {"S": event["event"]},
            "data": {"S": json.dumps(event["data"], separators=(",", ":"), ensure_ascii=False)}}


def _public(item: dict[str, Any]) -> dict[str, Any]:
    return {"id": int(item["seq"]["N"]), "event": item["event"]["S"], "data": json.loads(item["data"]["S"])}


def append(tenant_id: str, session_id: str, events: list[dict[str, Any]]) -> None:
    """Store the events in order; ConditionFailed if one's id is already stored (nothing after it is written)."""
    key = session_key(tenant_id, session_id)
    client = aws.client("dynamodb")
    for event in events:
        create_item(_TABLE.name, _item(key, event), "seq", client)


def after(tenant_id: str, session_id: str, after_id: int, limit: int = 200) -> list[dict[str, Any]]:
    """The events with id > after_id, ascending, at most `limit` of them."""
    answer = aws.client("dynamodb").query(
        TableName=_TABLE.name, KeyConditionExpression="sessionKey = :k AND seq > :a",
        ExpressionAttributeValues=values(k=session_key(tenant_id, session_id), a=int(after_id)),
        ScanIndexForward=True, Limit=limit, ConsistentRead=True)
    return [_public(item) for item in answer.get("Items", [])]


def last(tenant_id: str, session_id: str) -> dict[str, Any] | None:
    """The session's newest stored event (the worker uses it to finish a turn a crash left half-way)."""
    answer = aws.client("dynamodb").query(
        TableName=_TABLE.name, KeyConditionExpression="sessionKey = :k",
        ExpressionAttributeValues=values(k=session_key(tenant_id, session_id)),
        ScanIndexForward=False, Limit=1, ConsistentRead=True)
    items = answer.get("Items", [])
    return _public(items[0]) if items else None


def delete_all(tenant_id: str, session_id: str) -> int:
    """Delete every stored event of the session (it was deleted); the number deleted."""
    return delete_partition(_TABLE.name, {"sessionKey": {"S": session_key(tenant_id, session_id)}}, "seq")
