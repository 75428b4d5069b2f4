"""The rules of a tenant's copy in its secondary cell (svc_core/domain/tenant_replicas.py): which
cell a change is carried to, what is carried (and what never is: another cell's copy, a table a move
does not copy), the order kept when a change fails, and the failovers refused. The copies themselves
run end to end in tests/e2e/test_secondary_region.py."""

from __future__ import annotations

import json

import pytest

from svc_core.adapters.dynamo import to_item
from svc_core.data import cell_tables, directory_table
from svc_core.data.cell_tables import Place
from svc_core.domain import tenant_replicas as replicas
from svc_core.platform import config

T = "ten_1"
CELLS = {"us-east-1": "https://us.example.com", "eu-central-1": "https://eu.example.com",
         "ap-northeast-1": "https://ap.example.com"}
EU = Place("eu-central-1", {}, "eu-bucket", "eu-key")


@pytest.fixture
def cell(monkeypatch):
    """This cell us-east-1 of three; the directory's entries as the test sets them; what was written
    into the secondary recorded."""
    monkeypatch.setenv("CELLS", json.dumps(CELLS))
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    config.settings.cache_clear()
    homes: dict[str, dict] = {}
    reads: list[str] = []
    written: list[tuple[str, str, str, dict]] = []

    def tenant_home(tenant_id):
        reads.append(tenant_id)
        return homes.get(tenant_id)
    monkeypatch.setattr(directory_table, "tenant_home", tenant_home)
    monkeypatch.setattr(replicas, "_peer", lambda region: Place(region, {}, f"{region}-bucket", "key"))
    monkeypatch.setattr(cell_tables, "put_all", lambda place, table, items: written.extend(
        ("put", place.region, table, item) for item in items))
    monkeypatch.setattr(cell_tables, "delete_all", lambda place, table, keys: written.extend(
        ("delete", place.region, table, key) for key in keys))
    yield homes, reads, written
    config.settings.cache_clear()


def _arn(table: str) -> str:
    return f"arn:aws:dynamodb:us-east-1:123456789012:table/{cell_tables.here().tables[table]}/stream/2026-11-27T00:00:00.000"


def _record(table: str, event: str, new: dict | None, old: dict | None = None, sequence: str = "1") -> dict:
    image = new or old
    keys = {k: image[k] for k in ("tenantId", "id") if k in image}
    change = {"Keys": to_item(keys), "SequenceNumber": sequence, "ApproximateCreationDateTime": 1.0}
    if new is not None:
        change["NewImage"] = to_item(new)
    if old is not None:
        change["OldImage"] = to_item(old)
    return {"eventName": event, "eventSource": "aws:dynamodb", "eventSourceARN": _arn(table), "dynamodb": change}


@pytest.mark.parametrize(("home", "carried_to"), [
    ({"homeRegion": "us-east-1", "secondaryRegion": "eu-central-1"}, "eu-central-1"),
    ({"homeRegion": "us-east-1", "secondaryRegion": None}, None),              # no secondary
    ({"homeRegion": "eu-central-1", "secondaryRegion": "us-east-1"}, None),    # this cell holds the copy
    ({"homeRegion": "us-east-1", "secondaryRegion": "us-east-1"}, None),
    ({"homeRegion": "us-east-1", "secondaryRegion": "sa-east-1"}, None),       # a region without a cell
    (None, None),                                                              # not in the directory
])
def test_a_change_goes_to_the_secondary_only_from_the_tenants_home(cell, home, carried_to):
    assert replicas.secondary_of(home) == carried_to


def test_a_project_written_and_deleted_in_the_home_is_written_and_deleted_in_the_secondary(cell):
    homes, _, written = cell
    homes[T] = {"homeRegion": "us-east-1", "secondaryRegion": "eu-central-1"}
    project = {"tenantId": T, "id": "proj_1", "name": "A"}
    ages, failed = replicas.carry_records([
        _record("ProjectsTable", "INSERT", project, sequence="1"),
        _record("ProjectsTable", "MODIFY", {**project, "name": "B"}, project, sequence="2"),
        _record("ProjectsTable", "REMOVE", None, {**project, "name": "B"}, sequence="3"),
    ])
    assert failed is None and len(ages) == 3
    assert written == [("put", "eu-central-1", "ProjectsTable", to_item(project)),
                       ("put", "eu-central-1", "ProjectsTable", to_item({**project, "name": "B"})),
                       ("delete", "eu-central-1", "ProjectsTable", to_item({"tenantId": T, "id": "proj_1"}))]


