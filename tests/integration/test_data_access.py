"""The data-access modules, called directly, on moto and on DynamoDB Local (`data_backend`).

Every expression, key and transaction a module sends reaches the engine here, so a request
that moto accepts but DynamoDB refuses (or answers differently) fails on the dynamodb-local
run. Time comes from the arguments or from a stopped svc_core.platform.timeutil.now: nothing sleeps.
"""

from __future__ import annotations

import dataclasses
import secrets
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from svc_core.adapters import aws
from svc_core.contracts import events
from svc_core.data import api_keys_table, outbox_table, projects_table, rate_limits_table, tenants_table, users_table
from svc_core.data.common import ConditionFailed, cancellation_reasons, transact
from svc_core.data.rate_limits_table import CredentialRevoked
from svc_core.domain.tenants import create_tenant_with_owner
from svc_core.platform import ids, timeutil
from svc_core.platform.config import settings
from svc_core.platform.errors import Conflict

WEEK = outbox_table.RETENTION_SECONDS
# The start of the 60 s window each test runs in, set by `clock`. It follows the real clock
# because DynamoDB Local applies TTL at once: an item whose `ttl` is past disappears.
T0 = 0


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    """T0 is the current window's start; svc_core.platform.timeutil.now stays at T0 + 10.5 s."""
    start = int(time.time()) // 60 * 60
    monkeypatch.setattr(sys.modules[__name__], "T0", start)

    class Clock:
        value = start + 10.5
    monkeypatch.setattr(timeutil, "now", lambda: Clock.value)
    return Clock


def new_id(prefix: str, ms: int) -> str:
    """An id created at the given instant (ids sort by creation time)."""
    return f"{prefix}_{ids.new_ulid(ms)}"


def stored_record(record: dict) -> dict:
    """What get() gives back for a record: None-valued top-level fields are not stored."""
    return {k: v for k, v in record.items() if v is not None}


def needs_atomic_writes(backend) -> None:
    if backend.name == "moto":
        pytest.skip("moto's threaded server does not serialize conditional writes to one item (two "
                    "concurrent writers can both pass a condition): atomicity is DynamoDB's, checked on "
                    "DynamoDB Local")


def concurrently(threads: int, work) -> list:
    """work(i) in `threads` threads released at the same instant; their answers in order."""
    start = threading.Barrier(threads)

    def run(i: int):
        start.wait()
        return work(i)
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(run, range(threads)))


def outcome(call) -> str:
    try:
        call()
        return "ok"
    except ConditionFailed:
        return "ConditionFailed"


def outbox_ids(backend) -> set[str]:
    return {i["id"] for i in backend.items(settings().outbox_table)}


# ---- the wiring itself ---------------------------------------------------------------------

