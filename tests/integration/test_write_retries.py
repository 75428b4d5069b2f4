"""Writes that botocore retries after a lost answer: a committed write is answered as success, once.

A read timeout after the server committed makes botocore send the same request again. A
transaction carries a ClientRequestToken (svc_core.data.common.transact) so DynamoDB answers the
retry from the first run; a conditional create (common.create_item) recognises its own item in
the item its failed condition found. The retry is simulated with a `before-send` hook that sends
the first attempt to the server itself and then raises ReadTimeoutError, as a lost answer does.

moto ignores ClientRequestToken (it runs a transaction again), so the token tests run on DynamoDB
Local (atomic_stack), which honours it as DynamoDB does.
"""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError, ReadTimeoutError

from svc_core.adapters import aws
from svc_core.data import common
from svc_core.data.common import ConditionFailed, TokenReused, create_item, transact
from svc_core.platform.config import settings
from tests.support.functions import call
from tests.support.projects import CREATE, api, outbox_events, stored_projects


def _put(item_id: str, **extra) -> dict:
    item = {"tenantId": {"S": "t_retry"}, "id": {"S": item_id}, **extra}
    return {"Put": {"TableName": settings().projects_table, "Item": item,
                    "ConditionExpression": "attribute_not_exists(id)"}}


def _stored(backend, item_id: str):
    return backend.item(settings().projects_table, {"tenantId": "t_retry", "id": item_id})


class LostAnswers:
    """A before-send hook on the cached DynamoDB client: the first `times` attempts of `operation`
    reach the server, then their answer is lost (ReadTimeoutError), so botocore retries."""

    def __init__(self, operation: str, times: int = 1) -> None:
        self.client = aws.client("dynamodb")
        self.operation, self.left, self.sent = operation, times, []
        self.client.meta.events.register(f"before-send.dynamodb.{operation}", self)

    def __call__(self, request, **_):
        self.sent.append(request.body)
        if self.left <= 0:
            return None  # botocore sends it
        self.left -= 1
        answer = self.client._endpoint.http_session.send(request)
        assert answer.status_code == 200, answer.content
        raise ReadTimeoutError(endpoint_url=request.url)

    def close(self) -> None:
        self.client.meta.events.unregister(f"before-send.dynamodb.{self.operation}", self)


@pytest.fixture
def lost_answers():
    hooks = []

    def make(operation: str, times: int = 1) -> LostAnswers:
        hooks.append(LostAnswers(operation, times))
        return hooks[-1]
    yield make
    for hook in hooks:
        hook.close()


# ---- DynamoDB's ClientRequestToken, on DynamoDB Local ------------------------------------------

def test_a_transaction_sent_twice_with_one_token_is_applied_once(atomic_stack):
    dynamodb = atomic_stack.dynamodb()
    items = [_put("p1", n={"N": "1"})]
    dynamodb.transact_write_items(TransactItems=items, ClientRequestToken="tok-same")
    dynamodb.transact_write_items(TransactItems=items, ClientRequestToken="tok-same")  # no ConditionalCheckFailed
    assert [i["id"] for i in atomic_stack.items(settings().projects_table)] == ["p1"]
    with pytest.raises(ClientError) as refused:  # without the token the condition fails
        dynamodb.transact_write_items(TransactItems=items)
    assert refused.value.response["Error"]["Code"] == "TransactionCanceledException"


def test_a_token_sent_with_other_items_is_token_reused_not_a_conflict(atomic_stack):
    transact([_put("p1")], token="tok-one")
    with pytest.raises(TokenReused):
        transact([_put("p2")], token="tok-one")
    assert _stored(atomic_stack, "p2") is None


def test_a_token_whose_first_use_was_cancelled_runs_afresh(atomic_stack):
    """What transact()'s conflict retries rely on when they keep the token."""
    dynamodb = atomic_stack.dynamodb()
    dynamodb.put_item(**{k: v for k, v in _put("p1")["Put"].items() if k != "ConditionExpression"})
    with pytest.raises(ConditionFailed):
        transact([_put("p1", v={"S": "new"})], token="tok-cancelled")
    dynamodb.delete_item(TableName=settings().projects_table, Key={"tenantId": {"S": "t_retry"}, "id": {"S": "p1"}})
    transact([_put("p1", v={"S": "new"})], token="tok-cancelled")
    assert _stored(atomic_stack, "p1")["v"] == "new"


def test_transact_sends_one_token_on_every_attempt(atomic_stack, lost_answers):
    hook = lost_answers("TransactWriteItems")
    transact([_put("p1")])
    assert _stored(atomic_stack, "p1") is not None
    [first, retry] = hook.sent
    assert first == retry and b'"ClientRequestToken"' in first


def test_a_project_create_whose_answer_was_lost_answers_201_once(atomic_stack, lost_answers):
    """The measured failure: the transaction committed, botocore retried, the retry's condition failed."""
    stack = atomic_stack.stack
    tenant, key = stack.tenant_with_key()
    assert call("projects", "Projects-ListProjects", token=key).status == 200  # the key's last use, a transaction too
    hook = lost_answers("TransactWriteItems")
    reply = api(CREATE, key, body={"name": "Apollo"})
    assert reply.status == 201, reply
    assert len(hook.sent) == 2
    [stored] = stored_projects(tenant)
    assert stored["id"] == reply.data["id"]
    created = [e for e in outbox_events() if e["type"] == "project.created" and stored["id"] in json.dumps(e)]
    assert len(created) == 1


