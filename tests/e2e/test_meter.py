"""The local stack's meter (DEVSTACK_METER, devstack/meter.py): what bench/cost.py prices is what the
functions did, DynamoDB's capacity as DynamoDB Local answers it."""

from __future__ import annotations

import json

import httpx

from devstack import meter


def _records(directory) -> list[dict]:
    return [json.loads(line) for path in sorted(directory.glob("*.jsonl")) for line in path.read_text().splitlines()]


def test_an_invocation_records_its_route_status_and_each_call_with_dynamodbs_units(local_stack, tmp_path,
                                                                                     monkeypatch):
    monkeypatch.setenv("DEVSTACK_METER", str(tmp_path))
    meter.install()
    key = local_stack.credentials["apiKey"]
    reply = httpx.post(f"{local_stack.base_url}/api/v1/projects", json={"name": "metered"},
                       headers={"Authorization": f"Bearer {key}"}, timeout=30)
    assert reply.status_code == 201, reply.text
    monkeypatch.delenv("DEVSTACK_METER")
    api = [r for r in _records(tmp_path) if r.get("route") == "POST /api/v1/projects"]
    assert len(api) == 1, _records(tmp_path)
    record = api[0]
    assert record["function"] == "ProjectsFunction" and record["status"] == 201 and record["ms"] > 0
    assert record["responseBytes"] == len(reply.content)
    operations = [(c["service"], c["operation"], c["overhead"]) for c in record["calls"]]
    # The request's own work is the create's transaction; counting the key's and the tenant's rate
    # limits is the layer's, before it.
    assert ("dynamodb", "TransactWriteItems", False) in operations, operations
    assert any(service == "dynamodb" and overhead for service, _op, overhead in operations), operations
    transaction = next(c for c in record["calls"] if c["operation"] == "TransactWriteItems")
    # A transactional write costs two write units per item of up to 1 KB: at least the project and
    # the tenant's project counter.
    assert sum(entry["total"] for entry in transaction["units"]) >= 4, transaction


def test_a_request_made_with_the_meter_off_records_nothing(local_stack, tmp_path, monkeypatch):
    meter.install()
    monkeypatch.delenv("DEVSTACK_METER", raising=False)
    key = local_stack.credentials["apiKey"]
    reply = httpx.get(f"{local_stack.base_url}/api/v1/projects", headers={"Authorization": f"Bearer {key}"}, timeout=30)
    assert reply.status_code == 200
    assert not list(tmp_path.glob("*.jsonl"))