def test_other_tenants_changes_and_tables_a_move_does_not_copy_stay_here(cell):
    homes, _, written = cell
    homes[T] = {"homeRegion": "us-east-1", "secondaryRegion": "eu-central-1"}
    homes["ten_2"] = {"homeRegion": "us-east-1"}
    ages, failed = replicas.carry_records([
        _record("ProjectsTable", "INSERT", {"tenantId": "ten_2", "id": "proj_2"}),
        _record("OutboxTable", "INSERT", {"tenantId": T, "id": "evt_1"}),   # published by the home only
        _record("RateLimitsTable", "INSERT", {"tenantId": T, "id": "x"}),
    ])
    assert (ages, failed, written) == ([], None, [])


def test_a_deliverys_wait_names_this_cells_queue_and_is_never_carried_its_attempt_is(cell):
    homes, _, written = cell
    homes[T] = {"homeRegion": "us-east-1", "secondaryRegion": "eu-central-1"}
    wait = {"webhookId": "whk_1", "attemptKey": "!waiting#evt_1", "tenantId": T, "receiptHandle": "handle"}
    attempt = {"webhookId": "whk_1", "attemptKey": "0001#evt_1#01", "tenantId": T, "outcome": "retrying"}
    ages, failed = replicas.carry_records([_record("WebhookDeliveriesTable", "INSERT", wait),
                                           _record("WebhookDeliveriesTable", "REMOVE", None, wait, sequence="2"),
                                           _record("WebhookDeliveriesTable", "INSERT", attempt, sequence="3")])
    assert failed is None and len(ages) == 1
    assert written == [("put", "eu-central-1", "WebhookDeliveriesTable", to_item(attempt))]


def test_the_tenant_item_is_marked_as_the_copy_and_a_copy_is_never_carried_on(cell):
    homes, _, written = cell
    homes[T] = {"homeRegion": "us-east-1", "secondaryRegion": "eu-central-1"}
    tenant = {"id": T, "name": "Acme", "plan": "growth"}
    replicas.carry_records([_record("TenantsTable", "MODIFY", tenant, tenant)])
    assert [w[3]["move"] for w in written] == [to_item({"m": {"phase": "replica", "homeRegion": "us-east-1"}})["m"]]
    written.clear()
    # The copy another cell carried here (after a failover, before this cell's directory says so).
    copy = {**tenant, "move": {"phase": "replica", "homeRegion": "eu-central-1"}}
    assert replicas.carry_records([_record("TenantsTable", "MODIFY", copy, tenant)]) == ([], None)
    assert written == []


def test_a_failed_change_stops_the_batch_there_so_no_later_change_of_the_item_overtakes_it(cell, monkeypatch):
    homes, _, written = cell
    homes[T] = {"homeRegion": "us-east-1", "secondaryRegion": "eu-central-1"}
    calls = []

    def flaky(place, table, items):
        calls.append(items)
        if len(calls) == 2:
            raise ConnectionError("the secondary did not answer")
        written.extend(("put", place.region, table, item) for item in items)
    monkeypatch.setattr(cell_tables, "put_all", flaky)
    records = [_record("ProjectsTable", "INSERT", {"tenantId": T, "id": f"proj_{n}"}, sequence=str(n)) for n in (1, 2, 3)]
    ages, failed = replicas.carry_records(records)
    assert failed == "2" and len(ages) == 1
    assert [w[3]["id"]["S"] for w in written] == ["proj_1"]   # proj_3 waits for proj_2


