"""`python -m ops residency audit` over two cells: each its own DynamoDB Local with the template's tables,
its files bucket in its own region of the moto server, and the directory replicated in both (as the
global table would be). A clean pair exits 0; an EU tenant's item and object in the US cell, and an item
of a tenant no directory knows, are reported and exit 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import boto3
import pytest

from devstack.provision import create_bucket, provision_tables
from devstack.template import ROOT, Resolver, load
from ops.__main__ import main as ops_main
from tests.support.ci import in_ci
from tests.support.emulator import MotoServer

US, EU = "us-east-1", "eu-central-1"
QUEUES = sorted(k for k, v in load()["Resources"].items() if v["Type"] == "AWS::SQS::Queue")
FILES_BUCKET = Resolver({}).resolve(load()["Resources"]["ProjectFilesBucket"]["Properties"])
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"}


def _start_dynamodb_local():
    from devstack.dynamodb_local import DynamoDBLocal, Unavailable
    try:
        return DynamoDBLocal().start()
    except Unavailable as exc:
        reason = f"DynamoDB Local is not available: {exc} (run scripts/bootstrap_node.sh)"
        if in_ci():
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)


class TwoCellData:
    """Two cells' tables and buckets, their environment files, and writers for their items."""

    def __init__(self, tmp: Path) -> None:
        self.emulator = MotoServer().start()
        self.databases = {}
        self.folders = {}
        try:
            for region in (US, EU):
                self.databases[region] = _start_dynamodb_local()
        except BaseException:
            self.stop()
            raise
        for region, database in self.databases.items():
            provision_tables(database.endpoint)
            bucket = f"files-{region}"   # set as the template sets ProjectFilesBucket: versioned
            create_bucket(self._client("s3", region), bucket, FILES_BUCKET, region)
            sqs = self._client("sqs", region)
            for queue in QUEUES:   # named as the local stack names them (their logical ids)
                sqs.create_queue(QueueName=queue)
            environment = {**Resolver({}).function_environment("ProjectsFunction"), **CREDENTIALS,
                           "AWS_REGION": region, "AWS_DEFAULT_REGION": region, "PROJECT_FILES_BUCKET": bucket,
                           "AWS_ENDPOINT_URL": self.emulator.endpoint,
                           "AWS_ENDPOINT_URL_DYNAMODB": database.endpoint}
            folder = tmp / region
            folder.mkdir()
            (folder / "local-stack-env.json").write_text(json.dumps(environment))
            self.folders[region] = folder

    def _client(self, service: str, region: str):
        endpoint = self.databases[region].endpoint if service == "dynamodb" else self.emulator.endpoint
        return boto3.client(service, region_name=region, endpoint_url=endpoint, aws_access_key_id="local",
                            aws_secret_access_key="local")

    def put(self, region: str, table: str, item: dict) -> None:
        self._client("dynamodb", region).put_item(
            TableName=table, Item={k: {"N": str(v)} if isinstance(v, int) else {"S": v} for k, v in item.items()})

    def put_object(self, region: str, key: str) -> None:
        self._client("s3", region).put_object(Bucket=f"files-{region}", Key=key, Body=b"content")

    def send(self, region: str, queue: str, body: dict) -> None:
        sqs = self._client("sqs", region)
        sqs.send_message(QueueUrl=sqs.get_queue_url(QueueName=queue)["QueueUrl"], MessageBody=json.dumps(body))

    def receive_all(self, region: str, queue: str) -> list[dict]:
        """Every visible message of the queue, taken off it (deleted): (body, receive count) each."""
        sqs = self._client("sqs", region)
        url, taken = sqs.get_queue_url(QueueName=queue)["QueueUrl"], []
        while received := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=60,
                                              AttributeNames=["ApproximateReceiveCount"]).get("Messages", []):
            for message in received:
                taken.append({"body": json.loads(message["Body"]),
                              "receives": int(message["Attributes"]["ApproximateReceiveCount"])})
                sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
        return taken

    def directory(self, item: dict) -> None:
        for region in self.databases:  # the global table's replicas
            self.put(region, "DirectoryTable", {**item, "updatedAt": "2026-01-01T00:00:00Z", "writtenIn": US})

    def cells(self) -> str:
        return ",".join(str(self.folders[r]) for r in (US, EU))

    def stop(self) -> None:
        for database in self.databases.values():
            database.stop()
        self.emulator.stop()


