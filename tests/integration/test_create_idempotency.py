"""Idempotency-Key on the create POSTs (svc_core.http.idempotency, the mechanism billing uses).

The same key and body answer the first answer again and create nothing more; another body is 422
IDEMPOTENCY_KEY_REUSED; a request without the key is served as it is.
"""

from __future__ import annotations

import secrets as random

import pytest

from devstack import routes
from tests.support.auth_helpers import Clock
from tests.support.functions import call
from tests.support.projects import CREATE, api, stored_projects

HEADER = "Idempotency-Key"


def test_the_same_key_and_body_create_one_project_and_answer_the_same(stack):
    tenant, key = stack.tenant_with_key()
    first = api(CREATE, key, body={"name": "Apollo"}, headers={HEADER: "create-apollo-1"})
    again = api(CREATE, key, body={"name": "Apollo"}, headers={HEADER: "create-apollo-1"})
    assert first.status == again.status == 201, (first, again)
    assert again.data == first.data
    assert [p["id"] for p in stored_projects(tenant)] == [first.data["id"]]


def test_the_same_key_with_another_body_is_422_and_creates_nothing(stack):
    tenant, key = stack.tenant_with_key()
    first = api(CREATE, key, body={"name": "Apollo"}, headers={HEADER: "create-apollo-2"})
    other = api(CREATE, key, body={"name": "Gemini"}, headers={HEADER: "create-apollo-2"})
    assert first.status == 201
    assert other.status == 422 and other.error["code"] == "IDEMPOTENCY_KEY_REUSED", other
    assert [p["id"] for p in stored_projects(tenant)] == [first.data["id"]]


def test_without_a_key_or_with_another_key_each_request_creates(stack):
    tenant, key = stack.tenant_with_key()
    api(CREATE, key, body={"name": "Apollo"})
    api(CREATE, key, body={"name": "Apollo"})
    api(CREATE, key, body={"name": "Apollo"}, headers={HEADER: "k-a"})
    api(CREATE, key, body={"name": "Apollo"}, headers={HEADER: "k-b"})
    assert len(stored_projects(tenant)) == 4


def test_a_key_is_scoped_by_tenant(stack):
    _, key_a = stack.tenant_with_key()
    tenant_b, key_b = stack.tenant_with_key()
    first = api(CREATE, key_a, body={"name": "Apollo"}, headers={HEADER: "shared-key"})
    other = api(CREATE, key_b, body={"name": "Apollo"}, headers={HEADER: "shared-key"})
    assert other.status == 201 and other.data["id"] != first.data["id"]
    assert [p["id"] for p in stored_projects(tenant_b)] == [other.data["id"]]


def test_a_key_that_is_not_visible_ascii_is_400(stack):
    _, key = stack.tenant_with_key()
    reply = api(CREATE, key, body={"name": "Apollo"}, headers={HEADER: "has space"})
    assert reply.status == 400 and reply.error["code"] == "VALIDATION_ERROR", reply


# The creates this module replays, by their route's event: a fresh body for each request.
CREATES = {
    "Agents-CreateAgent": lambda: {"name": "Writer", "systemPrompt": "You write notes.",
                                   "config": {"autonomyLevel": "suggest"}},
    "Webhooks-CreateWebhook": lambda: {"url": "https://hooks.example.com/svc", "events": ["*"],
                                       "secret": "whsec_" + random.token_hex(24)},
    "Secrets-CreateSecret": lambda: {"name": "OPENAI_API_KEY", "value": "sk-" + random.token_hex(24)},
    "Chat-CreateChatSession": lambda: {"title": "Release notes"},
}


def _gift_card() -> dict:
    from svc_core.domain import billing
    (card,) = billing.issue_gift_cards(5, 1, 30, "ops@example.com")
    return {"code": card["code"]}


