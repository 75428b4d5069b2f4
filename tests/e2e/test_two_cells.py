"""Two cells of the local stack (python -m devstack --regions us-east-1,eu-central-1): each its own
region, tables and port, the secrets alike, the development tenant in the first, the directory
replicated between them, and nothing left running once stopped."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from pathlib import Path

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
    written = time.monotonic()
    us.dynamodb().put_item(TableName=DIRECTORY, Item=_item(key, us.region, "2026-01-01T00:00:00.000Z",
                                                           homeRegion=us.region, status="active"))
    assert _until(lambda: _read(eu, key)) == _read(us, key)
    assert time.monotonic() - written >= LAG   # never before the lag (a loaded machine only adds to it)

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
    # The older write first, the newer one at once after it in the other cell: in whatever order the
    # replicator then applies them, both cells end with the newer (last writer wins).
    started = time.monotonic()
    us.dynamodb().put_item(TableName=DIRECTORY, Item=_item(key, us.region, "2026-01-01T00:00:01.000Z",
                                                           homeRegion=us.region))
    eu.dynamodb().put_item(TableName=DIRECTORY, Item=_item(key, eu.region, "2026-01-01T00:00:02.000Z",
                                                           homeRegion=eu.region))
    both_within_the_lag = time.monotonic() - started < LAG
    assert _until(lambda: (_read(us, key) or {}).get("homeRegion", {}).get("S") == eu.region)
    _until(lambda: cells.status()["replicator"]["pending"] == 0)
    assert _read(us, key) == _read(eu, key)
    assert _read(eu, key)["homeRegion"]["S"] == eu.region
    if both_within_the_lag:   # the older write reached the eu cell after the newer one: refused there
        assert cells.status()["replicator"]["superseded"] >= 1


# ---- routing: a tenant homed in one cell, called at the other ------------------------------------

PASSWORD = "cells-password-0123456789"


@pytest.fixture(scope="module")
def eu_tenant(cells):
    """An account and its workspace placed in the eu cell by a registration sent to the us cell's
    URL, and an API key of it: what the library did on the way."""
    from svc_client import Client
    email, moves = f"eu-{uuid.uuid4().hex[:10]}@example.com", []
    with Client(cells.first.base_url, api_key="", on_moved=moves.append) as svc:
        made = svc.auth.register(email, PASSWORD, "Eu Owner", region=cells.second.region)
        svc.auth.login(email, PASSWORD)
        key = svc.api_keys.create("backend", "sdk", "Production")
    # The us cell knows them once the directory has replicated (its lag): the key and the account are 421 there.
    us = cells.first.base_url
    assert _until(lambda: httpx.get(us + "/api/v1/auth/me", headers=_auth(key.key), timeout=10).status_code == 421)
    assert _until(lambda: httpx.post(us + "/api/v1/auth/login", json={"email": email, "password": PASSWORD},
                                     timeout=10).status_code == 421)
    return {"email": email, "tenantId": made["tenant"]["id"], "userId": made["user"]["id"], "key": key.key,
            "moves": moves}


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_a_registration_naming_the_eu_region_at_the_us_url_makes_everything_in_the_eu_cell(cells, eu_tenant):
    assert eu_tenant["moves"] == [cells.second.base_url]   # moved once, then served there
    tenant = {"id": {"S": eu_tenant["tenantId"]}}
    us_table, eu_table = (cell.environment["TENANTS_TABLE"] for cell in cells.cells)
    assert "Item" in cells.second.dynamodb().get_item(TableName=eu_table, Key=tenant)
    assert "Item" not in cells.first.dynamodb().get_item(TableName=us_table, Key=tenant)
    home = {"pk": {"S": f"TENANT#{eu_tenant['tenantId']}"}, "sk": {"S": "HOME"}}
    assert _until(lambda: _read(cells.first, home))["homeRegion"]["S"] == cells.second.region   # replicated


def test_curl_at_the_wrong_cell_gets_421_naming_the_tenants_cell_and_nothing_happens_there(cells, eu_tenant):
    us, eu = cells.first.base_url, cells.second.base_url
    wrong = httpx.post(us + "/api/v1/projects", headers=_auth(eu_tenant["key"]), timeout=10,
                       json={"name": "misdirected", "language": "python"})
    assert wrong.status_code == 421, wrong.text
    error = wrong.json()["error"]
    assert error["code"] == "WRONG_REGION"
    assert error["details"] == {"region": cells.second.region, "baseUrl": eu, "tenantId": eu_tenant["tenantId"]}
    right = httpx.get(error["details"]["baseUrl"] + "/api/v1/projects", headers=_auth(eu_tenant["key"]), timeout=10)
    assert right.status_code == 200 and right.json()["data"]["items"] == []   # the 421 made nothing
    # An unknown key is 401 in every cell, as before.
    for base in (us, eu):
        assert httpx.get(base + "/api/v1/projects", headers=_auth("svc_sdk_" + "x" * 38), timeout=10).status_code == 401


def test_the_library_sent_to_the_us_url_is_served_by_the_eu_cell(cells, eu_tenant):
    from svc_client import Client
    with Client(cells.first.base_url, api_key=eu_tenant["key"]) as svc:
        project = svc.projects.create("routed", language="python")
        info = svc.regions.routing_info()
        assert svc.base_url == cells.second.base_url
    assert (info.serving_region, info.home_region, info.home_base_url) == (
        cells.second.region, cells.second.region, cells.second.base_url)
    table = cells.second.environment["PROJECTS_TABLE"]
    stored = cells.second.dynamodb().scan(TableName=table)["Items"]
    assert any(item.get("id", {}).get("S") == project.id for item in stored)
    assert not any(item.get("id", {}).get("S") == project.id
                   for item in cells.first.dynamodb().scan(TableName=cells.first.environment["PROJECTS_TABLE"])["Items"])


def test_signing_in_at_the_us_url_reaches_the_accounts_cell_and_its_token_is_routed_too(cells, eu_tenant):
    from svc_client import Client, InvalidCredentials
    with Client(cells.first.base_url, api_key="") as svc:
        grant = svc.auth.login(eu_tenant["email"], PASSWORD)
        assert svc.base_url == cells.second.base_url and grant.access_token
    answer = httpx.get(cells.first.base_url + "/api/v1/auth/me", headers=_auth(grant.access_token), timeout=10)
    assert answer.status_code == 421 and answer.json()["error"]["details"]["baseUrl"] == cells.second.base_url
    # An address with no account: refused as a wrong password is, whichever cell the 421 names.
    with Client(cells.first.base_url, api_key="") as svc, pytest.raises(InvalidCredentials):
        svc.auth.login(f"nobody-{uuid.uuid4().hex[:8]}@example.com", PASSWORD)


def test_the_cli_at_the_us_url_follows_to_the_eu_cell_and_its_login_keeps_that_cell(cells, eu_tenant, tmp_path):
    import os
    svc = str(Path(sys.executable).parent / "svc")
    env = {**os.environ, "SVC_CONFIG_DIR": str(tmp_path), "SVC_CREDENTIAL_STORE": "file"}
    env.pop("SVC_API_KEY", None), env.pop("SVC_BASE_URL", None)

    def cli(*args: str, **extra: str) -> subprocess.CompletedProcess:
        done = subprocess.run([svc, *args], env={**env, **extra}, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done

    # A key in the environment, the us URL: followed, and said on stderr.
    listed = cli("-o", "json", "projects", "list", SVC_API_KEY=eu_tenant["key"], SVC_BASE_URL=cells.first.base_url)
    assert cells.second.base_url in listed.stderr
    assert [p["name"] for p in json.loads(listed.stdout)["items"]] == ["routed"]
    # A stored login made at the us URL keeps the eu cell's: later commands go there at once.
    cli("--base-url", cells.first.base_url, "login", "--api-key", eu_tenant["key"])
    again = cli("-o", "json", "projects", "list")
    assert cells.second.base_url not in again.stderr and [p["name"] for p in json.loads(again.stdout)["items"]] == ["routed"]
    who = json.loads(cli("-o", "json", "whoami").stdout)
    assert who["tenant"]["id"] == eu_tenant["tenantId"]


def test_regions_available_are_the_cells_and_a_move_is_not_a_preference(cells, eu_tenant):
    listed = httpx.get(cells.second.base_url + "/api/v1/regions", headers=_auth(eu_tenant["key"]), timeout=10)
    available = sorted(r["id"] for r in listed.json()["data"]["items"] if r["available"])
    assert available == sorted(c.region for c in cells.cells)
    moved = httpx.patch(f"{cells.second.base_url}/api/v1/regions/preferences/{eu_tenant['tenantId']}",
                        headers=_auth(eu_tenant["key"]), json={"primaryRegion": cells.first.region}, timeout=10)
    assert moved.status_code == 409 and moved.json()["error"]["details"]["reason"] == "moves_tenant"
    assert moved.json()["error"]["details"]["migration"] == f"/api/v1/regions/migrations/{eu_tenant['tenantId']}"
    nowhere = httpx.patch(f"{cells.second.base_url}/api/v1/regions/preferences/{eu_tenant['tenantId']}",
                          headers=_auth(eu_tenant["key"]), json={"secondaryRegion": "eu-west-1"}, timeout=10)
    assert nowhere.status_code in (400, 403), nowhere.text   # no cell there (or the plan lacks the feature)
    prefs = httpx.get(f"{cells.second.base_url}/api/v1/regions/preferences/{eu_tenant['tenantId']}",
                      headers=_auth(eu_tenant["key"]), timeout=10).json()["data"]
    assert prefs["primaryRegion"] == cells.second.region


def _mixed_session(cells, region: str, number: int) -> dict:
    """One tenant's session, registered and worked through the first cell's URL whatever its home:
    projects made, changed and deleted, a secret, a webhook, API keys made, rotated and revoked, an
    invitation, a chat turn, an agent run, and deliberate failures (bad input, a conflict, a request
    at the wrong cell). Returns what it made and how it was answered."""
    from svc_client import ApiError, Client
    email, refused = f"mix-{number}-{uuid.uuid4().hex[:8]}@example.com", []
    with Client(cells.first.base_url, api_key="") as svc:
        made = svc.auth.register(email, PASSWORD, f"Mixed {number}", region=region)
        svc.auth.login(email, PASSWORD)
        keep = svc.projects.create(f"kept-{number}", language="python")
        gone = svc.projects.create(f"gone-{number}", language="python")
        svc.projects.update(keep.id, description="changed")
        svc.projects.delete(gone.id)
        svc.secrets.create(f"TOKEN_{number}", "s3cret-value")
        svc.webhooks.create("https://hooks.example.com/svc", ["project.created"])
        key = svc.api_keys.create("rotated", "sdk", "Production")
        svc.api_keys.rotate(key.id)
        svc.api_keys.revoke(svc.api_keys.create("revoked", "ci", "Production").id)
        svc.invitations.create(f"colleague-{number}-{uuid.uuid4().hex[:6]}@example.com", "member")
        chat = svc.chat.create_session(title="hello", project_id=keep.id)
        svc.chat.send(chat.id, "Say hello.")
        agent = svc.agents.create("helper", "You help.", "autonomous")
        svc.agents.execute(agent.id, "Write a README file.", keep.id)
        for bad in (lambda: svc.projects.create("", language="python"),                 # 400
                    lambda: svc.invitations.create(email, "member"),                     # 409 already a member
                    lambda: svc.projects.get("proj_01J00000000000000000000000")):        # 404
            try:
                bad()
            except ApiError as error:
                refused.append(error.status)
        home = svc.base_url
    return {"tenantId": made["tenant"]["id"], "home": home, "refused": refused}


def test_a_mixed_session_with_tenants_in_both_cells_leaves_nothing_out_of_place(cells, capsys):
    from concurrent.futures import ThreadPoolExecutor

    from ops.__main__ import main as ops_main
    plan = [(cells.cells[n % 2].region, n) for n in range(4)]
    with ThreadPoolExecutor(4) as pool:
        sessions = list(pool.map(lambda args: _mixed_session(cells, *args), plan))
    for (region, _n), session in zip(plan, sessions, strict=True):
        assert session["home"] == cells.cell(region).base_url
        assert sorted(session["refused"]) == [400, 404, 409]
    # Every item in its tenant's cell, once the directory has reached both cells.
    assert _until(lambda: cells.status()["replicator"]["pending"] == 0)
    ports = ",".join(str(c.port) for c in cells.cells)
    capsys.readouterr()
    assert ops_main(["residency", "audit", "--local", ports, "--json"]) == 0, capsys.readouterr().out
    report = json.loads(capsys.readouterr().out)
    assert report["outOfPlace"] == 0 and report["scanned"] > 100, report
    # The audit does see a misplaced item: one of an eu tenant's projects copied into the us cell.
    eu_tenant = next(s["tenantId"] for (region, _), s in zip(plan, sessions, strict=True) if region == cells.second.region)
    eu_table, us_table = cells.second.environment["PROJECTS_TABLE"], cells.first.environment["PROJECTS_TABLE"]
    item = next(i for i in cells.second.dynamodb().scan(TableName=eu_table)["Items"]
                if i.get("tenantId", {}).get("S") == eu_tenant)
    cells.first.dynamodb().put_item(TableName=us_table, Item=item)
    try:
        assert ops_main(["residency", "audit", "--local", ports, "--json"]) == 1
        found = json.loads(capsys.readouterr().out)
        assert found["outOfPlace"] == 1, found
    finally:
        cells.first.dynamodb().delete_item(TableName=us_table, Key={k: item[k] for k in ("tenantId", "id") if k in item})


def test_stop_leaves_no_process_behind(cells):
    started = cells.descendants()
    assert len(started) >= 6, started   # two cells, each with its DynamoDB Local and emulator
    assert cells.stop() == 0
    assert _until(lambda: not cells.survivors(), 15), cells.survivors()
    for cell in cells.cells:
        assert not cell.env_file.exists()   # the environment of data that is gone
