"""The runs table: partition tenantId, sort id (`run_` + a ULID, so reverse order is newest first).

Item: {tenantId, id, agentKey (`<tenantId>#<agentId>`), agentId, projectId, goal, status, output,
steps, usage, model, created_at, completed_at, error}. Index byAgent (partition agentKey, sort id)
lists one agent's runs newest first. A run is written at its start with agent.started, and its
final state with agent.completed or agent.failed, each in one transaction with the outbox; the
final write happens only while the stored run is still `running`.
"""

from __future__ import annotations

from typing import Any

from svc_core import aws
from svc_core.config import settings
from svc_core.data import outbox_table
from svc_core.data.common import query_page, transact
from svc_core.dynamo import from_item, to_item, values

BY_AGENT_INDEX = "byAgent"


def _table() -> str:
    return settings().runs_table


def _key(tenant_id: str, run_id: str) -> dict[str, Any]:
    return {"tenantId": {"S": tenant_id}, "id": {"S": run_id}}


def _agent_key(tenant_id: str, agent_id: str) -> str:
    return f"{tenant_id}#{agent_id}"


def _public(item: dict[str, Any]) -> dict[str, Any]:
    record = from_item(item)
    record.pop("tenantId", None)
    record.pop("agentKey", None)
    return record


def _item(tenant_id: str, run: dict[str, Any]) -> dict[str, Any]:
    return to_item({"tenantId": tenant_id, "agentKey": _agent_key(tenant_id, run["agentId"]), **run})


def get(tenant_id: str, run_id: str) -> dict[str, Any] | None:
    answer = aws.client("dynamodb").get_item(TableName=_table(), Key=_key(tenant_id, run_id), ConsistentRead=True)
    item = answer.get("Item")
    return _public(item) if item else None


def list_for_agent(tenant_id: str, agent_id: str, limit: int, cursor: str | None
                   ) -> tuple[list[dict[str, Any]], str | None]:
    agent_key = _agent_key(tenant_id, agent_id)
    query = {"TableName": _table(), "IndexName": BY_AGENT_INDEX, "KeyConditionExpression": "agentKey = :a",
             "ExpressionAttributeValues": values(a=agent_key), "ScanIndexForward": False, "Limit": limit}
    return query_page(query, cursor, lambda after: {**_key(tenant_id, after), "agentKey": {"S": agent_key}},
                      _public)


def start(tenant_id: str, run: dict[str, Any], event: dict[str, Any], now: float) -> None:
    """Store a new run with its agent.started event."""
    transact([
        {"Put": {"TableName": _table(), "Item": _item(tenant_id, run),
                 "ConditionExpression": "attribute_not_exists(id)"}},
        outbox_table.put_event_item(event, now),
    ])


def finish(tenant_id: str, run: dict[str, Any], event: dict[str, Any] | None, now: float) -> None:
    """Store the run's new state (with its event, if any) while the stored run is still running."""
    items: list[dict[str, Any]] = [
        {"Put": {"TableName": _table(), "Item": _item(tenant_id, run),
                 "ConditionExpression": "#s = :running", "ExpressionAttributeNames": {"#s": "status"},
                 "ExpressionAttributeValues": values(running="running")}}]
    if event is not None:
        items.append(outbox_table.put_event_item(event, now))
    transact(items)