# The other writes that honour the key, the body of a request that succeeds (made once for both).
OTHER_WRITES = {
    "Billing-CreateSubscription": lambda: {"plan": "starter"},
    "Billing-RedeemGiftCard": _gift_card,
    "Billing-CreatePortalSession": lambda: None,
}
# Replayed by a test of their own.
REPLAYED_ELSEWHERE = {
    "Projects-CreateProject": "test_the_same_key_and_body_create_one_project_and_answer_the_same",
    "Tenants-CreateTenant": "test_a_replayed_tenant_create_answers_the_same_tenant",
    "Billing-PurchaseCredits": "tests/integration/test_billing.py::"
                               "test_the_same_idempotency_key_replays_the_answer_and_charges_once",
}


def test_every_route_honouring_the_key_is_replayed():
    """A route documenting Idempotency-Key (devstack/routes.py) is replayed by a test: named here or it fails."""
    named = [*CREATES, *OTHER_WRITES, *REPLAYED_ELSEWHERE]
    assert len(named) == len(set(named))
    honouring = {r.event for r in routes.idempotent_routes()}
    assert honouring - set(named) == set(), "a route honouring Idempotency-Key that no test replays"
    assert set(named) - honouring == set(), "named but not honouring Idempotency-Key"


@pytest.mark.parametrize("event", sorted(CREATES))
def test_a_replayed_create_answers_the_first_answer(stack, event, monkeypatch):
    monkeypatch.setattr("svc_core.adapters.endpoint_guard.resolve", lambda host, port: ["93.184.215.14"])  # a public address
    function, make_body = routes.by_event(event).directory, CREATES[event]
    _, key = stack.tenant_with_key()
    body = make_body()
    first = call(function, event, token=key, body=body, headers={HEADER: f"{function}-1"})
    again = call(function, event, token=key, body=body, headers={HEADER: f"{function}-1"})
    assert first.status == 201, first
    assert again.status == 201 and again.data == first.data, again
    fresh = call(function, event, token=key, body=make_body() if function != "secrets"
                 else {**make_body(), "name": "OTHER_KEY"}, headers={HEADER: f"{function}-2"})
    assert fresh.status == 201 and fresh.data["id"] != first.data["id"], fresh


@pytest.mark.parametrize("event", sorted(OTHER_WRITES))
def test_a_replayed_write_answers_the_first_answer_and_is_done_once(stack, event):
    function = routes.by_event(event).directory
    _, key = stack.tenant_with_key()
    body = OTHER_WRITES[event]()
    first = call(function, event, token=key, body=body, headers={HEADER: f"{event}-1"})
    again = call(function, event, token=key, body=body, headers={HEADER: f"{event}-1"})
    assert 200 <= first.status < 300, first
    assert again.status == first.status and again.data == first.data, again
    assert again.headers.get("idempotent-replayed") == "true", again
    if event != "Billing-CreatePortalSession":   # the portal may be opened again; the others are done once
        done = call(function, event, token=key, body=body, headers={HEADER: f"{event}-2"})
        assert done.status == 409, done


def test_an_api_key_create_is_never_replayed_so_its_value_is_stored_nowhere(stack):
    """The header is not honoured there: a replay would need the value kept beside the answer."""
    _, key = stack.tenant_with_key()
    body = {"name": "ci", "type": "sdk", "environment": "Development"}
    first = call("api_keys", "ApiKeys-CreateKey", token=key, body=body, headers={HEADER: "key-1"})
    again = call("api_keys", "ApiKeys-CreateKey", token=key, body=body, headers={HEADER: "key-1"})
    assert first.status == again.status == 201
    assert again.data["id"] != first.data["id"] and again.data["key"] != first.data["key"]
    stored = stack.client("dynamodb").scan(TableName=stack.environment["IDEMPOTENCY_TABLE"])["Items"]
    assert first.data["key"] not in str(stored) and again.data["key"] not in str(stored)


