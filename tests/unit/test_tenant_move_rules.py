"""The pure parts of a move between cells (svc_core/domain/tenant_moves.py): whose an item is, what a
copy must keep equal (an item's digest), what differs between two cells' copies, the order of the
tables, and the admission of a moving tenant's requests (svc_core/http/api.py)."""

from __future__ import annotations

import pytest

from svc_core.adapters.dynamo import to_item
from svc_core.contracts.tenant_items import TABLE_RULES
from svc_core.domain import tenant_moves as moves

T = "ten_1"


def test_every_table_is_copied_or_named_as_not_copied_and_the_tenant_item_goes_first_and_is_deleted_last():
    assert sorted([*moves.COPIED, *moves.NOT_COPIED]) == sorted(TABLE_RULES)
    assert moves.COPIED[0] == "TenantsTable" and moves.COPIED[-1] == "WebhookDeliveriesTable"
    assert moves.COPIED.index("WebhooksTable") < moves.COPIED.index("WebhookDeliveriesTable")
    assert moves.DELETED[-1] == "TenantsTable" and "OutboxTable" in moves.DELETED
    assert "OutboxTable" not in moves.COPIED   # the old cell publishes its events; a copy would publish them again


@pytest.mark.parametrize(("table", "item", "webhooks", "mine"), [
    ("ProjectsTable", {"tenantId": T, "id": "prj_1"}, set(), True),
    ("ProjectsTable", {"tenantId": "ten_2", "id": "prj_1"}, set(), False),
    ("ChatMessagesTable", {"sessionKey": f"{T}#chs_1", "id": "m1"}, set(), True),
    ("UsersTable", {"pk": "USER#u1", "sk": f"MEMBER#{T}", "tenantId": T}, set(), True),
    ("UsersTable", {"pk": "USER#u1", "sk": "PROFILE"}, set(), False),   # the account stays in its cell
    ("WebhookDeliveriesTable", {"webhookId": "wh_1", "attemptKey": "!delivered#e1"}, {"wh_1"}, True),
    ("WebhookDeliveriesTable", {"webhookId": "wh_2", "attemptKey": "!delivered#e1"}, {"wh_1"}, False),
    ("TenantsTable", {"id": T}, set(), True),
])
def test_an_item_is_the_tenants_by_its_tables_rule(table, item, webhooks, mine):
    assert moves.owns(table, T, webhooks)(to_item(item)) is mine


SEALED = {"alg": "AES-256-GCM+KMS", "encryptedKey": "a2V5LWhlcmU=", "nonce": "bm9uY2U=", "ciphertext": "c2VjcmV0"}


def test_a_copy_whose_data_key_was_sealed_again_has_the_same_digest_and_a_changed_value_does_not():
    item = {"tenantId": T, "sk": "SECRET#sec_1", "id": "sec_1", "version": 1, "sealed": SEALED}
    rewrapped = {**item, "sealed": {**SEALED, "encryptedKey": "b3RoZXIta2V5"}}
    changed = {**item, "sealed": {**SEALED, "ciphertext": "b3RoZXI="}}
    digest = lambda record: moves.digest("SecretsTable", to_item(record), "eu-central-1")  # noqa: E731
    assert digest(item) == digest(rewrapped)
    assert digest(item) != digest(changed)
    assert digest(item) != digest({**item, "version": 2})


def test_the_tenant_items_move_marks_and_new_home_are_not_differences():
    old = {"id": T, "plan": "free", "homeRegion": "us-east-1", "move": {"phase": "frozen"},
           "regionPreferences": {"primaryRegion": "us-east-1", "complianceLevel": "standard"}}
    new = {**old, "homeRegion": "eu-central-1", "move": {"phase": "arriving"},
           "regionPreferences": {"primaryRegion": "eu-central-1", "complianceLevel": "standard"}}
    digest = lambda record: moves.digest("TenantsTable", to_item(record), "eu-central-1")  # noqa: E731
    assert digest(old) == digest(new)
    assert digest(old) != digest({**new, "plan": "pro"})


def test_differences_copy_what_is_missing_or_changed_and_delete_what_the_source_no_longer_has():
    source = {"a": "1", "b": "2", "c": "3"}
    target = {"a": "1", "b": "x", "d": "4"}
    assert moves.differences(source, target) == (["b", "c"], ["d"])
    assert moves.differences(source, dict(source)) == ([], [])
    assert moves.checksum(source) == moves.checksum(dict(reversed(list(source.items()))))
    assert moves.checksum(source) != moves.checksum(target)


