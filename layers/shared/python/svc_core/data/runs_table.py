"""The runs table: partition tenantId, sort id (`run_` + a ULID, so reverse order is newest first).

Item: {tenantId, id, agentKey (`<tenantId>#<agentId>`), agentId, projectId, goal, status, output,
steps, usage, model, created_at, completed_at, error, version, leaseUntil, background,
cancelRequested, conversation}. Index byAgent (partition agentKey, sort id) lists one agent's runs
newest first.

Every write after the first is a whole Put conditional on the `version` the writer read (and
bumps it), so two writers of one run never both win: the first approval, the worker that claims
a queued run, a cancel and the loop's own saves all serialise on it. `conversation` is the
sealed state the loop continues from (svc_core/domain/agent_runs.py); `leaseUntil` (epoch
seconds) says until when the request or worker that runs the run holds it.
"""

from __future__ import annotations

from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import from_item, values
from svc_core.data import outbox_table
from svc_core.data.common import query_page, transact
from svc_core.data.table import Table

BY_AGENT_INDEX = "byAgent"
_TABLE = Table("runs_table", ("tenantId", "id"), private=("tenantId", "agentKey"))


def _agent_key(tenant_id: str, agent_id: str) -> str:
    return f"{tenant_id}#{agent_id}"


def _record(tenant_id: str, run: dict[str, Any]) -> dict[str, Any]:
    return {"tenantId": tenant_id, "agentKey": _agent_key(tenant_id, run["agentId"]), **run}


def get(tenant_id: str, run_id: str) -> dict[str, Any] | None:
    return _TABLE.get(tenant_id, run_id)


def list_for_agent(tenant_id: str, agent_id: str, limit: int, after: str | None
                   ) -> tuple[list[dict[str, Any]], str | None]:
    """Newest first, after the run id `after` (the last of the previous page, or any position)."""
    agent_key = _agent_key(tenant_id, agent_id)
    query = {"TableName": _TABLE.name, "IndexName": BY_AGENT_INDEX, "KeyConditionExpression": "agentKey = :a",
             "ExpressionAttributeValues": values(a=agent_key), "ScanIndexForward": False, "Limit": limit}
    # The index's key and the table's, as this agent's run with that id would have them.
    start = {**_TABLE.key(tenant_id, after), "agentKey": {"S": agent_key}} if after else None
    return query_page(query, start, _TABLE.public)


def start(tenant_id: str, run: dict[str, Any], event: dict[str, Any], now: float) -> None:
    """Store a new run with its agent.started event."""
    transact([
        _TABLE.put_entry(_record(tenant_id, run), ConditionExpression="attribute_not_exists(id)"),
        outbox_table.put_event_item(event, now),
    ])


def write(tenant_id: str, run: dict[str, Any], read_version: int, event: dict[str, Any] | None,
          now: float) -> None:
    """Store the run's new state (with its event, if any) while the stored run is still at
    read_version (run["version"] must be read_version + 1); ConditionFailed otherwise."""
    condition = {"ConditionExpression": "#v = :v", "ExpressionAttributeNames": {"#v": "version"},
                 "ExpressionAttributeValues": values(v=read_version)}
    if not read_version:  # a run stored before versions existed
        condition = {"ConditionExpression": "attribute_exists(id) AND attribute_not_exists(#v)",
                     "ExpressionAttributeNames": {"#v": "version"}}
    items = [_TABLE.put_entry(_record(tenant_id, run), **condition)]
    if event is not None:
        items.append(outbox_table.put_event_item(event, now))
    transact(items)


def control(tenant_id: str, run_id: str) -> tuple[int, bool]:
    """(version, cancelRequested) of the stored run: what the loop checks before each step."""
    answer = aws.client("dynamodb").get_item(
        TableName=_TABLE.name, Key=_TABLE.key(tenant_id, run_id), ConsistentRead=True,
        ProjectionExpression="#v, cancelRequested", ExpressionAttributeNames={"#v": "version"})
    record = from_item(answer.get("Item")) or {}
    return int(record.get("version") or 0), bool(record.get("cancelRequested"))