def test_only_dynamodb_moves_to_the_backend(data_backend):
    assert aws.client("dynamodb").meta.endpoint_url == data_backend.dynamodb_endpoint
    assert aws.client("dynamodbstreams").meta.endpoint_url == data_backend.dynamodb_endpoint
    for service in ("secretsmanager", "sqs", "events"):
        assert aws.client(service).meta.endpoint_url == data_backend.stack.endpoint
    tables = set(aws.client("dynamodb").list_tables()["TableNames"])
    cfg = settings()
    assert {cfg.projects_table, cfg.api_keys_table, cfg.rate_limits_table, cfg.outbox_table,
            cfg.tenants_table, cfg.users_table} <= tables
    outbox = aws.client("dynamodb").describe_table(TableName=cfg.outbox_table)["Table"]
    assert outbox["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}
    index = aws.client("dynamodb").describe_table(TableName=cfg.api_keys_table)["Table"]["GlobalSecondaryIndexes"]
    assert [i["IndexName"] for i in index] == [api_keys_table.BY_TENANT_INDEX]
    for table in (cfg.outbox_table, cfg.rate_limits_table):
        ttl = aws.client("dynamodb").describe_time_to_live(TableName=table)["TimeToLiveDescription"]
        assert (ttl["TimeToLiveStatus"], ttl["AttributeName"]) == ("ENABLED", "ttl")


# ---- outbox --------------------------------------------------------------------------------

def test_outbox_event_item_carries_its_ttl_and_is_written_once(data_backend, clock):
    event = events.new_event("project.created", "ten_A", {"id": "proj_1", "name": "Apollo", "tags": ["a"],
                                                          "description": None})
    transact([outbox_table.put_event_item(event, T0 + 0.9)])
    stored = data_backend.item(settings().outbox_table, {"id": event.id})
    assert stored == {**event.payload(), "data": {"id": "proj_1", "name": "Apollo", "tags": ["a"], "description": None},
                      "ttl": T0 + WEEK}
    with pytest.raises(ConditionFailed):
        transact([outbox_table.put_event_item(dataclasses.replace(event, type="project.updated"), T0 + 5)])
    assert data_backend.item(settings().outbox_table, {"id": event.id})["type"] == "project.created"


@pytest.mark.fresh_stack  # reads the stream, where a wipe between tests leaves REMOVE records
def test_outbox_stream_carries_committed_events_only(data_backend, clock):
    """The outbox publisher reads the table's stream: a committed event appears there as an
    INSERT with its new image, a cancelled transaction leaves no record."""
    kept = events.new_event("project.created", "ten_A", {"id": "proj_1"})
    transact([outbox_table.put_event_item(kept, T0)])
    with pytest.raises(ConditionFailed):
        transact([outbox_table.put_event_item(events.new_event("project.created", "ten_A", {"id": "proj_2"}), T0),
                  outbox_table.put_event_item(kept, T0)])

    arn = aws.client("dynamodb").describe_table(TableName=settings().outbox_table)["Table"]["LatestStreamArn"]
    streams = aws.client("dynamodbstreams")
    records = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        while iterator:
            answer = streams.get_records(ShardIterator=iterator)
            records.extend(answer.get("Records", []))
            iterator = answer.get("NextShardIterator") if answer.get("Records") else None
    assert [(r["eventName"], r["dynamodb"]["Keys"]) for r in records] == [("INSERT", {"id": {"S": kept.id}})]
    image = records[0]["dynamodb"]["NewImage"]
    assert image["type"] == {"S": "project.created"} and image["ttl"] == {"N": str(T0 + WEEK)}


# ---- projects ------------------------------------------------------------------------------

def project(ms: int, name: str = "Apollo", **extra) -> dict:
    stamp = timeutil.iso(ms / 1000)
    return {"id": new_id("proj", ms), "name": name, "description": None, "language": "python",
            "created_at": stamp, "updated_at": stamp, **extra}


def project_event(kind: str, tenant_id: str, record: dict) -> events.Event:
    return events.new_event(f"project.{kind}", tenant_id, record)


@pytest.fixture
def tenants_ab(data_backend):
    """The tenants ten_A and ten_B (a project's create and delete count it on its tenant's item)."""
    for tenant_id in ("ten_A", "ten_B"):
        transact([tenants_table.put_new({"id": tenant_id, "name": tenant_id, "plan": "free", "status": "active",
                                         "created_at": "2026-11-26T00:00:00.000Z"})])


def test_project_create_then_get_and_the_event_in_the_same_transaction(data_backend, clock, tenants_ab):
    p = project(T0 * 1000, description="first", tags=["x", "y"])
    event = project_event("created", "ten_A", p)
    projects_table.create("ten_A", p, event, T0 + 1)

    assert projects_table.get("ten_A", p["id"]) == stored_record(p)
    assert projects_table.get("ten_B", p["id"]) is None  # another tenant's project is absent
    assert projects_table.get("ten_A", new_id("proj", T0 * 1000)) is None
    stored_event = data_backend.item(settings().outbox_table, {"id": event.id})
    assert stored_event["ttl"] == T0 + 1 + WEEK and stored_event["data"]["id"] == p["id"]

    # The same id again: the condition fails and neither the project nor its event is written.
    again = project_event("created", "ten_A", {**p, "name": "Other"})
    with pytest.raises(ConditionFailed):
        projects_table.create("ten_A", {**p, "name": "Other"}, again, T0 + 2)
    assert projects_table.get("ten_A", p["id"])["name"] == "Apollo"
    assert outbox_ids(data_backend) == {event.id}


def test_project_list_pages_newest_first_with_a_cursor(data_backend, clock, tenants_ab):
    made = []
    for n in range(5):
        p = project(T0 * 1000 + n, name=f"p{n}")
        projects_table.create("ten_A", p, project_event("created", "ten_A", p), T0)
        made.append(p["id"])
    other = project(T0 * 1000 + 9, name="other tenant")
    projects_table.create("ten_B", other, project_event("created", "ten_B", other), T0)

    pages, cursor = [], None
    for _ in range(5):
        items, cursor = projects_table.list_for_tenant("ten_A", 2, cursor)
        pages.append([i["id"] for i in items])
        assert all("tenantId" not in i for i in items)
        if cursor is None:
            break
    newest_first = list(reversed(made))
    assert pages[:3] == [newest_first[0:2], newest_first[2:4], newest_first[4:5]]
    assert cursor is None and len(pages) == 3

    items, cursor = projects_table.list_for_tenant("ten_A", 10, None)
    assert [i["id"] for i in items] == newest_first and cursor is None
    assert projects_table.list_for_tenant("ten_C", 10, None) == ([], None)


def test_project_replace_is_conditional_on_the_version_read(data_backend, clock, tenants_ab):
    p = project(T0 * 1000)
    created = project_event("created", "ten_A", p)
    projects_table.create("ten_A", p, created, T0)

    v2 = {**p, "name": "Apollo 2", "description": "now described", "updated_at": timeutil.iso(T0 + 5)}
    updated = project_event("updated", "ten_A", v2)
    projects_table.replace("ten_A", v2, p["updated_at"], updated, T0 + 5)
    assert projects_table.get("ten_A", p["id"]) == v2
    assert outbox_ids(data_backend) == {created.id, updated.id}

    # A writer that read version 1 loses: ConditionFailed, and neither its version nor its event lands.
    stale = {**p, "name": "Lost update", "updated_at": timeutil.iso(T0 + 6)}
    lost = project_event("updated", "ten_A", stale)
    with pytest.raises(ConditionFailed):
        projects_table.replace("ten_A", stale, p["updated_at"], lost, T0 + 6)
    assert projects_table.get("ten_A", p["id"]) == v2
    assert outbox_ids(data_backend) == {created.id, updated.id}

    # Replacing a project that does not exist (or another tenant's) creates nothing.
    ghost = project(T0 * 1000 + 1)
    with pytest.raises(ConditionFailed):
        projects_table.replace("ten_A", ghost, ghost["updated_at"], project_event("updated", "ten_A", ghost), T0)
    with pytest.raises(ConditionFailed):
        projects_table.replace("ten_B", v2, v2["updated_at"], project_event("updated", "ten_B", v2), T0)
    assert projects_table.get("ten_A", ghost["id"]) is None and projects_table.get("ten_B", p["id"]) is None
    assert len(data_backend.items(settings().projects_table)) == 1
    assert outbox_ids(data_backend) == {created.id, updated.id}


def test_project_concurrent_replacements_of_one_version_let_exactly_one_win(data_backend, clock, tenants_ab):
    needs_atomic_writes(data_backend)
    p = project(T0 * 1000)
    created = project_event("created", "ten_A", p)
    projects_table.create("ten_A", p, created, T0)
    versions = [{**p, "name": f"writer {i}", "updated_at": timeutil.iso(T0 + 1 + i)} for i in range(8)]
    evts = [project_event("updated", "ten_A", v) for v in versions]

    results = concurrently(8, lambda i: outcome(
        lambda: projects_table.replace("ten_A", versions[i], p["updated_at"], evts[i], T0 + 1)))
    assert sorted(results) == ["ConditionFailed"] * 7 + ["ok"]
    winner = results.index("ok")
    assert projects_table.get("ten_A", p["id"]) == stored_record(versions[winner])
    assert outbox_ids(data_backend) == {created.id, evts[winner].id}


def test_project_delete_is_conditional_on_the_version_read(data_backend, clock, tenants_ab):
    p = project(T0 * 1000)
    created = project_event("created", "ten_A", p)
    projects_table.create("ten_A", p, created, T0)

    for tenant_id, seen in (("ten_A", timeutil.iso(T0 + 99)), ("ten_B", p["updated_at"])):
        with pytest.raises(ConditionFailed):
            projects_table.delete(tenant_id, p["id"], seen, project_event("deleted", tenant_id, p), T0 + 1)
    assert projects_table.get("ten_A", p["id"]) == stored_record(p)
    assert outbox_ids(data_backend) == {created.id}

    deleted = project_event("deleted", "ten_A", {"id": p["id"]})
    projects_table.delete("ten_A", p["id"], p["updated_at"], deleted, T0 + 2)
    assert projects_table.get("ten_A", p["id"]) is None
    assert outbox_ids(data_backend) == {created.id, deleted.id}

    with pytest.raises(ConditionFailed):  # deleting twice: the second finds nothing
        projects_table.delete("ten_A", p["id"], p["updated_at"], project_event("deleted", "ten_A", p), T0 + 3)
    assert outbox_ids(data_backend) == {created.id, deleted.id}


# ---- API keys ------------------------------------------------------------------------------

def key_record(tenant_id: str, ms: int | None = None, expires_at: int | None = None, **extra) -> tuple[dict, str]:
    ms = T0 * 1000 if ms is None else ms
    secret_hash = secrets.token_hex(32)
    record = {
        "id": new_id("key", ms), "tenantId": tenant_id, "name": "CI deploys", "type": "ci",
        "environment": "Production", "scopes": ["keys:read", "projects:read"], "createdBy": "usr_x",
        "createdAt": ms // 1000, "expiresAt": expires_at, "hint": "svc_ci_...abcd",
        "secrets": [{"hash": secret_hash, "notAfter": expires_at}], **extra,
    }
    return record, secret_hash


def secret_item(backend, secret_hash: str) -> dict | None:
    return backend.item(settings().api_keys_table, {"pk": f"SECRET#{secret_hash}"})


def test_api_key_create_find_secret_and_get_with_the_tenant_check(data_backend, clock):
    record, secret_hash = key_record("ten_A")
    api_keys_table.create(record, secret_hash)
    expiring, expiring_hash = key_record("ten_A", T0 * 1000 + 1, expires_at=T0 + 86400)
    api_keys_table.create(expiring, expiring_hash)

    assert api_keys_table.find_secret(secret_hash) == {
        "keyId": record["id"], "tenantId": "ten_A", "scopes": record["scopes"], "type": "ci",
        "environment": "Production", "generation": 1}  # notAfter None is not stored: the secret does not end
    assert api_keys_table.find_secret(expiring_hash)["notAfter"] == T0 + 86400
    assert api_keys_table.find_secret("0" * 64) is None

    assert api_keys_table.get("ten_A", record["id"]) == stored_record(record)
    assert api_keys_table.get("ten_A", expiring["id"]) == stored_record(expiring)
    assert api_keys_table.get("ten_B", record["id"]) is None
    assert api_keys_table.get("ten_A", new_id("key", T0 * 1000)) is None

    # The same key id again: nothing of the second attempt is written (not even its secret).
    clash, clash_hash = key_record("ten_A")
    with pytest.raises(ConditionFailed):
        api_keys_table.create({**clash, "id": record["id"]}, clash_hash)
    assert secret_item(data_backend, clash_hash) is None
    assert api_keys_table.get("ten_A", record["id"]) == stored_record(record)
    # The same secret hash again (a collision) fails the same way.
    other, _ = key_record("ten_A", T0 * 1000 + 2)
    with pytest.raises(ConditionFailed):
        api_keys_table.create(other, secret_hash)
    assert api_keys_table.get("ten_A", other["id"]) is None
    assert len(data_backend.items(settings().api_keys_table)) == 4


def test_api_key_list_for_tenant_uses_the_index_newest_first_with_a_cursor(data_backend, clock):
    made = []
    for n in range(5):
        record, secret_hash = key_record("ten_A", T0 * 1000 + n)
        api_keys_table.create(record, secret_hash)
        made.append(record["id"])
    for n in range(2):
        api_keys_table.create(*key_record("ten_B", T0 * 1000 + 10 + n))

    pages, cursor = [], None
    for _ in range(5):
        items, cursor = api_keys_table.list_for_tenant("ten_A", 2, cursor)
        assert all("pk" not in i and i["tenantId"] == "ten_A" for i in items)  # keys only, never secrets
        pages.append([i["id"] for i in items])
        if cursor is None:
            break
    newest_first = list(reversed(made))
    assert pages == [newest_first[0:2], newest_first[2:4], newest_first[4:5]]

    items, cursor = api_keys_table.list_for_tenant("ten_B", 10, None)
    assert len(items) == 2 and cursor is None
    assert api_keys_table.list_for_tenant("ten_C", 10, None) == ([], None)


def test_api_key_touch_records_the_last_use_of_an_existing_key_only(data_backend, clock):
    record, secret_hash = key_record("ten_A")
    api_keys_table.create(record, secret_hash)
    assert api_keys_table.touch_due(api_keys_table.find_secret(secret_hash), T0)  # never used
    api_keys_table.touch(record["id"], secret_hash, T0 + 7, "198.51.100.7")
    stored = api_keys_table.get("ten_A", record["id"])
    assert (stored["lastUsedAt"], stored["lastUsedIp"]) == (T0 + 7, "198.51.100.7")
    secret = api_keys_table.find_secret(secret_hash)  # the copy authentication reads
    assert (secret["lastUsedAt"], secret["lastUsedIp"]) == (T0 + 7, "198.51.100.7")
    assert not api_keys_table.touch_due(secret, T0 + 7 + api_keys_table.LAST_USED_STEP - 1)
    assert api_keys_table.touch_due(secret, T0 + 7 + api_keys_table.LAST_USED_STEP)

    missing = new_id("key", T0 * 1000)
    with pytest.raises(Exception) as failure:
        api_keys_table.touch(missing, secret_hash, T0 + 8, "203.0.113.9")
    assert cancellation_reasons(failure.value)[0] == "ConditionalCheckFailed"
    assert data_backend.item(settings().api_keys_table, {"pk": f"KEY#{missing}"}) is None
    secret = api_keys_table.find_secret(secret_hash)
    assert (secret["lastUsedAt"], secret["lastUsedIp"]) == (T0 + 7, "198.51.100.7")  # all or nothing


def test_api_key_revoke_ends_live_secrets_and_marks_the_rate_limit_counter(data_backend, clock):
    record, first_hash = key_record("ten_A")
    api_keys_table.create(record, first_hash)
    # Two rotations: the first secret ends at T0 + 100, the second at T0 + 5000; a counter exists.
    second_hash, third_hash = secrets.token_hex(32), secrets.token_hex(32)
    record = api_keys_table.rotate(record, second_hash, "svc_ci_...bbbb", T0 + 100, T0 + 50)
    record = api_keys_table.rotate(record, third_hash, "svc_ci_...cccc", T0 + 5000, T0 + 60)
    assert api_keys_table.get("ten_A", record["id"]) == stored_record(record)
    assert rate_limits_table.count_request(record["id"], T0, 60) == (1, T0)

    now = T0 + 200
    api_keys_table.revoke(record, now)

    stored = api_keys_table.get("ten_A", record["id"])
    assert stored["revokedAt"] == now
    assert secret_item(data_backend, first_hash)["notAfter"] == T0 + 100  # already over: untouched
    assert secret_item(data_backend, second_hash)["notAfter"] == now
    assert secret_item(data_backend, third_hash)["notAfter"] == now
    counter = data_backend.item(settings().rate_limits_table, {"pk": record["id"]})
    assert counter["revokedAt"] == now and "ttl" not in counter  # kept for good
    with pytest.raises(CredentialRevoked):
        rate_limits_table.count_request(record["id"], T0 + 240, 60)

    # Revoking again, or as another tenant, fails and changes nothing.
    for attempt in (stored, {**stored, "revokedAt": None}, {**stored, "tenantId": "ten_B"}):
        with pytest.raises(ConditionFailed):
            api_keys_table.revoke({**attempt, "secrets": stored["secrets"]}, now + 50)
    assert api_keys_table.get("ten_A", record["id"])["revokedAt"] == now
    assert secret_item(data_backend, third_hash)["notAfter"] == now
    assert data_backend.item(settings().rate_limits_table, {"pk": record["id"]})["revokedAt"] == now


def test_api_key_revoke_without_a_counter_yet_creates_the_revoked_marker(data_backend, clock):
    record, secret_hash = key_record("ten_A", expires_at=T0 + 86400)
    api_keys_table.create(record, secret_hash)
    api_keys_table.revoke(record, T0 + 20)
    assert data_backend.item(settings().rate_limits_table, {"pk": record["id"]}) == {
        "pk": record["id"], "revokedAt": T0 + 20}
    assert secret_item(data_backend, secret_hash)["notAfter"] == T0 + 20
    with pytest.raises(CredentialRevoked):
        rate_limits_table.count_request(record["id"], T0, 60)


def test_api_key_rotate_swaps_secrets_on_the_list_it_read(data_backend, clock):
    record, first_hash = key_record("ten_A", expires_at=T0 + 30 * 86400)
    api_keys_table.create(record, first_hash)
    read = api_keys_table.get("ten_A", record["id"])

    second_hash = secrets.token_hex(32)
    updated = api_keys_table.rotate(read, second_hash, "svc_ci_...2222", T0 + 3600, T0 + 10)
    # Each new value keeps its hint (a key's earlier values are named by it while they still work).
    assert updated["secrets"] == [{"hash": second_hash, "notAfter": T0 + 30 * 86400, "hint": "svc_ci_...2222"},
                                  {"hash": first_hash, "notAfter": T0 + 3600}]
    assert api_keys_table.get("ten_A", record["id"]) == stored_record(updated)
    assert updated["hint"] == "svc_ci_...2222" and updated["rotatedAt"] == T0 + 10
    assert api_keys_table.find_secret(second_hash)["keyId"] == record["id"]
    assert api_keys_table.find_secret(second_hash)["notAfter"] == T0 + 30 * 86400
    assert api_keys_table.find_secret(first_hash)["notAfter"] == T0 + 3600

    # A concurrent rotation that read the same version loses, and writes nothing.
    lost_hash = secrets.token_hex(32)
    with pytest.raises(ConditionFailed):
        api_keys_table.rotate(read, lost_hash, "svc_ci_...lost", T0 + 60, T0 + 11)
    assert secret_item(data_backend, lost_hash) is None
    assert api_keys_table.get("ten_A", record["id"]) == stored_record(updated)
    assert api_keys_table.find_secret(first_hash)["notAfter"] == T0 + 3600

    # Rotating again after the first secret's end drops it from the list (it stays ended).
    third_hash = secrets.token_hex(32)
    again = api_keys_table.rotate(api_keys_table.get("ten_A", record["id"]), third_hash, "svc_ci_...3333",
                                  T0 + 8000, T0 + 7200)
    assert again["secrets"] == [{"hash": third_hash, "notAfter": T0 + 30 * 86400, "hint": "svc_ci_...3333"},
                                {"hash": second_hash, "notAfter": T0 + 8000, "hint": "svc_ci_...2222"}]
    assert api_keys_table.get("ten_A", record["id"]) == stored_record(again)
    assert api_keys_table.find_secret(first_hash)["notAfter"] == T0 + 3600


def test_api_key_rotate_ends_every_earlier_secret_by_the_new_overlap(data_backend, clock):
    record, first_hash = key_record("ten_A")
    api_keys_table.create(record, first_hash)
    second_hash, third_hash, fourth_hash = (secrets.token_hex(32) for _ in range(3))
    record = api_keys_table.rotate(record, second_hash, "svc_ci_...2222", T0 + 3600, T0)
    record = api_keys_table.rotate(record, third_hash, "svc_ci_...3333", T0 + 3610, T0 + 10)
    assert [s["notAfter"] for s in record["secrets"]] == [None, T0 + 3610, T0 + 3600]
    # A shorter overlap shortens the earlier ones' too, on the record and on each secret's own item.
    record = api_keys_table.rotate(record, fourth_hash, "svc_ci_...4444", T0 + 20, T0 + 20)
    assert record["secrets"] == [{"hash": fourth_hash, "notAfter": None, "hint": "svc_ci_...4444"}]
    assert api_keys_table.get("ten_A", record["id"]) == stored_record(record)
    assert [secret_item(data_backend, h)["notAfter"] for h in (first_hash, second_hash, third_hash)] == [T0 + 20] * 3
    assert "notAfter" not in secret_item(data_backend, fourth_hash)


def test_api_key_rotate_ending_earlier_secrets_now_marks_the_counter_for_cached_values(data_backend, clock):
    record, first_hash = key_record("ten_A")
    api_keys_table.create(record, first_hash)
    assert rate_limits_table.count_request(record["id"], T0, 60, generation=1) == (1, T0)
    record = api_keys_table.rotate(record, secrets.token_hex(32), "svc_ci_...2222", T0 + 3600, T0)
    assert record["generation"] == 2
    # An overlap leaves the counter unmarked: value 1 still counts.
    assert "valuesBefore" not in data_backend.item(settings().rate_limits_table, {"pk": record["id"]})
    assert rate_limits_table.count_request(record["id"], T0, 60, generation=1) == (2, T0)
    record = api_keys_table.rotate(record, secrets.token_hex(32), "svc_ci_...3333", T0 + 5, T0 + 5)
    counter = data_backend.item(settings().rate_limits_table, {"pk": record["id"]})
    assert counter["valuesBefore"] == 3 and counter["ttl"] >= T0 + 5 + 60
    for old in (1, 2):  # in the current window and in a new one
        for window in (T0, T0 + 60):
            with pytest.raises(CredentialRevoked):
                rate_limits_table.count_request(record["id"], window, 60, generation=old)
    assert rate_limits_table.count_request(record["id"], T0 + 60, 60, generation=3) == (1, T0 + 60)
    assert rate_limits_table.count_request(record["id"], T0 + 60, 60) == (2, T0 + 60)  # a count without a value


def test_api_key_concurrent_rotations_of_one_version_let_exactly_one_win(data_backend, clock):
    needs_atomic_writes(data_backend)
    record, first_hash = key_record("ten_A")
    api_keys_table.create(record, first_hash)
    read = api_keys_table.get("ten_A", record["id"])
    new_hashes = [secrets.token_hex(32) for _ in range(8)]

    results = concurrently(8, lambda i: outcome(
        lambda: api_keys_table.rotate(read, new_hashes[i], f"svc_ci_...{i:04d}", T0 + 600, T0 + 1)))
    assert sorted(results) == ["ConditionFailed"] * 7 + ["ok"]
    winner = new_hashes[results.index("ok")]
    stored = api_keys_table.get("ten_A", record["id"])
    assert stored["secrets"] == [{"hash": winner, "notAfter": None, "hint": f"svc_ci_...{new_hashes.index(winner):04d}"},
                                 {"hash": first_hash, "notAfter": T0 + 600}]
    assert [h for h in new_hashes if secret_item(data_backend, h) is not None] == [winner]


def test_api_key_rotate_refuses_a_revoked_or_foreign_key(data_backend, clock):
    record, secret_hash = key_record("ten_A")  # secrets carry notAfter None (a NULL in the list)
    api_keys_table.create(record, secret_hash)
    read = api_keys_table.get("ten_A", record["id"])
    with pytest.raises(ConditionFailed):
        api_keys_table.rotate({**read, "tenantId": "ten_B"}, secrets.token_hex(32), "h", T0 + 60, T0)
    api_keys_table.revoke(read, T0 + 5)
    lost_hash = secrets.token_hex(32)
    with pytest.raises(ConditionFailed):
        api_keys_table.rotate(read, lost_hash, "h", T0 + 60, T0 + 6)
    assert secret_item(data_backend, lost_hash) is None
    assert api_keys_table.get("ten_A", record["id"])["secrets"] == read["secrets"]


# ---- rate limits ---------------------------------------------------------------------------

def counter(backend, pk: str) -> dict | None:
    return backend.item(settings().rate_limits_table, {"pk": pk})


def test_rate_limit_counts_in_fixed_windows(data_backend, clock):
    assert rate_limits_table.count_request("key_A", T0, 60) == (1, T0)
    assert counter(data_backend, "key_A") == {"pk": "key_A", "windowStart": T0, "hits": 1, "ttl": T0 + 120}
    assert rate_limits_table.count_request("key_A", T0, 60) == (2, T0)
    assert rate_limits_table.count_request("key_A", T0, 60) == (3, T0)
    assert rate_limits_table.count_request("key_B", T0, 60) == (1, T0)  # each credential its own

    assert rate_limits_table.count_request("key_A", T0 + 60, 60) == (1, T0 + 60)  # the next window
    assert counter(data_backend, "key_A") == {"pk": "key_A", "windowStart": T0 + 60, "hits": 1,
                                              "ttl": T0 + 180}
    assert rate_limits_table.count_request("key_A", T0 + 60, 60) == (2, T0 + 60)


def test_rate_limit_adopts_a_newer_window_found_in_the_table(data_backend, clock):
    assert rate_limits_table.count_request("key_A", T0 + 60, 60) == (1, T0 + 60)  # a clock ahead
    assert rate_limits_table.count_request("key_A", T0, 60) == (2, T0 + 60)
    assert counter(data_backend, "key_A")["windowStart"] == T0 + 60
    assert counter(data_backend, "key_A")["hits"] == 2


def test_rate_limit_refuses_a_revoked_credential(data_backend, clock):
    transact([rate_limits_table.revoke_item("key_A", T0 + 0.7)])
    assert counter(data_backend, "key_A") == {"pk": "key_A", "revokedAt": T0}
    with pytest.raises(CredentialRevoked):
        rate_limits_table.count_request("key_A", T0, 60)
    assert counter(data_backend, "key_A") == {"pk": "key_A", "revokedAt": T0}  # no window started

    assert rate_limits_table.count_request("key_B", T0, 60) == (1, T0)
    transact([rate_limits_table.revoke_item("key_B", T0 + 5)])
    assert counter(data_backend, "key_B") == {"pk": "key_B", "windowStart": T0, "hits": 1, "revokedAt": T0 + 5}
    for window in (T0, T0 + 60):
        with pytest.raises(CredentialRevoked):
            rate_limits_table.count_request("key_B", window, 60)
    assert counter(data_backend, "key_B")["hits"] == 1


def test_rate_limit_count_is_exact_under_concurrency(data_backend, clock):
    needs_atomic_writes(data_backend)
    threads, per_thread = 8, 25
    bursts = concurrently(threads, lambda _: [rate_limits_table.count_request("key_A", T0, 60)
                                              for _ in range(per_thread)])
    answers = [a for burst in bursts for a in burst]
    assert {w for _, w in answers} == {T0}
    assert sorted(h for h, _ in answers) == list(range(1, threads * per_thread + 1))
    assert counter(data_backend, "key_A")["hits"] == threads * per_thread


# ---- tenants and users ---------------------------------------------------------------------

def test_create_tenant_with_owner_and_the_unique_email(data_backend, clock):
    made = create_tenant_with_owner(tenant_name="Acme", email="Ada@Example.com", password="correct horse 1",
                                    user_name="Ada")
    tenant, user = made["tenant"], made["user"]
    stamp = timeutil.iso(T0 + 10.5)
    assert tenant["created_at"] == user["created_at"] == stamp

    assert tenants_table.get(tenant["id"]) == {**tenant, "ownerId": user["id"], "updated_at": stamp,
                                               "welcomeGrant": True, **tenants_table.COUNTER_DEFAULTS}
    assert tenants_table.get("ten_missing") is None
    stored_user = users_table.get(user["id"])
    assert stored_user["passwordHash"].startswith("$argon2id$")
    assert {k: stored_user[k] for k in user} == user and "pk" not in stored_user
    # the user's first tenant: counted, and the one with the user's welcome credit
    assert (stored_user["tenantsCreated"], stored_user["welcomeCreditTenant"]) == (1, tenant["id"])
    assert users_table.get("usr_missing") is None
    assert data_backend.item(settings().users_table, {"pk": "EMAIL#ada@example.com", "sk": "EMAIL"}) == {
        "pk": "EMAIL#ada@example.com", "sk": "EMAIL", "userId": user["id"]}
    stored, memberships = users_table.with_memberships(user["id"])
    assert stored == stored_user
    assert [(m["tenantId"], m["role"]) for m in memberships] == [(tenant["id"], "owner")]
    outbox = data_backend.items(settings().outbox_table)
    assert sorted(e["type"] for e in outbox) == ["tenant.created", "user.created"]
    assert all(e["tenantId"] == tenant["id"] and e["ttl"] == T0 + 10 + WEEK for e in outbox)

    # The same address in another case: Conflict, and nothing at all is written.
    with pytest.raises(Conflict):
        create_tenant_with_owner(tenant_name="Other", email="ada@EXAMPLE.com", password="another pass 2",
                                 user_name="Ada Two")
    assert data_backend.items(settings().tenants_table) == [tenants_table.get(tenant["id"])]
    assert len(data_backend.items(settings().users_table)) == 3  # profile, e-mail, membership
    assert len(data_backend.items(settings().outbox_table)) == 2

    other = create_tenant_with_owner(tenant_name="Other", email="grace@example.com", password="x" * 12,
                                     user_name="Grace")
    assert other["tenant"]["id"] != tenant["id"]
    assert len(data_backend.items(settings().users_table)) == 6


def test_read_items_reads_several_tables_in_one_call_in_the_order_asked(data_backend, clock):
    from svc_core.data import billing_table
    from svc_core.data.common import read_items
    made = create_tenant_with_owner(tenant_name="Acme", email="ada@example.com", password="correct horse 1",
                                    user_name="Ada")
    tenant_id = made["tenant"]["id"]
    billing_table.write([billing_table.open_account(tenant_id, timeutil.iso(T0), None)])
    calls = []
    client = aws.client("dynamodb")
    client.meta.events.register("before-call.dynamodb", lambda model, **_: calls.append(model.name),
                                unique_id="count-read-items")
    try:
        asked = [billing_table.subscription_read(tenant_id), tenants_table.consistent_read(tenant_id),
                 tenants_table.consistent_read("ten_missing"), billing_table.balance_read(tenant_id)]
        subscription, tenant, missing, balance = read_items(asked)
    finally:
        client.meta.events.unregister("before-call.dynamodb", unique_id="count-read-items")
    assert calls == ["BatchGetItem"]
    assert subscription is None and missing is None
    assert tenant == tenants_table.get_consistent(tenant_id) and tenant["name"] == "Acme"
    assert balance == billing_table.balance(tenant_id) and balance["balance"] == 0 and "pk" not in balance


def test_secrets_name_claims_list_and_version_guards(data_backend, clock):
    from svc_core.data import secrets_table
    tenant, sealed = ids.new_id("ten"), {"alg": "test", "ciphertext": "AAAA"}
    made = [new_id("sec", (T0 + n) * 1000) for n in range(3)]
    for n, secret_id in enumerate(made):
        secrets_table.create(tenant, {"id": secret_id, "name": f"Key{n}", "description": None, "version": 1,
                                      "created_at": "t", "updated_at": f"t{n}", "sealed": sealed})
    with pytest.raises(ConditionFailed):  # the name is claimed whatever its case; nothing is written
        secrets_table.create(tenant, {"id": new_id("sec", T0 * 1000), "name": "KEY0", "version": 1,
                                      "created_at": "t", "updated_at": "t", "sealed": sealed})
    assert len(data_backend.items(settings().secrets_table)) == 6
    assert secrets_table.id_of_name(tenant, "key0") == made[0]
    page, cursor = secrets_table.list_for_tenant(tenant, 2, None)
    assert [s["id"] for s in page] == made[:0:-1] and "sealed" not in page[0]  # newest first, no value
    rest, end = secrets_table.list_for_tenant(tenant, 2, cursor)
    assert [s["id"] for s in rest] == made[:1] and end is None
    record = secrets_table.get(tenant, made[0])
    assert record["sealed"] == sealed and "description" not in record and "sk" not in record

    secrets_table.replace(tenant, {**record, "version": 2, "updated_at": "u"}, 1, "t0")
    with pytest.raises(ConditionFailed):  # the version read is gone
        secrets_table.replace(tenant, {**record, "version": 2, "updated_at": "v"}, 1, "t0")
    with pytest.raises(ConditionFailed):
        secrets_table.delete(tenant, made[0], "Key0", 1, "t0")
    assert secrets_table.get(tenant, made[0])["version"] == 2
    secrets_table.delete(tenant, made[0], "Key0", 2, "u")
    assert secrets_table.get(tenant, made[0]) is None and secrets_table.id_of_name(tenant, "KEY0") is None
    assert len(data_backend.items(settings().secrets_table)) == 4
    assert secrets_table.list_for_tenant(ids.new_id("ten"), 10, None) == ([], None)