class _Sleeps:
    def __init__(self, clock):
        self.clock, self.slept = clock, []

    def __call__(self, seconds):
        self.slept.append(seconds)
        self.clock.now += seconds


class _Clock:
    now = 0.0

    def __call__(self):
        return self.now


def test_the_outbox_wait_ends_when_every_event_is_published_and_fails_past_its_bound(monkeypatch):
    clock = _Clock()
    sleeps = _Sleeps(clock)
    mover = moves.Mover({"tenantId": T, "status": "switching"}, None, None, sleep=sleeps, clock=clock)
    pending = [["e1", "e2"], ["e2"], []]
    monkeypatch.setattr(mover, "unpublished", lambda: pending.pop(0))
    mover.wait_for_outbox()
    assert sleeps.slept == [0.5, 0.5] and pending == []
    monkeypatch.setattr(mover, "unpublished", lambda: ["e3"])
    with pytest.raises(RuntimeError, match="1 events of the tenant were not published"):
        mover.wait_for_outbox()


def test_a_moving_tenants_write_is_refused_while_frozen_and_its_reads_go_on(monkeypatch):
    from svc_core.http import api
    from svc_core.platform.errors import ServiceUnavailable
    monkeypatch.setattr(api.cell_routing, "tenant", lambda tenant_id: None)   # homed here still
    for method in ("GET", "HEAD"):
        api._check_move(T, "frozen", method)
    with pytest.raises(ServiceUnavailable) as refused:
        api._check_move(T, "frozen", "PATCH")
    assert refused.value.details["reason"] == "tenant_moving" and refused.value.headers["Retry-After"]
    api._check_move(T, "arriving", "POST")   # the new cell's copy once the directory homes it there


def test_a_moving_tenant_homed_elsewhere_is_sent_there_before_anything_else(monkeypatch):
    from svc_core.http import api
    from svc_core.platform.errors import WrongRegion

    def elsewhere(tenant_id):
        raise WrongRegion("eu-central-1", "https://eu.example", tenantId=tenant_id)
    monkeypatch.setattr(api.cell_routing, "tenant", elsewhere)
    for phase, method in (("moved", "GET"), ("arriving", "GET"), ("frozen", "POST")):
        with pytest.raises(WrongRegion):
            api._check_move(T, phase, method)


class _Directory:
    """The move's item as the worker's run reads, claims and saves it."""

    def __init__(self, move):
        self.move, self.saved = move, []

    def tenant_move(self, tenant_id):
        return dict(self.move) if self.move else None

    def claim_tenant_move(self, tenant_id, now_ms, until_ms):
        if (self.move.get("leaseUntil") or 0) >= now_ms:
            return False
        self.move["leaseUntil"] = until_ms
        return True

    def save_tenant_move(self, tenant_id, move):
        self.move = {k: v for k, v in move.items() if v is not None}
        self.saved.append(dict(self.move))


@pytest.fixture
def worker(monkeypatch):
    directory = _Directory({"tenantId": T, "status": "copying", "fromRegion": "us-east-1", "toRegion": "eu-central-1"})
    monkeypatch.setattr(moves, "directory_table", directory)
    monkeypatch.setattr(moves.cells, "here", lambda: "us-east-1")
    monkeypatch.setattr(moves.cell_tables, "here", lambda: None)
    monkeypatch.setattr(moves, "peer", lambda region: None)
    given_up = []
    monkeypatch.setattr(moves.Mover, "give_up", lambda self: (given_up.append(True), self.save(status="failed")))
    return directory, given_up


def test_a_failed_run_records_its_error_and_lets_the_next_run_in_and_the_fifth_gives_the_move_up(worker, monkeypatch):
    directory, given_up = worker

    def fails(self):
        self.save(runs=int(self.move.get("runs") or 0) + 1)
        raise RuntimeError("the other cell did not answer")
    monkeypatch.setattr(moves.Mover, "run", fails)
    for attempt in range(1, moves.MAX_ATTEMPTS):
        with pytest.raises(RuntimeError):
            moves.run(T)
        assert directory.move["attempts"] == attempt and "did not answer" in directory.move["error"]
        assert "leaseUntil" not in directory.move and not given_up   # the next run may take it at once
    assert moves.run(T) == "failed" and given_up and directory.move["status"] == "failed"
    assert moves.run(T) == "failed"   # a late message finds it over


def test_a_run_leaves_a_move_another_run_holds_alone(worker, monkeypatch):
    directory, _ = worker
    directory.move["leaseUntil"] = 10 ** 15   # held, far in the future
    monkeypatch.setattr(moves.Mover, "run", lambda self: pytest.fail("two runs of one move"))
    assert moves.run(T) == "running"
