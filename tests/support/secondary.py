"""A tenant with a secondary region on the two-cell local stack (tests/support/cells.py), for the
end-to-end test of replication and failover and the bench that measures them: the tenant made in
its home cell on the growth plan, its secondary set, the seed's progress read from the directory, the
operator's commands run against one cell, and the tenant's items counted table by table in a cell.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from typing import Any

import httpx

from tests.support.cells import RunningCell, TwoCells
from tests.support.functions import ROOT
from tests.support.waiting import until

DIRECTORY = "DirectoryTable"
PASSWORD = "secondary-password-0123456789"


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def ops(cell: RunningCell, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """python -m ops --local --stack <the cell's port> ...: an operator's command against that cell alone."""
    return subprocess.run([sys.executable, "-m", "ops", "--local", "--stack", str(cell.port), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def new_tenant(home: RunningCell, name: str = "Replicated") -> dict[str, str]:
    """An account and its workspace homed in `home`, and an API key of it: {id, key, email}."""
    from svc_client import Client
    email = f"replica-{uuid.uuid4().hex[:10]}@example.com"
    with Client(home.base_url, api_key="") as svc:
        made = svc.auth.register(email, PASSWORD, name, region=home.region)
        svc.auth.login(email, PASSWORD)
        key = svc.api_keys.create("replicated", "sdk", "Production").key
    return {"id": made["tenant"]["id"], "key": key, "email": email}


def set_secondary(home: RunningCell, tenant: dict[str, str], region: str | None) -> httpx.Response:
    """PATCH the tenant's secondaryRegion (None removes it) at the home cell's URL."""
    return httpx.patch(f"{home.base_url}/api/v1/regions/preferences/{tenant['id']}", headers=auth(tenant["key"]),
                       json={"secondaryRegion": region}, timeout=30)


def on_growth(home: RunningCell, tenant: dict[str, str]) -> None:
    """The growth plan: its feature secondary_region, and 1,000 projects."""
    plan = ops(home, "tenants", "set-plan", tenant["id"], "growth")
    if plan.returncode != 0:
        raise AssertionError(f"set-plan growth failed: {plan.stdout}{plan.stderr}")


def on_growth_with_secondary(home: RunningCell, secondary: RunningCell, tenant: dict[str, str]) -> None:
    """The growth plan, then the secondary set: the seed is queued."""
    on_growth(home, tenant)
    answer = set_secondary(home, tenant, secondary.region)
    if answer.status_code != 200:
        raise AssertionError(f"PATCH secondaryRegion {secondary.region}: {answer.status_code} {answer.text}")


def directory_item(cell: RunningCell, pk: str, sk: str) -> dict[str, Any] | None:
    from svc_core.adapters.dynamo import from_item
    found = cell.dynamodb().get_item(TableName=DIRECTORY, Key={"pk": {"S": pk}, "sk": {"S": sk}},
                                     ConsistentRead=True).get("Item")
    return from_item(found)


def replica(pair: TwoCells, tenant_id: str) -> dict[str, Any] | None:
    """The seed's progress (TENANT#<id>, REPLICA), the latest of the cells' replicas of the directory."""
    found = [item for cell in pair.cells if (item := directory_item(cell, f"TENANT#{tenant_id}", "REPLICA"))]
    return max(found, key=lambda item: str(item.get("updatedAt", "")), default=None)


def replica_current(pair: TwoCells, tenant_id: str, seconds: float = 300) -> dict[str, Any] | None:
    """Waits for the seed to end: the REPLICA item once its status is current or failed."""
    return until(lambda: (item := replica(pair, tenant_id)) and item.get("status") in ("current", "failed") and item,
                 seconds, every=0.5)


def scan(cell: RunningCell, table: str) -> list[dict[str, Any]]:
    """Every item of one of the cell's tables (its logical id, e.g. ProjectsTable), numbers as Decimals
    (a delivery mark's leaseUntil has a fraction, which the service reads raw)."""
    from boto3.dynamodb.types import TypeDeserializer

    from svc_core.contracts.tenant_items import TABLE_SETTINGS
    deserializer = TypeDeserializer()

    def from_item(item: dict[str, Any]) -> dict[str, Any]:
        return {name: deserializer.deserialize(value) for name, value in item.items()}
    client, name = cell.dynamodb(), cell.environment[TABLE_SETTINGS[table].upper()]
    items, start = [], None
    while True:
        page = client.scan(TableName=name, ConsistentRead=True, **({"ExclusiveStartKey": start} if start else {}))
        items += [from_item(item) for item in page["Items"]]
        start = page.get("LastEvaluatedKey")
        if not start:
            return items


def tenant_items(cell: RunningCell, tenant_id: str) -> dict[str, list[dict[str, Any]]]:
    """The tenant's items in every table of the cell, by the rules the residency audit finds owners by
    (a delivery mark's tenant through its webhook); tables with none left out."""
    from svc_core.contracts.tenant_items import TABLE_RULES, Owner
    webhooks = {item["id"] for item in scan(cell, "WebhooksTable") if item.get("tenantId") == tenant_id}
    found: dict[str, list[dict[str, Any]]] = {}
    for table, rule in TABLE_RULES.items():
        for item in scan(cell, table):
            owner = rule.owner(item)
            if owner == Owner("tenant", tenant_id) or (owner is not None and owner.kind == "webhook"
                                                       and owner.id in webhooks):
                found.setdefault(table, []).append(item)
    return found


def objects(cell: RunningCell, prefix: str) -> dict[str, str]:
    """The files bucket's objects under prefix: key -> ETag."""
    s3, bucket = cell.client("s3"), cell.environment["PROJECT_FILES_BUCKET"]
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
    return {o["Key"]: o["ETag"].strip('"') for o in listed}


def failover(secondary: RunningCell, tenant_id: str) -> tuple[subprocess.CompletedProcess, dict[str, Any] | None]:
    """python -m ops --local --stack <secondary> tenants failover T --json: the run and its answer."""
    done = ops(secondary, "tenants", "failover", tenant_id, "--json")
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    return done, (json.loads(lines[-1]) if done.returncode == 0 and lines else None)
