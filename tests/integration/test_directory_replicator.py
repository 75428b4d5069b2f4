"""The local stack's directory replicator (devstack/replicator.py) between two cells' directory tables,
here two tables of one DynamoDB Local: last writer wins, a delete wins only over what it deleted, and
its own writes are not replicated back."""

from __future__ import annotations

import time
import uuid

import pytest

from devstack.provision import _create_table
from devstack.replicator import Cell, DirectoryReplicator
from devstack.template import Resolver
from tests.support.ci import in_ci

US, EU = "us-east-1", "eu-central-1"


@pytest.fixture
def pair(dynamodb_local):
    if isinstance(dynamodb_local, Exception):
        if in_ci():
            pytest.fail(f"DynamoDB Local is not available: {dynamodb_local}", pytrace=False)
        pytest.skip(f"DynamoDB Local is not available: {dynamodb_local}")
    resolver = Resolver({})
    properties = resolver.resolve(resolver.resources["DirectoryTable"]["Properties"])
    suffix = uuid.uuid4().hex[:8]
    cells = [Cell(US, dynamodb_local.endpoint, f"DirectoryUs{suffix}"),
             Cell(EU, dynamodb_local.endpoint, f"DirectoryEu{suffix}")]
    for cell in cells:
        _create_table(dynamodb_local.client, cell.table, properties)
    replicator = DirectoryReplicator(cells, lag=0.2, log=lambda _msg: None).start()
    yield dynamodb_local.client, cells, replicator
    replicator.stop()
    for cell in cells:
        dynamodb_local.client.delete_table(TableName=cell.table)


KEY = {"pk": {"S": "TENANT#ten_1"}, "sk": {"S": "HOME"}}


def _put(client, cell: Cell, updated_at: str, home: str, written_in: str | None = None) -> None:
    client.put_item(TableName=cell.table, Item={**KEY, "homeRegion": {"S": home}, "updatedAt": {"S": updated_at},
                                                 "writtenIn": {"S": written_in or cell.region}})


def _read(client, cell: Cell) -> dict | None:
    return client.get_item(TableName=cell.table, Key=KEY, ConsistentRead=True).get("Item")


def _settled(replicator: DirectoryReplicator, seconds: float = 20) -> dict:
    """The status once every change read is applied and the streams have nothing more to hand over."""
    deadline = time.monotonic() + seconds
    quiet_since = None
    while time.monotonic() < deadline:
        status = replicator.status()
        busy = status["pending"] or any(s["oldestUnprocessedAgeSeconds"] is not None for s in status["streams"])
        quiet_since = None if busy else (quiet_since or time.monotonic())
        if quiet_since and time.monotonic() - quiet_since > 1.0:   # four idle polls of each stream
            return status
        time.sleep(0.05)
    raise AssertionError(f"the replicator did not settle: {replicator.status()}")


def test_a_tie_on_updated_at_goes_to_the_same_region_in_both_cells(pair):
    client, (us, eu), replicator = pair
    _put(client, us, "2026-01-01T00:00:00.000Z", US)
    _put(client, eu, "2026-01-01T00:00:00.000Z", EU)
    _settled(replicator)
    assert _read(client, us) == _read(client, eu)
    assert _read(client, us)["writtenIn"]["S"] == max(US, EU)


def test_a_delete_does_not_remove_a_newer_write_made_elsewhere_meanwhile(pair):
    client, (us, eu), replicator = pair
    _put(client, us, "2026-01-01T00:00:00.000Z", US)
    _settled(replicator)
    assert _read(client, eu) is not None
    client.delete_item(TableName=us.table, Key=KEY)
    _put(client, eu, "2026-01-01T00:00:05.000Z", EU)   # before the delete reached it
    _settled(replicator)
    assert _read(client, us) == _read(client, eu)
    assert _read(client, eu)["homeRegion"]["S"] == EU


def test_its_own_writes_are_not_replicated_back(pair):
    client, (us, eu), replicator = pair
    _put(client, us, "2026-01-01T00:00:00.000Z", US)
    client.delete_item(TableName=us.table, Key=KEY)
    status = _settled(replicator)
    # One put and one delete applied in the other cell, each read back there once and skipped.
    assert (status["applied"], status["echoesSkipped"], status["superseded"]) == (2, 2, 0)
    assert _read(client, us) is None and _read(client, eu) is None