def _tenant(cells: TwoCellData, region: str, tenant_id: str, user_id: str, residency: str | None = None) -> None:
    """A tenant homed in region with its owner, a project, a chat message, a sign-in, its balance and a file."""
    cells.directory({"pk": f"TENANT#{tenant_id}", "sk": "HOME", "homeRegion": region, "status": "active"})
    cells.directory({"pk": f"USER#{user_id}", "sk": "HOME", "homeRegion": region})
    cells.directory({"pk": f"USER#{user_id}", "sk": f"MEMBER#{tenant_id}", "tenantId": tenant_id})
    tenant = {"id": tenant_id, "name": tenant_id, "plan": "growth", "status": "active"}
    if residency:
        cells._client("dynamodb", region).put_item(TableName="TenantsTable", Item={
            **{k: {"S": v} for k, v in tenant.items()},
            "regionPreferences": {"M": {"dataResidencyRequired": {"BOOL": True},
                                        "dataResidencyRegion": {"S": residency}}}})
    else:
        cells.put(region, "TenantsTable", tenant)
    cells.put(region, "UsersTable", {"pk": f"USER#{user_id}", "sk": "PROFILE", "email": f"{user_id}@example.com"})
    cells.put(region, "UsersTable", {"pk": f"EMAIL#{user_id}@example.com", "sk": "EMAIL", "userId": user_id})
    cells.put(region, "UsersTable", {"pk": f"USER#{user_id}", "sk": f"MEMBER#{tenant_id}", "tenantId": tenant_id,
                                     "userId": user_id, "role": "owner"})
    cells.put(region, "ProjectsTable", {"tenantId": tenant_id, "id": "prj_1", "name": "First"})
    cells.put(region, "ChatMessagesTable", {"sessionKey": f"{tenant_id}#chs_1", "id": "msg_1", "content": "hi"})
    cells.put(region, "SessionsTable", {"id": f"ses_{user_id}", "userId": user_id, "tenantId": tenant_id})
    cells.put(region, "BillingTable", {"pk": tenant_id, "sk": "BALANCE", "balance": 1000})
    cells.put(region, "ApiKeysTable", {"pk": f"KEY#key_{tenant_id}", "id": f"key_{tenant_id}", "tenantId": tenant_id})
    cells.put(region, "RateLimitsTable", {"pk": f"key_{tenant_id}", "hits": 3})
    cells.put(region, "RateLimitsTable", {"pk": f"tenant#{tenant_id}", "hits": 3})
    cells.put(region, "RateLimitsTable", {"pk": f"ip#10.0.0.{len(region)}", "hits": 1})  # the cell's own
    cells.put_object(region, f"tenants/{tenant_id}/projects/prj_1/files/notes.txt")


@pytest.fixture(scope="module")
def two_cells(tmp_path_factory):
    cells = TwoCellData(tmp_path_factory.mktemp("cells"))
    try:
        _tenant(cells, US, "t_us", "u_us")
        _tenant(cells, EU, "t_eu", "u_eu", residency="eu")
        yield cells
    finally:
        cells.stop()


