"""A tenant homed in us-east-1 with its secondary region in eu-central-1, on the two-cell local stack:
the seed copies what it has, later writes and deletions follow, the secondary answers 421 to the home
until an operator fails the tenant over (against the secondary cell alone), then serves it while the
old home points at it and receives its writes in turn; removing the secondary deletes the copies.
The tests run in order, each on what the one before left."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import httpx
import pytest

from tests.support.cells import TwoCells
from tests.support.functions import ROOT
from tests.support.secondary import (
    auth,
    failover,
    new_tenant,
    objects,
    on_growth_with_secondary,
    replica,
    replica_current,
    scan,
    set_secondary,
    tenant_items,
)
from tests.support.waiting import until

pytestmark = pytest.mark.long_running   # two whole stacks, each in a process of its own

POLICY_CACHE_SECONDS = 2   # how long a container keeps a tenant's policy (the old home's 421 waits it out)
US, EU = "us-east-1", "eu-central-1"
# What the seed and the stream copy: the tenant's content. Not compared: the outbox (events are
# published by the home cell only), the idempotency records (opaque keys) and the cell's own counters.
NOT_COMPARED = {"OutboxTable", "IdempotencyTable", "RateLimitsTable"}


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    with TwoCells(tmp_path_factory.mktemp("cells"),
                  environment={"TENANT_POLICY_CACHE_SECONDS": str(POLICY_CACHE_SECONDS)}).start() as pair:
        yield pair


@pytest.fixture(scope="module")
def state() -> dict:
    """What each test leaves for the next."""
    return {}


def _projects(cell, tenant_id: str) -> dict[str, dict]:
    return {item["id"]: item for item in scan(cell, "ProjectsTable") if item.get("tenantId") == tenant_id}


def _keys(items: list[dict]) -> set[str]:
    """The items' identities: their key attributes as the table's rule reads them (values sealed again
    in the other cell differ, their keys do not)."""
    names = ("tenantId", "id", "pk", "sk", "sessionKey", "webhookId", "eventId", "seq", "createdAt")
    return {json.dumps({n: str(i[n]) for n in names if n in i}, sort_keys=True) for i in items}


def _call(base_url: str, key: str, method: str, path: str, **kwargs) -> httpx.Response:
    return httpx.request(method, base_url + "/api/v1" + path, headers=auth(key), timeout=30, **kwargs)


def _audit(cells) -> tuple[int, dict]:
    done = subprocess.run([sys.executable, "-m", "ops", "residency", "audit", "--local",
                           f"{cells.cell(US).port},{cells.cell(EU).port}", "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.stdout.strip(), done.stderr
    return done.returncode, json.loads(done.stdout)


def test_the_seed_copies_what_the_tenant_has_and_the_secondary_sends_it_home(cells, state):
    us, eu = cells.cell(US), cells.cell(EU)
    tenant = new_tenant(us)
    state["tenant"] = tenant
    key = tenant["key"]
    made = [_call(us.base_url, key, "POST", "/projects", json={"name": f"seeded {n}", "language": "python"})
            for n in range(3)]
    assert all(m.status_code == 201 for m in made), [m.text for m in made]
    state["projects"] = [m.json()["data"]["id"] for m in made]
    secret = _call(us.base_url, key, "POST", "/secrets", json={"name": "SEEDED_SECRET", "value": "s3cr3t-value"})
    hook = _call(us.base_url, key, "POST", "/webhooks",
                 json={"url": "https://hooks.example.com/svc", "events": ["project.created"]})
    assert (secret.status_code, hook.status_code) == (201, 201), (secret.text, hook.text)
    # A file, as the files API stores one (tenants/<tenant>/projects/<project>/files/...).
    prefix = f"tenants/{tenant['id']}/projects/{state['projects'][0]}/files/"
    us.client("s3").put_object(Bucket=us.environment["PROJECT_FILES_BUCKET"], Key=prefix + "README.md",
                               Body=b"# seeded\n")
    state["prefix"] = prefix
    assert replica(cells, tenant["id"]) is None   # no replica before the secondary is set

    on_growth_with_secondary(us, eu, tenant)
    seeded = replica_current(cells, tenant["id"])
    assert seeded and seeded["status"] == "current", seeded
    assert seeded["region"] == EU

    home_items = tenant_items(us, tenant["id"])
    copied = until(lambda: (found := tenant_items(eu, tenant["id"])) and all(
        _keys(found.get(t, [])) >= _keys(items) for t, items in home_items.items() if t not in NOT_COMPARED)
        and found, 60, every=1)   # each look scans every table of the cell: not five times a second
    copied = copied or tenant_items(eu, tenant["id"])
    for table, items in home_items.items():
        if table not in NOT_COMPARED:
            assert _keys(items) <= _keys(copied.get(table, [])), f"{table}: not all copied"
    assert set(_projects(eu, tenant["id"])) == set(state["projects"])
    assert [s["name"] for s in copied["SecretsTable"] if s["sk"].startswith("SECRET#")] == ["SEEDED_SECRET"]
    assert len(copied["WebhooksTable"]) == 1
    assert objects(eu, prefix) == objects(us, prefix) and len(objects(us, prefix)) == 1
    # The copy is a replica: the secondary sends the tenant to its home, whatever the request.
    for method, path, body in (("GET", "/projects", None), ("GET", f"/projects/{state['projects'][0]}", None),
                               ("PATCH", f"/projects/{state['projects'][0]}", {"name": "not here"}),
                               ("POST", "/projects", {"name": "not here", "language": "python"})):
        answer = _call(eu.base_url, key, method, path, json=body)
        assert answer.status_code == 421, (method, path, answer.status_code, answer.text)
        error = answer.json()["error"]
        assert error["code"] == "WRONG_REGION"
        assert error["details"] == {"region": US, "baseUrl": us.base_url, "tenantId": tenant["id"]}
    assert "not here" not in {p["name"] for p in _projects(eu, tenant["id"]).values()}
    assert "not here" not in {p["name"] for p in _projects(us, tenant["id"]).values()}


def test_writes_and_a_deletion_after_the_seed_reach_the_secondary(cells, state):
    us, eu = cells.cell(US), cells.cell(EU)
    tenant, (kept, renamed, deleted) = state["tenant"], state["projects"]
    key = tenant["key"]
    made = _call(us.base_url, key, "POST", "/projects", json={"name": "after the seed", "language": "python"})
    changed = _call(us.base_url, key, "PATCH", f"/projects/{renamed}", json={"name": "renamed at home"})
    gone = _call(us.base_url, key, "DELETE", f"/projects/{deleted}")
    assert (made.status_code, changed.status_code, gone.status_code) == (201, 200, 200), (made.text, changed.text,
                                                                                         gone.text)
    new = made.json()["data"]["id"]
    state["projects"] = [kept, renamed, new]

    def arrived():
        there = _projects(eu, tenant["id"])
        return (new in there and there.get(renamed, {}).get("name") == "renamed at home"
                and deleted not in there) and there
    there = until(arrived, 60) or _projects(eu, tenant["id"])
    assert there.get(new, {}).get("name") == "after the seed"
    assert there[renamed]["name"] == "renamed at home"
    assert deleted not in there
    assert set(there) == set(_projects(us, tenant["id"])) == set(state["projects"])


def test_the_audit_finds_the_copies_in_their_allowed_region(cells, state):
    tenant = state["tenant"]
    copies = sum(map(len, tenant_items(cells.cell(EU), tenant["id"]).values()))   # counted first: only more come
    status, report = _audit(cells)
    assert status == 0 and report["outOfPlace"] == 0, report["findings"][:5]
    eu_cell = next(c for c in report["cells"] if c["region"] == EU)
    assert eu_cell["items"] >= copies > 0   # the audit read the copies (and found them allowed)


def test_a_failover_against_the_secondary_alone_moves_the_tenant_there(cells, state):
    from svc_client import Client
    us, eu = cells.cell(US), cells.cell(EU)
    tenant = state["tenant"]
    key = tenant["key"]
    done, answer = failover(eu, tenant["id"])
    assert done.returncode == 0 and answer, done.stdout + done.stderr
    assert (answer["tenantId"], answer["fromRegion"], answer["toRegion"]) == (tenant["id"], US, EU), answer
    assert answer["failedOverAt"] and "replicaStatus" in answer

    # The secondary serves the tenant: its projects all there, a write of each kind accepted.
    listed = until(lambda: (a := _call(eu.base_url, key, "GET", "/projects")).status_code == 200 and a, 30)
    assert listed, _call(eu.base_url, key, "GET", "/projects").text
    assert {p["id"] for p in listed.json()["data"]["items"]} == set(state["projects"])
    made = _call(eu.base_url, key, "POST", "/projects", json={"name": "made in the new home", "language": "python"})
    assert made.status_code == 201, made.text
    renamed = _call(eu.base_url, key, "PATCH", f"/projects/{state['projects'][0]}", json={"name": "renamed in eu"})
    assert renamed.status_code == 200, renamed.text
    state["made_in_eu"] = made.json()["data"]["id"]
    secrets = _call(eu.base_url, key, "GET", "/secrets")
    assert secrets.status_code == 200 and [s["name"] for s in secrets.json()["data"]["items"]] == ["SEEDED_SECRET"]

    # The old home points at the new one (once the directory reached it and its policy cache ran out).
    def sent_on():
        a = _call(us.base_url, key, "GET", "/projects")
        return a.status_code == 421 and a
    moved = until(sent_on, 60)
    assert moved, _call(us.base_url, key, "GET", "/projects").text
    assert moved.json()["error"]["details"] == {"region": EU, "baseUrl": eu.base_url, "tenantId": tenant["id"]}
    # The library, given the old home's URL, follows to the new one and keeps working there.
    followed = []
    with Client(us.base_url, api_key=key, on_moved=followed.append) as svc:
        names = {p.name for p in svc.projects.iter()}
        project = svc.projects.create("through the library", language="python")
        svc.projects.update(project.id, description="changed through the library")
        info = svc.regions.routing_info()
    assert followed == [eu.base_url]
    assert {"made in the new home", "renamed in eu"} <= names
    assert (info.serving_region, info.home_region, info.home_base_url) == (EU, EU, eu.base_url)
    assert project.id in _projects(eu, tenant["id"])
    state["projects"] += [state["made_in_eu"], project.id]


def test_writes_in_the_new_home_reach_the_old_one(cells, state):
    us, eu = cells.cell(US), cells.cell(EU)
    tenant = state["tenant"]
    extra = _call(eu.base_url, tenant["key"], "POST", "/projects", json={"name": "after the failover",
                                                                         "language": "python"})
    assert extra.status_code == 201, extra.text
    state["projects"].append(extra.json()["data"]["id"])
    wanted = set(state["projects"])

    def reversed_():
        there = _projects(us, tenant["id"])
        return set(there) == wanted and there.get(state["projects"][0], {}).get("name") == "renamed in eu" and there
    there = until(reversed_, 90) or _projects(us, tenant["id"])
    assert set(there) == wanted, sorted(wanted - set(there))
    assert there[state["projects"][0]]["name"] == "renamed in eu"
    assert there[state["made_in_eu"]]["name"] == "made in the new home"


def test_removing_the_secondary_deletes_the_copies_in_the_other_cell(cells, state):
    us, eu = cells.cell(US), cells.cell(EU)
    tenant = state["tenant"]
    assert sum(map(len, tenant_items(us, tenant["id"]).values())) > 0   # the copies in the old home
    removed = set_secondary(eu, tenant, None)
    assert removed.status_code == 200, removed.text
    assert removed.json()["data"]["secondaryRegion"] is None
    left = until(lambda: not tenant_items(us, tenant["id"]) or None, 120, every=1)
    leftover = {table: len(items) for table, items in tenant_items(us, tenant["id"]).items()}
    status, report = _audit(cells)
    found = [f for f in report["findings"] if tenant["id"] in f["owner"]]
    # Nothing of the tenant left in the old cell (every table, its own outbox's event records too),
    # so the audit finds nothing of it out of place.
    assert left is True, (leftover, found[:3])
    assert status == 0 and report["outOfPlace"] == 0 and not found, report["findings"][:5]
    assert objects(us, f"tenants/{tenant['id']}/") == {}
    # The tenant keeps everything in its home, and the directory no longer names a secondary.
    assert set(_projects(eu, tenant["id"])) == set(state["projects"])
    assert len(objects(eu, state["prefix"])) == 1
    prefs = _call(eu.base_url, tenant["key"], "GET", f"/regions/preferences/{tenant['id']}")
    assert prefs.status_code == 200 and prefs.json()["data"]["secondaryRegion"] is None


def _cell_process(cells, cell) -> int:
    """The pid of the process serving one cell (python -m devstack ... --port PORT)."""
    for pid in cells.descendants():
        try:
            argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if b"devstack" in b" ".join(argv) and b"--port" in argv and argv[argv.index(b"--port") + 1] == str(cell.port).encode():
            return pid
    raise AssertionError(f"no process serves {cell.region}")


def test_a_tenant_whose_home_cell_is_lost_is_failed_over_and_served_with_what_was_carried(cells):
    """The last test of the module: it stops the us-east-1 cell for good. A client given the secondary's
    URL was sent on to the home; once the home is gone and the tenant failed over, the same client
    reaches it again without being told anything."""
    import os
    import signal

    from svc_client import CellUnreachable, Client
    us, eu = cells.cell(US), cells.cell(EU)
    tenant = new_tenant(us, "Lost home")
    on_growth_with_secondary(us, eu, tenant)
    assert (replica_current(cells, tenant["id"]) or {}).get("status") == "current"
    made = []
    for n in range(10):
        answer = _call(us.base_url, tenant["key"], "POST", "/projects", json={"name": f"before the loss {n}"})
        assert answer.status_code == 201, answer.text
        made.append(answer.json()["data"]["id"])
    carried = until(lambda: set(made) <= set(_projects(eu, tenant["id"])), 90)
    assert carried, sorted(set(made) - set(_projects(eu, tenant["id"])))
    with Client(eu.base_url, api_key=tenant["key"]) as svc:
        assert {p.id for p in svc.projects.iter()} >= set(made)
        assert svc.base_url == us.base_url   # sent on to the home by a 421

        os.kill(_cell_process(cells, us), signal.SIGTERM)   # the home region is lost
        gone = until(lambda: _refused(us.base_url), 60)
        assert gone, "the us-east-1 cell still answers"

        # Before the failover the home is dead and the secondary sends the tenant there: the call ends
        # with an error naming the cell, after a few requests, never bouncing between the two.
        started = time.monotonic()
        with pytest.raises(CellUnreachable) as unreachable:
            svc.projects.list()
        assert time.monotonic() - started < 30
        assert (unreachable.value.base_url, unreachable.value.region) == (us.base_url, US)
        assert len(unreachable.value.visited) <= 4, unreachable.value.visited

        done, outcome = failover(eu, tenant["id"])
        assert done.returncode == 0 and outcome is not None, done.stdout + done.stderr
        assert (outcome["fromRegion"], outcome["toRegion"], outcome["replicaStatus"]) == (US, EU, "current")

        listed = {p.id for p in svc.projects.iter()}   # the kept cell is gone: back to the given URL
        assert listed >= set(made) and svc.base_url == eu.base_url
        created = svc.projects.create(name="after the loss", language="python")
        assert created.id in {p.id for p in svc.projects.iter()}
    assert _call(eu.base_url, tenant["key"], "GET", "/routing-info").json()["data"]["homeRegion"] == EU


def _refused(base_url: str) -> bool:
    try:
        httpx.get(base_url + "/api/v1/health", timeout=2)
    except httpx.TransportError:
        return True
    return False