def test_the_directory_is_read_once_per_tenant_and_batch_never_kept_across_batches(cell):
    homes, reads, _ = cell
    homes[T] = {"homeRegion": "us-east-1", "secondaryRegion": "eu-central-1"}
    batch = [_record("ProjectsTable", "INSERT", {"tenantId": T, "id": f"proj_{n}"}) for n in range(5)]
    replicas.carry_records(batch)
    assert reads == [T]
    homes[T] = {"homeRegion": "eu-central-1", "secondaryRegion": "us-east-1"}   # failed over meanwhile
    assert replicas.carry_records(batch) == ([], None)
    assert reads == [T, T]


@pytest.mark.parametrize(("home", "reason"), [
    (None, "is not in the directory"),
    ({"homeRegion": "eu-central-1", "secondaryRegion": "ap-northeast-1"}, "is not the secondary region"),
    ({"homeRegion": "eu-central-1", "secondaryRegion": None}, "is not the secondary region"),
])
def test_a_failover_is_refused_where_this_cell_is_not_the_tenants_secondary(cell, monkeypatch, home, reason):
    homes, _, written = cell
    if home is not None:
        homes[T] = home
    monkeypatch.setattr(directory_table, "tenant_replica", lambda tenant_id: None)
    with pytest.raises(replicas.NotSecondary, match=reason):
        replicas.failover(T)
    assert written == []


def test_a_failover_without_a_copy_here_is_refused_before_the_directory_changes(cell, monkeypatch):
    homes, _, written = cell
    homes[T] = {"homeRegion": "eu-central-1", "secondaryRegion": "us-east-1"}
    monkeypatch.setattr(directory_table, "tenant_replica", lambda tenant_id: None)
    monkeypatch.setattr(cell_tables, "get", lambda place, table, key: None)
    with pytest.raises(replicas.NotSecondary, match="holds no copy"):
        replicas.failover(T)
    assert written == []


def test_only_the_tenants_files_are_carried_and_never_the_audit_exports(cell, monkeypatch):
    homes, _, _ = cell
    homes[T] = {"homeRegion": "us-east-1", "secondaryRegion": "eu-central-1"}
    copied, deleted = [], []
    present = {f"tenants/{T}/projects/p/files/a.txt"}
    monkeypatch.setattr(cell_tables, "has_object", lambda place, key: key in present)
    monkeypatch.setattr(cell_tables, "copy_object", lambda source, target, key: copied.append((target.region, key)))
    monkeypatch.setattr(cell_tables, "delete_object", lambda place, key: deleted.append((place.region, key)))
    assert replicas.carry_object(f"tenants/{T}/projects/p/files/a.txt")
    assert replicas.carry_object(f"tenants/{T}/projects/p/files/gone.txt")
    assert not replicas.carry_object(f"audit-exports/{T}/aud_1.jsonl")
    assert not replicas.carry_object("tenants/ten_2/projects/p/files/a.txt")   # not in the directory
    assert copied == [("eu-central-1", f"tenants/{T}/projects/p/files/a.txt")]
    assert deleted == [("eu-central-1", f"tenants/{T}/projects/p/files/gone.txt")]


class _Sync:
    """A seed's copy in which one table's copy holds an older read of an item until it is copied again."""

    def __init__(self, stale: set[str]) -> None:
        self.stale, self.synced = set(stale), []

    def verify_table(self, table):
        return table not in self.stale

    def sync_table(self, table):
        self.synced.append(table)
        self.stale.discard(table)

    def files_equal(self):
        return "files" not in self.stale

    def sync_files(self):
        self.synced.append("files")
        self.stale.discard("files")


def test_what_a_seed_finds_unequal_is_copied_again_from_a_fresh_read_not_only_reported(monkeypatch):
    monkeypatch.setattr(replicas.time, "sleep", lambda seconds: None)
    sync = _Sync({"ProjectsTable", "files"})
    assert replicas._differing(sync) == []
    assert sync.synced == ["ProjectsTable", "files"]
    assert replicas._differing(_Sync(set())) == []


def test_a_table_that_stays_unequal_is_named():
    class Stubborn(_Sync):
        def sync_table(self, table):
            self.synced.append(table)   # copied, and changed again meanwhile
    sync = Stubborn({"UsageTable"})
    assert replicas._differing(sync, pause=0) == ["UsageTable"]
    assert sync.synced == ["UsageTable", "UsageTable"]