def test_a_replayed_tenant_create_answers_the_same_tenant(stack):
    call("auth", "Auth-Register", body={"email": "ada@example.com", "password": "correct horse battery staple 42",
                                        "name": "ada"})
    ada = call("auth", "Auth-Login", body={"email": "ada@example.com",
                                           "password": "correct horse battery staple 42"}).data
    token = ada["accessToken"]
    first = call("tenants", "Tenants-CreateTenant", token=token, body={"name": "Engines"}, headers={HEADER: "t-1"})
    again = call("tenants", "Tenants-CreateTenant", token=token, body={"name": "Engines"}, headers={HEADER: "t-1"})
    assert first.status == again.status == 201, (first, again)
    assert again.data == first.data
    tenants = call("tenants", "Tenants-ListTenants", token=token).data["items"]
    assert [t["id"] for t in tenants].count(first.data["id"]) == 1 and len(tenants) == 2


def test_a_webhook_with_a_generated_secret_is_replayed_with_it_and_keeps_it_only_sealed(stack):
    _, key = stack.tenant_with_key()
    body = {"url": "https://hooks.example.com/svc", "events": ["*"]}
    first = call("webhooks", "Webhooks-CreateWebhook", token=key, body=body, headers={HEADER: "hook-1"})
    again = call("webhooks", "Webhooks-CreateWebhook", token=key, body=body, headers={HEADER: "hook-1"})
    assert first.status == again.status == 201, (first, again)
    assert first.data["secret"].startswith("whsec_") and again.data == first.data   # the same secret again
    assert [w["id"] for w in call("webhooks", "Webhooks-ListWebhooks", token=key).data["items"]] == [first.data["id"]]
    stored = stack.client("dynamodb").scan(TableName=stack.environment["IDEMPOTENCY_TABLE"])["Items"]
    assert first.data["id"] in str(stored) and first.data["secret"] not in str(stored)
    assert first.data["secret"].removeprefix("whsec_") not in str(stored)
    other = call("webhooks", "Webhooks-CreateWebhook", token=key, body=body, headers={HEADER: "hook-2"})
    assert other.status == 201 and other.data["secret"] != first.data["secret"]


# ---- a datastore that stalls: the answer is lost, the change may or may not have been made ----------

def _stalled_transactions(monkeypatch, *, commit: bool) -> list[dict]:
    """DynamoDB's transactions, seen as a stalled datastore leaves them: the client gets no answer
    in time (503 for the request); with commit=True the write was made all the same (it ran after
    the client gave up), else it is held, to arrive later or never. Returns the held ones."""
    from botocore.exceptions import ReadTimeoutError

    from svc_core.adapters import aws
    client = aws.client("dynamodb")
    real = client.transact_write_items
    held: list[dict] = []

    def stalled(**request):
        if commit:
            real(**request)
        else:
            held.append(request)
        raise ReadTimeoutError(endpoint_url="http://dynamodb.local/")

    monkeypatch.setattr(client, "transact_write_items", stalled)
    return held


def test_a_create_that_committed_but_answered_503_is_recognised_when_retried(data_backend, monkeypatch):
    tenant, key = data_backend.stack.tenant_with_key()
    with monkeypatch.context() as stall:
        _stalled_transactions(stall, commit=True)
        first = api(CREATE, key, body={"name": "Apollo"}, headers={HEADER: "stalled-1"})
    assert first.status == 503 and first.error["code"] == "SERVICE_UNAVAILABLE", first
    assert first.headers["retry-after"] == "5"
    [made] = stored_projects(tenant)   # it did commit
    again = api(CREATE, key, body={"name": "Apollo"}, headers={HEADER: "stalled-1"})
    assert [p["id"] for p in stored_projects(tenant)] == [made["id"]]   # not made twice
    assert again.status == 201 and again.headers.get("idempotent-replayed") == "true", again
    assert again.data["id"] == made["id"] and again.data["name"] == "Apollo"


