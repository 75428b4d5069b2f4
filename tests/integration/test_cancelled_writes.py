"""A cancelled transaction publishes nothing, on both engines, for every write that carries an
outbox event. Each operation runs through its real handler while every TransactWriteItems is made
to fail by a condition that cannot hold, added to its outbox event's put (an item the function's
role may write: an extra ConditionCheck on the outbox would be refused by the role, as on AWS, before
DynamoDB could cancel anything). DynamoDB then cancels the whole transaction itself. Afterwards
the outbox stream, read as the local stack reads it (on moto, with its guard against the records
moto writes for cancelled transactions), holds no event for it, nothing of the change is stored,
and the answer is no 5xx. A real event written after it still arrives: the stream goes on."""

from __future__ import annotations

import contextlib

import pytest

from devstack.pollers import StreamPoller
from devstack.stack import LocalStack
from tests.support.functions import call

# They read the outbox stream, which a wipe between tests would leave records in.
pytestmark = pytest.mark.fresh_stack

OPERATIONS = ["register", "create_tenant", "create_project", "update_project", "delete_project", "run_agent"]


@contextlib.contextmanager
def every_transaction_cancelled(stack):
    from svc_core.adapters import aws
    from svc_core.platform.config import settings
    client = aws.client("dynamodb")

    def add_failing_check(params, **_):
        items = []
        for item in params["TransactItems"]:
            put = item.get("Put")
            if put and put["TableName"] == settings().outbox_table:
                condition = put.get("ConditionExpression")
                never = "attribute_exists(#neverWritten)"
                item = {"Put": {**put, "ConditionExpression": f"({condition}) AND {never}" if condition else never,
                                "ExpressionAttributeNames": {**put.get("ExpressionAttributeNames", {}),
                                                             "#neverWritten": "neverWritten"}}}
            items.append(item)
        params["TransactItems"] = items

    client.meta.events.register("before-parameter-build.dynamodb.TransactWriteItems", add_failing_check)
    try:
        yield
    finally:
        client.meta.events.unregister("before-parameter-build.dynamodb.TransactWriteItems", add_failing_check)


def _poller(stack, backend: str, delivered: list):
    clients = {name: stack.client(name) for name in ("dynamodb", "dynamodbstreams", "sqs")}

    def function(event):
        delivered.extend(r["dynamodb"]["NewImage"]["type"]["S"] for r in event["Records"])
        return {"batchItemFailures": []}

    return StreamPoller(clients, "OutboxTable", function,
                        {"BatchSize": 25, "FunctionResponseTypes": ["ReportBatchItemFailures"],
                         "FilterCriteria": {"Filters": [{"Pattern": '{"eventName": ["INSERT"]}'}]}},
                        log=lambda _m: None, errors=lambda _m: None,
                        skip_insert=LocalStack._phantom_check(clients, "OutboxTable") if backend == "moto" else None)


def _prepare(stack, operation: str) -> dict:
    """What the operation needs, made before transactions fail."""
    from tests.support import projects as project_api
    tenant, key = stack.tenant_with_key()
    made = {"tenant": tenant, "key": key}
    if operation in ("update_project", "delete_project", "run_agent"):
        made["project"] = project_api.create(key, name="Kept")["id"]
    if operation == "run_agent":
        agent = call("agents", "Agents-CreateAgent", token=key, body={
            "name": "Notes", "systemPrompt": "You keep notes.", "config": {"autonomyLevel": "autonomous"}})
        made["agent"] = agent.data["id"]
    if operation == "create_tenant":  # a user who exists (a creation is counted on the user's profile)
        from svc_core.domain.tenants import create_tenant_with_owner
        owner = create_tenant_with_owner(tenant_name="Own", email="owner@example.com", user_name="O",
                                         password="a long enough password")
        made["token"] = stack.user_token(owner["tenant"]["id"], "owner", owner["user"]["id"])
    return made


def _perform(operation: str, made: dict):
    key = made["key"]
    if operation == "register":
        return call("auth", "Auth-Register", body={"email": "cancelled@example.com", "name": "C",
                                                   "password": "a long enough password"})
    if operation == "create_tenant":
        return call("tenants", "Tenants-CreateTenant", token=made["token"], body={"name": "Never"})
    if operation == "create_project":
        return call("projects", "Projects-CreateProject", token=key, body={"name": "Never", "language": "python"})
    if operation == "update_project":
        return call("projects", "Projects-UpdateProject", token=key, path_params={"id": made["project"]},
                    body={"description": "never"})
    if operation == "delete_project":
        return call("projects", "Projects-DeleteProject", token=key, path_params={"id": made["project"]})
    return call("agents", "Agents-ExecuteAgent", token=key, path_params={"id": made["agent"]},
                body={"goal": "Write the notes.", "projectId": made["project"]})


@pytest.mark.parametrize("operation", OPERATIONS)
def test_a_cancelled_write_publishes_nothing_and_stores_nothing(data_backend, operation):
    stack = data_backend.stack
    delivered: list[str] = []
    made = _prepare(stack, operation)
    poller = _poller(stack, data_backend.name, delivered)
    for _ in range(3):  # what the preparation published
        poller.poll_once()
    before = len(delivered)
    outbox_before = len(data_backend.items(stack.environment["OUTBOX_TABLE"]))
    projects_before = data_backend.items(stack.environment["PROJECTS_TABLE"])

    with every_transaction_cancelled(stack):
        reply = _perform(operation, made)
    assert reply.status == 409 or (operation == "register" and reply.status == 201), reply
    for _ in range(3):
        poller.poll_once()
    assert delivered[before:] == [], f"{operation} published {delivered[before:]} though it was cancelled"
    assert len(data_backend.items(stack.environment["OUTBOX_TABLE"])) == outbox_before
    assert data_backend.items(stack.environment["PROJECTS_TABLE"]) == projects_before

    from svc_core.contracts import events
    from svc_core.data import outbox_table
    from svc_core.data.common import transact
    from svc_core.platform import timeutil
    transact([outbox_table.put_event_item(events.new_event("project.created", made["tenant"], {"n": 1}),
                                          timeutil.now())])
    for _ in range(3):
        poller.poll_once()
    assert delivered[before:] == ["project.created"]
