"""Two cells of the local stack (python -m devstack --regions us-east-1,eu-central-1): each its own
region, tables and port, the secrets alike, the development tenant in the first, the directory
replicated between them, and nothing left running once stopped."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid

import httpx
import pytest

from tests.support.cells import TwoCells
from tests.support.functions import ROOT

pytestmark = pytest.mark.long_running   # two whole stacks, each in a process of its own

LAG = 1.0
DIRECTORY = "DirectoryTable"


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    with TwoCells(tmp_path_factory.mktemp("cells"), lag=LAG).start() as pair:
        yield pair


def _item(key: dict, region: str, updated_at: str, **values: str) -> dict:
    return {**key, "updatedAt": {"S": updated_at}, "writtenIn": {"S": region},
            **{name: {"S": value} for name, value in values.items()}}


def _read(cell, key: dict) -> dict | None:
    return cell.dynamodb().get_item(TableName=DIRECTORY, Key=key, ConsistentRead=True).get("Item")


def _until(condition, seconds: float = 30):
    """The condition's first true answer (the replicator's lag is the test's only wait)."""
    deadline = time.monotonic() + seconds
    while True:
        answer = condition()
        if answer or time.monotonic() > deadline:
            return answer
        time.sleep(0.05)


def test_each_cell_serves_in_its_own_region_with_the_secrets_alike(cells):
    for cell in cells.cells:
        health = httpx.get(cell.base_url + "/api/v1/health", timeout=10)
        assert health.status_code == 200, health.text
        assert health.json()["data"]["local"]["region"] == cell.region
        assert httpx.get(cell.base_url + "/_local/status", timeout=10).json()["region"] == cell.region
        environment = cell.environment
        assert environment["AWS_REGION"] == cell.region
        assert json.loads(environment["CELLS"]) == {c.region: c.base_url for c in cells.cells}
    assert cells.first.dynamodb_endpoint != cells.second.dynamodb_endpoint
    for secret in ("KEY_PEPPER_SECRET_ID", "SIGNING_KEYS_SECRET_ID"):   # as a replicated secret
        assert cells.first.secret(secret) == cells.second.secret(secret)
    assert json.loads(cells.first.secret("SIGNING_KEYS_SECRET_ID"))["keys"]
    status = cells.status()
    assert [(c["region"], c["baseUrl"], c["running"]) for c in status["cells"]] == [
        (c.region, c.base_url, True) for c in cells.cells]
    assert status["replicator"]["lagSeconds"] == LAG
    # An operator command finds the second cell's environment by its port.
    found = subprocess.run([sys.executable, "-m", "ops", "--local", "--stack", str(cells.second.port), "users",
                            "enable", "nobody@example.com"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "is missing" not in found.stderr and found.returncode != 2, found.stderr


def test_the_development_tenant_is_in_the_first_cell_only(cells):
    tenant = {"id": {"S": cells.credentials["tenantId"]}}
    tables = [cell.environment["TENANTS_TABLE"] for cell in cells.cells]
    assert "Item" in cells.first.dynamodb().get_item(TableName=tables[0], Key=tenant)
    assert "Item" not in cells.second.dynamodb().get_item(TableName=tables[1], Key=tenant)
    assert cells.credentials["baseUrl"] == cells.first.base_url
    answer = httpx.get(cells.first.base_url + "/api/v1/projects", timeout=10,
                       headers={"Authorization": f"Bearer {cells.credentials['apiKey']}"})
    assert answer.status_code == 200


def test_a_directory_item_reaches_the_other_cell_after_the_lag_and_so_do_its_update_and_delete(cells):
    us, eu = cells.first, cells.second
    key = {"pk": {"S": f"TENANT#ten_{uuid.uuid4().hex}"}, "sk": {"S": "HOME"}}
    us.dynamodb().put_item(TableName=DIRECTORY, Item=_item(key, us.region, "2026-01-01T00:00:00.000Z",
                                                           homeRegion=us.region, status="active"))
    assert _read(eu, key) is None   # not yet: the lag
    assert _until(lambda: _read(eu, key)) == _read(us, key)

    eu.dynamodb().put_item(TableName=DIRECTORY, Item=_item(key, eu.region, "2026-01-01T00:00:01.000Z",
                                                           homeRegion=eu.region, status="active"))
    moved = _until(lambda: (_read(us, key) or {}).get("homeRegion", {}).get("S") == eu.region)
    assert moved and _read(us, key) == _read(eu, key)

    us.dynamodb().delete_item(TableName=DIRECTORY, Key=key)
    assert _until(lambda: _read(eu, key) is None)
    # Its own writes came back on each stream and went no further: nothing is pending or failing.
    status = _until(lambda: (s := cells.status()["replicator"])["pending"] == 0 and s)
    assert status["lastError"] is None and status["echoesSkipped"] >= 3
    assert _read(us, key) is None and _read(eu, key) is None


def test_concurrent_writes_to_one_item_in_both_cells_end_alike_the_last_writer_winning(cells):
    us, eu = cells.first, cells.second
    key = {"pk": {"S": f"USER#usr_{uuid.uuid4().hex}"}, "sk": {"S": "HOME"}}
    # Both written before either is replicated (the lag): the later updatedAt wins in both cells.
    eu.dynamodb().put_item(TableName=DIRECTORY, Item=_item(key, eu.region, "2026-01-01T00:00:02.000Z",
                                                           homeRegion=eu.region))
    us.dynamodb().put_item(TableName=DIRECTORY, Item=_item(key, us.region, "2026-01-01T00:00:01.000Z",
                                                           homeRegion=us.region))
    assert _read(us, key)["homeRegion"]["S"] == us.region   # not yet replicated
    assert _until(lambda: (_read(us, key) or {}).get("homeRegion", {}).get("S") == eu.region)
    _until(lambda: cells.status()["replicator"]["pending"] == 0)
    assert _read(us, key) == _read(eu, key)
    assert _read(eu, key)["homeRegion"]["S"] == eu.region
    assert cells.status()["replicator"]["superseded"] >= 1   # the older write was refused in the eu cell


def test_stop_leaves_no_process_behind(cells):
    started = cells.descendants()
    assert len(started) >= 6, started   # two cells, each with its DynamoDB Local and emulator
    assert cells.stop() == 0
    assert _until(lambda: not cells.survivors(), 15), cells.survivors()
    for cell in cells.cells:
        assert not cell.env_file.exists()   # the environment of data that is gone