def test_a_create_that_did_not_commit_is_made_by_a_retry_once_its_claim_has_ended(data_backend, monkeypatch):
    from svc_core.http import idempotency
    tenant, key = data_backend.stack.tenant_with_key()
    monkeypatch.setattr(idempotency, "DEFAULT_CLAIM_SECONDS", 1.0)
    clock = Clock(monkeypatch)
    with monkeypatch.context() as stall:
        held = _stalled_transactions(stall, commit=False)
        first = api(CREATE, key, body={"name": "Apollo"}, headers={HEADER: "stalled-2"})
    [late] = [r for r in held if any("Put" in i and "proj_" in str(i["Put"]["Item"]) for i in r["TransactItems"])]
    assert first.status == 503 and stored_projects(tenant) == []
    soon = api(CREATE, key, body={"name": "Apollo"}, headers={HEADER: "stalled-2"})
    assert soon.status == 409 and soon.error["code"] == "REQUEST_IN_PROGRESS", soon
    assert 1 <= int(soon.headers["retry-after"]) <= 2
    clock.travel(1.2)  # the claim's time is up
    later = api(CREATE, key, body={"name": "Apollo"}, headers={HEADER: "stalled-2"})
    assert later.status == 201 and "idempotent-replayed" not in later.headers, later
    assert [p["id"] for p in stored_projects(tenant)] == [later.data["id"]]
    # The stalled request's write, arriving late, finds the key no longer its own: nothing more is made.
    from svc_core.adapters import aws
    with pytest.raises(Exception) as refused:
        aws.client("dynamodb").transact_write_items(**late)
    assert aws.error_code(refused.value) == "TransactionCanceledException"
    assert [p["id"] for p in stored_projects(tenant)] == [later.data["id"]]
    assert api(CREATE, key, body={"name": "Apollo"}, headers={HEADER: "stalled-2"}).data == later.data


# Creates whose write does not keep the answer with it (writes_carrying in svc_core/http/idempotency.py):
# a retry after a lost answer is 409, REQUEST_IN_PROGRESS while the claim lasts, not the answer.
ANSWER_NOT_KEPT_WITH_THE_WRITE = {"Webhooks-CreateWebhook"}


@pytest.mark.parametrize("event", sorted(CREATES.keys() - ANSWER_NOT_KEPT_WITH_THE_WRITE))
def test_the_other_creates_that_committed_but_answered_503_are_recognised_too(stack, monkeypatch, event):
    monkeypatch.setattr("svc_core.adapters.endpoint_guard.resolve", lambda host, port: ["93.184.215.14"])  # a public address
    create = routes.by_event(event)
    function, make_body = create.directory, CREATES[event]
    _, key = stack.tenant_with_key()
    body = make_body()
    with monkeypatch.context() as stall:
        _stalled_transactions(stall, commit=True)
        first = call(function, event, token=key, body=body, headers={HEADER: f"{function}-stalled"})
    assert first.status == 503, first
    again = call(function, event, token=key, body=body, headers={HEADER: f"{function}-stalled"})
    assert again.status == 201 and again.headers.get("idempotent-replayed") == "true", again
    (listing,) = [r for r in routes.list_routes() if r.path == create.path]
    listed = call(function, listing.event, token=key)
    assert [item["id"] for item in listed.data["items"]] == [again.data["id"]]


def test_a_claim_whose_answer_was_lost_and_retried_is_still_this_requests_own(stack, monkeypatch):
    """A datastore that stalls can apply the claim's conditional put and lose its answer; the SDK sends
    it again and the condition refuses the copy. The request finds its own claim and goes on: no 409
    REQUEST_IN_PROGRESS for a key that nobody else holds (seen in the paused-datastore soak)."""
    from svc_core.data import idempotency_table
    from svc_core.data.common import ConditionFailed
    tenant, key = stack.tenant_with_key()
    real = idempotency_table.claim

    def applied_then_refused(*args, **kwargs):
        real(*args, **kwargs)
        raise ConditionFailed()

    monkeypatch.setattr(idempotency_table, "claim", applied_then_refused)
    first = api(CREATE, key, body={"name": "Apollo"}, headers={HEADER: "lost-claim-1"})
    assert first.status == 201, first
    monkeypatch.undo()
    again = api(CREATE, key, body={"name": "Apollo"}, headers={HEADER: "lost-claim-1"})
    assert again.status == 201 and again.headers.get("idempotent-replayed") == "true", again
    assert [p["id"] for p in stored_projects(tenant)] == [first.data["id"]]