# ---- conditional creates (put_item) on both engines --------------------------------------------

def test_create_item_takes_its_own_earlier_write_as_success(data_backend):
    item = {"tenantId": {"S": "t_retry"}, "id": {"S": "p1"}, "n": {"N": "7"}, "tags": {"SS": ["b", "a"]}}
    create_item(settings().projects_table, item, "id")
    create_item(settings().projects_table, item, "id")  # the same item: this write's earlier attempt
    with pytest.raises(ConditionFailed):
        create_item(settings().projects_table, {**item, "n": {"N": "8"}}, "id")
    assert _stored(data_backend, "p1")["n"] == 7


def test_same_item_compares_numbers_by_value_and_sets_unordered():
    assert common.same_item({"a": {"N": "1.50"}, "s": {"SS": ["x", "y"]}}, {"a": {"N": "1.5"}, "s": {"SS": ["y", "x"]}})
    assert not common.same_item({"a": {"N": "1"}}, {"a": {"N": "2"}})
    assert not common.same_item({"a": {"N": "1"}}, {"a": {"N": "1"}, "b": {"S": "x"}})
    assert not common.same_item(None, {"a": {"N": "1"}})


def test_an_agent_create_whose_answer_was_lost_answers_201_once(data_backend, lost_answers):
    tenant, key = data_backend.stack.tenant_with_key()
    hook = lost_answers("PutItem")
    reply = call("agents", "Agents-CreateAgent", token=key, body={
        "name": "Writer", "systemPrompt": "You write release notes.", "config": {"autonomyLevel": "suggest"}})
    assert reply.status == 201, reply
    assert len(hook.sent) == 2
    agents = [i for i in data_backend.items(settings().agents_table) if i["tenantId"] == tenant]
    assert [a["id"] for a in agents] == [reply.data["id"]]


def test_a_retry_cancelled_by_its_own_committed_attempt_answers_success(data_backend, monkeypatch):
    """After a stall, a timed-out attempt and its retry can reach the datastore together: the first
    commits and the retry is cancelled on the conditions the first one's writes broke (DynamoDB Local
    does this despite the token; moto keeps no token). The write's own outbox event tells that it
    committed: the PATCH answers 200 once, with one event, on both engines."""
    from tests.support.projects import create, patch
    stack = data_backend.stack
    _, key = stack.tenant_with_key()
    project = create(key, name="Apollo")
    client = aws.client("dynamodb")
    real = client.transact_write_items
    calls = []

    def committed_then_cancelled(**request):
        calls.append(request)
        real(**request)  # the first attempt commits; its answer is lost, and the retry is cancelled
        raise ClientError({"Error": {"Code": "TransactionCanceledException", "Message": "cancelled"},
                           "CancellationReasons": [{"Code": "ConditionalCheckFailed"}, {"Code": "None"}]},
                          "TransactWriteItems")

    monkeypatch.setattr(client, "transact_write_items", committed_then_cancelled)
    reply = patch(key, project["id"], {"description": "after the stall"})
    monkeypatch.setattr(client, "transact_write_items", real)
    assert reply.status == 200, reply
    assert len(calls) == 1
    updates = [e for e in outbox_events() if e["type"] == "project.updated"]
    assert [e["data"]["description"] for e in updates] == ["after the stall"]


def test_a_cancelled_write_whose_event_id_is_someone_elses_is_still_a_conflict(data_backend):
    """The witness is the event item as written, not just its id."""
    stack = data_backend.stack
    taken = {"id": {"S": "evt_01TAKEN"}, "type": {"S": "sentinel"}}
    stack.client("dynamodb").put_item(TableName=settings().outbox_table, Item=taken)
    with pytest.raises(ConditionFailed):
        transact([{"Put": {"TableName": settings().outbox_table, "ConditionExpression": "attribute_not_exists(id)",
                           "Item": {"id": {"S": "evt_01TAKEN"}, "type": {"S": "project.created"}}}}])


def test_a_change_with_an_audit_entry_and_no_event_has_the_entry_as_its_witness(data_backend, monkeypatch):
    """A webhook's change sends no event, but its audit entry is as new as an event's id: after the
    same stall, the PATCH answers 200 once, with one entry, on both engines."""
    stack = data_backend.stack
    tenant, key = stack.tenant_with_key()
    made = call("webhooks", "Webhooks-CreateWebhook", token=key, body={
        "url": "https://hooks.example.com/stall", "events": ["*"]})
    assert made.status == 201, made
    client = aws.client("dynamodb")
    real = client.transact_write_items
    calls = []

    def committed_then_cancelled(**request):
        calls.append(request)
        real(**request)
        raise ClientError({"Error": {"Code": "TransactionCanceledException", "Message": "cancelled"},
                           "CancellationReasons": [{"Code": "ConditionalCheckFailed"}, {"Code": "None"}]},
                          "TransactWriteItems")

    monkeypatch.setattr(client, "transact_write_items", committed_then_cancelled)
    reply = call("webhooks", "Webhooks-UpdateWebhook", token=key, path_params={"id": made.data["id"]},
                 body={"description": "after the stall"})
    monkeypatch.setattr(client, "transact_write_items", real)
    assert reply.status == 200, reply
    assert len(calls) == 1
    entries = [i for i in data_backend.items(settings().audit_log_table)
               if i["tenantId"] == tenant and i["action"] == "webhook.updated"]
    assert [e["changes"]["description"]["new"] for e in entries] == ["after the stall"]
