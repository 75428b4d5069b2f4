"""The operational metrics, as CloudWatch would read them: EMF lines in what a function prints,
for a request (and a rate-limit refusal), a webhook delivery and an agent run with its tokens and
debited credits. Each line is checked the way CloudWatch extracts metrics from it."""

from __future__ import annotations

import json
import time

import pytest

from svc_core.contracts import events
from svc_core.data import webhook_delivery_queue
from svc_core.domain import webhook_delivery
from svc_core.platform import config
from tests.support import projects as project_api
from tests.support.auth_helpers import Clock
from tests.support.functions import call
from tests.support.webhook_receiver import Receiver, new_secret, register


@pytest.fixture(autouse=True)
def metrics_on(monkeypatch):
    """The tests turn Powertools metrics off (tests/conftest.py); here they are what is tested."""
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")


def emf_lines(text: str) -> list[dict]:
    """The EMF records in captured stdout, each checked against the format's rules."""
    found = []
    for line in text.splitlines():
        if '"_aws"' not in line:
            continue
        record = json.loads(line)
        (directive,) = record["_aws"]["CloudWatchMetrics"]
        assert directive["Namespace"] == "SvcApi" and isinstance(record["_aws"]["Timestamp"], int)
        for dimension_set in directive["Dimensions"]:
            assert all(isinstance(record[name], str) for name in dimension_set)  # every dimension has its value
        for metric in directive["Metrics"]:
            assert metric["Name"] in record and metric["Unit"] in ("Count", "Milliseconds")
        found.append(record)
    return found


def metric(records: list[dict], name: str, **fields: str) -> list[dict]:
    return [r for r in records if name in r and all(r.get(k) == v for k, v in fields.items())]


def series(record: dict) -> tuple:
    """What CloudWatch bills a metric by: its namespace, name and dimensions with their values."""
    (directive,) = record["_aws"]["CloudWatchMetrics"]
    dimensions = tuple((name, record[name]) for dimension_set in directive["Dimensions"] for name in dimension_set)
    return directive["Namespace"], tuple(m["Name"] for m in directive["Metrics"]), dimensions


def test_a_request_emits_requests_and_latency_by_status_class_with_its_route_as_a_field(stack, capsys):
    _, key = stack.tenant_with_key()
    capsys.readouterr()
    reply = call("projects", "Projects-ListProjects", token=key)
    missing = call("projects", "Projects-GetProject", token=key, path_params={"id": "proj_01J00000000000000000000000"})
    project_api.create(key, name="Apollo")
    assert (reply.status, missing.status) == (200, 404)
    records = emf_lines(capsys.readouterr().out)
    [listed] = metric(records, "Requests", route="GET /api/v1/projects", StatusClass="2xx")
    assert listed["Requests"] == [1.0] and listed["Latency"][0] > 0 and listed["status"] == 200
    [got] = metric(records, "Requests", route="GET /api/v1/projects/{id}", StatusClass="4xx")
    assert got["status"] == 404
    [created] = metric(records, "Requests", route="POST /api/v1/projects", StatusClass="2xx")
    # Two routes, one metric: the route is no dimension (each route would be a metric billed monthly).
    assert series(listed) == series(created) != series(got)
    assert ("StatusClass", "2xx") in series(listed)[2]
    assert metric(records, "RateLimitRefusals") == []


def test_a_rate_limit_refusal_is_counted_with_its_route_as_a_field(stack, capsys, monkeypatch):
    Clock(monkeypatch).mid_window()  # the three requests share one window
    monkeypatch.setenv("RATE_LIMIT_PER_WINDOW", "2")
    config.settings.cache_clear()
    _, key = stack.tenant_with_key()
    statuses = [call("projects", "Projects-ListProjects", token=key).status for _ in range(3)]
    config.settings.cache_clear()
    assert statuses == [200, 200, 429]
    records = emf_lines(capsys.readouterr().out)
    [refused] = metric(records, "RateLimitRefusals", route="GET /api/v1/projects")
    assert refused["RateLimitRefusals"] == [1.0] and refused["status"] == 429
    assert not any(name in ("route", "Route") for name, _ in series(refused)[2])


def test_a_webhook_delivery_emits_its_outcome_and_latency(stack, capsys):
    receiver = Receiver(new_secret(), lambda n, d: (200, {}) if n > 1 else (500, {}))
    try:
        tenant_id = stack.new_tenant()
        webhook_id = register(tenant_id, receiver.url, receiver.secret)
        event = events.new_event("project.created", tenant_id, {"id": "proj_01TEST", "name": "Apollo"})
        message = webhook_delivery_queue.delivery_message(event, webhook_id)
        capsys.readouterr()
        assert webhook_delivery.deliver(message, 1, now=time.time()).outcome == "retrying"
        assert webhook_delivery.deliver(message, 2, now=time.time()).outcome == "delivered"
    finally:
        receiver.stop()
    records = emf_lines(capsys.readouterr().out)
    [retried] = metric(records, "WebhookDeliveries", Outcome="retrying")
    [delivered] = metric(records, "WebhookDeliveries", Outcome="delivered")
    for record in (retried, delivered):
        assert record["WebhookDeliveries"] == [1.0] and record["WebhookDeliveryLatency"][0] >= 0


def test_an_agent_run_emits_its_outcome_tokens_and_debited_credits(stack, capsys):
    from svc_core.data import usage_table
    tenant, key = stack.tenant_with_key()
    project = project_api.create(key, name="Docs")
    agent = call("agents", "Agents-CreateAgent", token=key, body={
        "name": "Notes", "systemPrompt": "You keep notes.", "config": {"autonomyLevel": "autonomous"}}).data
    capsys.readouterr()
    reply = call("agents", "Agents-ExecuteAgent", token=key, path_params={"id": agent["id"]},
                 body={"goal": "Write the file notes.md with 'hello'", "projectId": project["id"]})
    assert reply.status == 201 and reply.data["status"] == "completed", reply
    records = emf_lines(capsys.readouterr().out)
    [run] = metric(records, "AgentRuns", Outcome="completed")
    assert run["run_id"] == reply.data["id"]
    usage = usage_table.records_for(tenant, reply.data["id"])
    tokens = metric(records, "ModelInputTokens", Model="offline", Source="run")
    assert sum(r["ModelInputTokens"][0] for r in tokens) == sum(u["inputTokens"] for u in usage) > 0
    assert sum(r["ModelOutputTokens"][0] for r in tokens) == sum(u["outputTokens"] for u in usage) > 0
    debited = metric(records, "CreditsDebited", Source="run")
    assert sum(r["CreditsDebited"][0] for r in debited) == sum(u["microCredits"] for u in usage) > 0
    assert metric(records, "Requests", route="POST /api/v1/agents/{id}/execute", StatusClass="2xx")