def _audit(cells: TwoCellData, capsys) -> tuple[int, dict]:
    code = ops_main(["residency", "audit", "--local", cells.cells(), "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_tenants_homed_in_each_cell_leave_nothing_out_of_place(two_cells, capsys):
    code, report = _audit(two_cells, capsys)
    assert (code, report["outOfPlace"], report["findings"]) == (0, 0, [])
    by_region = {c["region"]: c for c in report["cells"]}
    assert set(by_region) == {US, EU}
    for count in by_region.values():
        assert (count["items"], count["objects"], count["cellRecords"], count["outOfPlace"]) == (12, 1, 1, 0)
    assert report["directory"] == {"items": 6, "tenants": 2, "users": 2}


def test_an_eu_tenants_item_and_object_in_the_us_cell_and_an_unknown_tenants_item_are_reported(two_cells, capsys):
    two_cells.put(US, "ProjectsTable", {"tenantId": "t_eu", "id": "prj_misplaced", "name": "Moved by mistake"})
    two_cells.put_object(US, "tenants/t_eu/projects/prj_1/files/notes.txt")
    two_cells.put(EU, "AgentsTable", {"tenantId": "t_nowhere", "id": "agt_1"})
    try:
        code, report = _audit(two_cells, capsys)
        found = sorted((f["region"], f["where"], f["owner"], f["problem"]) for f in report["findings"])
        assert found == [
            (EU, "AgentsTable", "tenant t_nowhere", "its tenant is in no directory"),
            (US, "ProjectsTable", "tenant t_eu", "outside its allowed regions"),
            (US, "bucket", "tenant t_eu", "outside its allowed regions"),
        ]
        assert {c["region"]: c["outOfPlace"] for c in report["cells"]} == {US: 2, EU: 1}
        misplaced = next(f for f in report["findings"] if f["where"] == "ProjectsTable")
        assert (misplaced["key"], misplaced["allowed"]) == ({"tenantId": "t_eu", "id": "prj_misplaced"}, [EU])
        misplaced_file = next(f for f in report["findings"] if f["where"] == "bucket")
        assert misplaced_file["key"]["key"] == "tenants/t_eu/projects/prj_1/files/notes.txt"
        assert misplaced_file["key"]["version"]   # the bucket is versioned: each version is a finding of its own
        assert code == 1

        # The command as an operator runs it: a summary per cell, the findings, exit 1.
        shown = subprocess.run([sys.executable, "-m", "ops", "residency", "audit", "--local", two_cells.cells()],
                               cwd=ROOT, capture_output=True, text=True, timeout=120,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert shown.returncode == 1, shown.stderr
        assert f"{US:<16}" in shown.stdout and "2 out of place" in shown.stdout and "1 out of place" in shown.stdout
        assert "tenant t_eu: outside its allowed regions (allowed: eu-central-1)" in shown.stdout
    finally:
        two_cells._client("dynamodb", US).delete_item(
            TableName="ProjectsTable", Key={"tenantId": {"S": "t_eu"}, "id": {"S": "prj_misplaced"}})
        two_cells._client("dynamodb", EU).delete_item(
            TableName="AgentsTable", Key={"tenantId": {"S": "t_nowhere"}, "id": {"S": "agt_1"}})
        s3, planted = two_cells._client("s3", US), "tenants/t_eu/projects/prj_1/files/notes.txt"
        for version in s3.list_object_versions(Bucket=f"files-{US}", Prefix=planted).get("Versions", []):
            s3.delete_object(Bucket=f"files-{US}", Key=planted, VersionId=version["VersionId"])


def test_rate_limit_counters_of_an_eu_tenant_in_the_us_cell_are_reported(two_cells, capsys):
    """The tenant's own counter, and its API key's (found through the key's item in the EU cell)."""
    two_cells.put(US, "RateLimitsTable", {"pk": "tenant#t_eu", "windowStart": 60, "hits": 7})
    two_cells.put(US, "RateLimitsTable", {"pk": "streams#key_t_eu", "ttl": 4_000_000_000})
    try:
        code, report = _audit(two_cells, capsys)
        found = sorted((f["region"], f["where"], f["key"]["pk"], f["owner"], f["allowed"]) for f in report["findings"])
        assert found == [
            (US, "RateLimitsTable", "streams#key_t_eu", "tenant t_eu (api_key key_t_eu)", [EU]),
            (US, "RateLimitsTable", "tenant#t_eu", "tenant t_eu", [EU]),
        ]
        assert code == 1
    finally:
        for pk in ("tenant#t_eu", "streams#key_t_eu"):
            two_cells._client("dynamodb", US).delete_item(TableName="RateLimitsTable", Key={"pk": {"S": pk}})


def _event(tenant_id: str, n: int) -> dict:
    return {"id": f"evt_{tenant_id}_{n}", "type": "project.created", "timestamp": "2026-01-01T00:00:00.000Z",
            "tenantId": tenant_id, "data": {"id": f"prj_{n}"}}


def test_queued_messages_of_an_eu_tenant_in_the_us_cell_are_reported_per_queue_and_left_on_the_queue(two_cells, capsys):
    """The webhook queue's bus events, the delivery queue's and its dead letters' deliveries, a chat turn: the
    EU tenant's in the US cell are reported (a finding per queue and tenant, with how many), the US tenant's
    and a stream failure's are in place, and every message is still on its queue after, visible."""
    planted = {
        "WebhookQueue": [{"version": "0", "detail-type": "project.created", "source": "svc", "detail": _event(t, n)}
                         for t, n in (("t_eu", 1), ("t_eu", 2), ("t_us", 3))],
        "WebhookDeliveryQueue": [{"event": _event("t_eu", n), "webhookId": "whk_1", "tenantId": "t_eu"}
                                 for n in range(4)],
        "WebhookDeliveryDeadLetterQueue": [{"event": _event("t_eu", 9), "webhookId": "whk_1", "tenantId": "t_eu"}],
        "ChatTurnQueue": [{"tenantId": "t_us", "sessionId": "chs_1", "messageId": "msg_1"}],
        "OutboxFailureQueue": [{"DDBStreamBatchInfo": {"shardId": "shard-1", "batchSize": 1}}],
    }
    for queue, bodies in planted.items():
        for body in bodies:
            two_cells.send(US, queue, body)
    try:
        code, report = _audit(two_cells, capsys)
        found = sorted((f["region"], f["where"], f["owner"], f["key"]["messages"], f["problem"], tuple(f["allowed"]))
                       for f in report["findings"])
        assert found == [
            (US, "WebhookDeliveryDeadLetterQueue", "tenant t_eu", 1, "outside its allowed regions", (EU,)),
            (US, "WebhookDeliveryQueue", "tenant t_eu", 4, "outside its allowed regions", (EU,)),
            (US, "WebhookQueue", "tenant t_eu", 2, "outside its allowed regions", (EU,)),
        ]
        assert code == 1
        counted = {q["queue"]: (q["read"], q["byOwner"]) for q in report["queues"] if q["region"] == US and q["read"]}
        assert counted == {"WebhookQueue": (3, {"tenant t_eu": 2, "tenant t_us": 1}),
                           "WebhookDeliveryQueue": (4, {"tenant t_eu": 4}),
                           "WebhookDeliveryDeadLetterQueue": (1, {"tenant t_eu": 1}),
                           "ChatTurnQueue": (1, {"tenant t_us": 1}),
                           "OutboxFailureQueue": (1, {"cell_records": 1})}
        assert {c["region"]: c["messages"] for c in report["cells"]} == {US: 10, EU: 0}
    finally:
        left = {queue: two_cells.receive_all(US, queue) for queue in planted}
    # Read, not consumed: every message visible again at once, each received once more (SQS has no peek).
    assert {q: sorted(json.dumps(m["body"]) for m in got) for q, got in left.items()} == \
        {q: sorted(json.dumps(b) for b in bodies) for q, bodies in planted.items()}
    assert {m["receives"] for got in left.values() for m in got} == {2}


def test_a_message_in_flight_is_counted_not_read_and_no_queues_leaves_the_queues_alone(two_cells, capsys):
    sqs = two_cells._client("sqs", US)
    url = sqs.get_queue_url(QueueName="AgentRunQueue")["QueueUrl"]
    two_cells.send(US, "AgentRunQueue", {"tenantId": "t_eu", "runId": "run_1"})   # a worker holds it
    held = sqs.receive_message(QueueUrl=url, VisibilityTimeout=300)["Messages"][0]
    two_cells.send(US, "AgentRunQueue", {"tenantId": "t_eu", "runId": "run_2"})
    try:
        code, report = _audit(two_cells, capsys)
        [queue] = [q for q in report["queues"] if (q["region"], q["queue"]) == (US, "AgentRunQueue")]
        assert (queue["read"], queue["notRead"], queue["byOwner"]) == (1, 1, {"tenant t_eu": 1})
        assert code == 1
        assert ops_main(["residency", "audit", "--local", two_cells.cells(), "--json", "--no-queues"]) == 0
        assert json.loads(capsys.readouterr().out)["queues"] == []
        # The held message is still the worker's; the other was read once by the first audit, not the second.
        assert [(m["body"]["runId"], m["receives"]) for m in two_cells.receive_all(US, "AgentRunQueue")] == \
            [("run_2", 2)]
    finally:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=held["ReceiptHandle"])
        two_cells.receive_all(US, "AgentRunQueue")


def test_a_directory_home_outside_the_required_jurisdiction_is_reported(two_cells, capsys):
    two_cells.directory({"pk": "TENANT#t_eu", "sk": "HOME", "homeRegion": US, "status": "active"})
    try:
        code, report = _audit(two_cells, capsys)
        problems = sorted((f["region"], f["owner"], f["problem"]) for f in report["findings"])
        assert ("directory", "tenant t_eu", "homeRegion us-east-1 is outside the required jurisdiction eu") in problems
        assert (EU, "tenant t_eu", "outside its allowed regions") in problems  # its data is now where it may not be
        assert code == 1
    finally:
        two_cells.directory({"pk": "TENANT#t_eu", "sk": "HOME", "homeRegion": EU, "status": "active"})


def test_two_cells_sharing_a_table_are_refused(two_cells, tmp_path, capsys):
    shared = json.loads((two_cells.folders[US] / "local-stack-env.json").read_text())
    (tmp_path / "local-stack-env.json").write_text(json.dumps({**shared, "AWS_REGION": EU}))
    code = ops_main(["residency", "audit", "--local", f"{two_cells.folders[US]},{tmp_path}"])
    assert code == 2
    assert "cells share resources" in capsys.readouterr().out
