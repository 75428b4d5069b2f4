"""Helpers for the projects tests: calls, envelope checks, and snapshots of stored data."""

from __future__ import annotations

import json
import re
from typing import Any

from svc_core.platform.config import settings
from tests.support.functions import Reply, call

CREATE, GET, LIST, UPDATE, DELETE = (
    "Projects-CreateProject", "Projects-GetProject", "Projects-ListProjects",
    "Projects-UpdateProject", "Projects-DeleteProject",
)
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$")
PROJECT_ID = re.compile(r"^proj_[0-9A-HJKMNP-TV-Z]{26}$")
EVENT_ID = re.compile(r"^evt_[0-9A-HJKMNP-TV-Z]{26}$")
PROJECT_FIELDS = {"id", "name", "description", "language", "created_at", "updated_at"}
# Text that must never reach a client in an error body.
LEAKS = ("Traceback", "botocore", "ClientError", "TransactionCanceled", "ConditionalCheck",
         "arn:aws", "File \"", "RuntimeError")


def api(event_name: str, key: str, **kwargs: Any) -> Reply:
    return call("projects", event_name, token=key, **kwargs)


def create(key: str, **body: Any) -> dict[str, Any]:
    reply = api(CREATE, key, body=body)
    assert reply.status == 201, reply
    return reply.data


def get(key: str, project_id: str) -> Reply:
    return api(GET, key, path_params={"id": project_id})


def patch(key: str, project_id: str, body: Any = None, **kwargs: Any) -> Reply:
    return api(UPDATE, key, path_params={"id": project_id}, body=body, **kwargs)


def delete(key: str, project_id: str, **kwargs: Any) -> Reply:
    return api(DELETE, key, path_params={"id": project_id}, **kwargs)


def list_page(key: str, **query: Any) -> Reply:
    return api(LIST, key, query={k: str(v) for k, v in query.items()} or None)


def list_all(key: str, limit: int = 100) -> list[dict[str, Any]]:
    items, cursor = [], None
    while True:
        reply = list_page(key, limit=limit, **({"cursor": cursor} if cursor else {}))
        assert reply.status == 200, reply
        items.extend(reply.data["items"])
        cursor = reply.data["nextCursor"]
        if cursor is None:
            return items


def assert_envelope(reply: Reply) -> None:
    meta = reply.json["meta"]
    assert meta["request_id"] == reply.headers["x-request-id"]
    assert ISO_UTC.match(meta["timestamp"]), meta


def assert_error(reply: Reply, status: int, code: str) -> dict[str, Any]:
    """The error envelope with this status and code; returns error.details."""
    assert reply.status == status, reply
    assert reply.headers["content-type"].startswith("application/json")
    assert set(reply.json) == {"error", "meta"}, reply
    error = reply.error
    assert error["code"] == code, reply
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["details"], dict)
    assert_envelope(reply)
    for leak in LEAKS:
        assert leak not in reply.text, (leak, reply.text)
    return error["details"]


def bad_fields(reply: Reply) -> set[str]:
    details = assert_error(reply, 400, "VALIDATION_ERROR")
    return {problem["field"] for problem in details["fields"]}


def _scan(table: str) -> list[dict[str, Any]]:
    from svc_core.adapters import aws
    ddb, items, start = aws.client("dynamodb"), [], None
    while True:
        answer = ddb.scan(TableName=table, ConsistentRead=True, **({"ExclusiveStartKey": start} if start else {}))
        items.extend(answer.get("Items", []))
        start = answer.get("LastEvaluatedKey")
        if not start:
            return items


def stored_projects(tenant_id: str | None = None) -> list[dict[str, Any]]:
    from svc_core.adapters.dynamo import from_item
    items = [from_item(i) for i in _scan(settings().projects_table)]
    return [i for i in items if tenant_id is None or i["tenantId"] == tenant_id]


def as_stored(project: dict[str, Any], tenant_id: str) -> dict[str, Any]:
    """A project as its table item reads: with its tenant, and without the fields that are null."""
    return {k: v for k, v in {**project, "tenantId": tenant_id}.items() if v is not None}


def outbox_events() -> list[dict[str, Any]]:
    from svc_core.adapters.dynamo import from_item
    return sorted((from_item(i) for i in _scan(settings().outbox_table)), key=lambda e: e["id"])


def snapshot() -> tuple[list[str], list[str]]:
    """Every stored project and outbox event, to compare before and after a refused request."""
    canon = lambda items: sorted(json.dumps(i, sort_keys=True) for i in items)  # noqa: E731
    return canon(_scan(settings().projects_table)), canon(_scan(settings().outbox_table))
