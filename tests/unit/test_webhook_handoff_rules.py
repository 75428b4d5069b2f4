"""A moved tenant's webhook deliveries, the pure parts: a delivery carried to another cell keeps its
attempt numbers and its schedule (svc_core/domain/webhook_delivery.py: attempts_made, carried); its
message says so on the wire; the move's clean-up brings the waits back, carries dead letters and adds
what the old cell recorded after the switch without deleting anything of the new cell's
(svc_core/domain/tenant_moves.py), and waits first for every run that began before the switch."""

from __future__ import annotations

import json

import pytest

from devstack.template import load
from svc_core.adapters.dynamo import to_item
from svc_core.contracts.events import Event
from svc_core.data import cell_queues
from svc_core.data.cell_queues import Received
from svc_core.data.webhook_delivery_queue import DeliveryMessage, MessageInvalid, delivery_message
from svc_core.domain import tenant_moves as moves
from svc_core.domain import webhook_delivery as wd
from svc_core.platform.config import settings

EVENT = {"id": "evt_1", "type": "project.created", "timestamp": "2026-11-25T10:00:00.000Z", "tenantId": "ten_1",
         "data": {"id": "proj_1"}}
NOW = 1_800_000_000.0
T = "ten_1"


def message(**fields) -> DeliveryMessage:
    import dataclasses
    return dataclasses.replace(delivery_message(Event.of(EVENT), "whk_1"), **fields)


def test_a_fresh_delivery_numbers_its_attempts_by_its_receives():
    fresh = message()
    assert [wd.attempts_made(fresh, n) + 1 for n in (1, 2, 3)] == [1, 2, 3]


def test_a_delivery_carried_after_three_attempts_makes_its_fourth_when_due_and_numbers_on():
    onward, delay = wd.carried(message(), 3, NOW + 200.2, NOW)
    assert (onward.attempts, onward.dueAt, onward.waitFirst, delay) == (3, int(NOW) + 201, False, 201)
    # SQS hands it over once its delay is over: that receive is attempt 4, the next ones 5 and 6.
    assert [wd.attempts_made(onward, n) + 1 for n in (1, 2, 3)] == [4, 5, 6]
    assert DeliveryMessage.of(onward.to_json()) == onward


def test_a_wait_longer_than_sqs_delays_is_the_first_receives_which_makes_no_attempt():
    onward, delay = wd.carried(message(), 5, NOW + 5 * 3600, NOW)
    assert (onward.attempts, onward.dueAt, onward.waitFirst, delay) == (5, int(NOW) + 5 * 3600, True, 900)
    assert wd.attempts_made(onward, 1) == 5            # it only waits: still five made
    assert [wd.attempts_made(onward, n) + 1 for n in (2, 3)] == [6, 7]


def test_a_delivery_due_already_goes_at_once_without_a_due_time():
    onward, delay = wd.carried(message(), 2, NOW - 30, NOW)
    assert (onward.attempts, onward.dueAt, onward.waitFirst, delay) == (2, None, False, 0)
    assert json.loads(onward.to_json())["attempts"] == 2 and "dueAt" not in json.loads(onward.to_json())


def test_the_carried_fields_are_on_the_wire_only_when_set_and_checked():
    assert set(json.loads(message().to_json())) == {"event", "webhookId", "tenantId"}
    wire = json.loads(message(attempts=1, dueAt=12, waitFirst=True).to_json())
    assert (wire["attempts"], wire["dueAt"], wire["waitFirst"]) == (1, 12, True)
    base = {"event": EVENT, "webhookId": "whk_1", "tenantId": T}
    for bad in ({"attempts": -1}, {"attempts": True}, {"attempts": "2"}, {"dueAt": 1.5}, {"waitFirst": True},
                {"waitFirst": "yes", "dueAt": 3}):
        with pytest.raises(MessageInvalid):
            DeliveryMessage.of(json.dumps({**base, **bad}))


def test_a_dead_letter_names_its_tenant_by_its_queue_and_anything_else_is_left_alone():
    delivery = message().to_json()
    step = json.dumps({"replayStep": {"replayId": "rpl_1", "webhookId": "whk_1", "tenantId": T, "position": "start"}})
    envelope = json.dumps({"source": "svc.api", "detail-type": "project.created", "detail": EVENT})
    assert moves.message_tenant(cell_queues.DELIVERY_DEAD_LETTERS, delivery) == T
    assert moves.message_tenant(cell_queues.DELIVERY_DEAD_LETTERS, step) == T
    assert moves.message_tenant(cell_queues.EVENT_DEAD_LETTERS, envelope) == T
    for queue, body in ((cell_queues.EVENT_DEAD_LETTERS, delivery), (cell_queues.DELIVERY_DEAD_LETTERS, "not json"),
                        (cell_queues.DELIVERY_DEAD_LETTERS, "[1]")):
        assert moves.message_tenant(queue, body) is None


def test_a_deliverys_wait_is_the_cells_own_and_no_copy_carries_it():
    wait = to_item({"webhookId": "whk_1", "attemptKey": "!waiting#evt_1", "tenantId": T, "receiptHandle": "h"})
    mark = to_item({"webhookId": "whk_1", "attemptKey": "!delivered#evt_1", "state": "delivered"})
    assert moves.cell_local("WebhookDeliveriesTable", wait)
    assert not moves.cell_local("WebhookDeliveriesTable", mark) and not moves.cell_local("ProjectsTable", wait)


def test_the_grace_after_the_switch_outlasts_every_function_that_handles_webhook_messages():
    resources = load()["Resources"]
    default = load()["Globals"]["Function"]["Timeout"]
    for function in ("WebhookDeliveryFunction", "WebhookFanoutFunction"):
        assert settings().tenant_move_delivery_grace_seconds >= resources[function]["Properties"].get("Timeout", default)
    move = resources["TenantMoveFunction"]["Properties"]["Timeout"]
    assert settings().tenant_move_delivery_grace_seconds + settings().tenant_move_delivery_drain_seconds < move


# ---- the clean-up's steps, over fakes of the cells ------------------------------------------------

class _Clock:
    def __init__(self):
        self.now, self.slept = 0.0, []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def mover():
    clock = _Clock()
    made = moves.Mover({"tenantId": T, "status": "cleaning"}, None, None, sleep=clock.sleep, clock=clock)
    made.clock_ = clock
    return made


def test_the_waits_are_brought_back_once_each_until_none_is_left_and_a_stale_handle_is_not_waited_for(mover,
                                                                                                        monkeypatch):
    rounds = [({"a": {"receiptHandle": "ha"}, "b": {"receiptHandle": "hb"}, "c": {"receiptHandle": "gone"}}, 1),
              ({"a": {"receiptHandle": "ha"}, "c": {"receiptHandle": "gone"}}, 0),
              ({"c": {"receiptHandle": "gone"}}, 0)]
    monkeypatch.setattr(mover, "deliveries_here", lambda: rounds.pop(0))
    released = []
    monkeypatch.setattr(moves.cell_queues, "release",
                        lambda place, queue, handle: released.append((queue, handle)) or handle != "gone")
    assert mover.send_deliveries_on() == 2
    assert released == [("WebhookDeliveryQueue", "ha"), ("WebhookDeliveryQueue", "hb"), ("WebhookDeliveryQueue", "gone")]
    assert rounds == [] and mover.clock_.slept == [1.0, 1.0]


def test_deliveries_that_are_never_sent_on_fail_the_run_rather_than_say_done(mover, monkeypatch):
    monkeypatch.setattr(mover, "deliveries_here", lambda: ({"a": {"receiptHandle": "ha"}}, 0))
    monkeypatch.setattr(moves.cell_queues, "release", lambda place, queue, handle: True)
    with pytest.raises(RuntimeError, match="1 deliveries of the tenant still wait in the old cell"):
        mover.send_deliveries_on()
    assert mover.clock_.now > settings().tenant_move_delivery_drain_seconds


def test_the_tenants_dead_letters_go_to_the_new_cell_and_anothers_are_left_visible_again(mover, monkeypatch):
    mine = message().to_json()
    theirs = message(tenantId="ten_2").to_json()
    envelope = json.dumps({"detail": EVENT})
    queued = {cell_queues.DELIVERY_DEAD_LETTERS: [Received(mine, "h1"), Received(theirs, "h2")],
              cell_queues.EVENT_DEAD_LETTERS: [Received(envelope, "h3"), Received("garbage", "h4")]}
    calls = []
    mover.source, mover.target = "old", "new"
    monkeypatch.setattr(moves.cell_queues, "receive_all", lambda place, queue, hold: iter(queued[queue]))
    monkeypatch.setattr(moves.cell_queues, "send", lambda place, queue, body: calls.append(("send", place, queue, body)))
    monkeypatch.setattr(moves.cell_queues, "delete", lambda place, queue, h: calls.append(("delete", place, queue, h)))
    monkeypatch.setattr(moves.cell_queues, "release", lambda place, queue, h: calls.append(("release", place, queue, h)))
    assert mover.carry_dead_letters() == 2
    assert calls == [("send", "new", cell_queues.DELIVERY_DEAD_LETTERS, mine),
                     ("delete", "old", cell_queues.DELIVERY_DEAD_LETTERS, "h1"),
                     ("release", "old", cell_queues.DELIVERY_DEAD_LETTERS, "h2"),
                     ("send", "new", cell_queues.EVENT_DEAD_LETTERS, envelope),
                     ("delete", "old", cell_queues.EVENT_DEAD_LETTERS, "h3"),
                     ("release", "old", cell_queues.EVENT_DEAD_LETTERS, "h4")]


def test_the_sweep_adds_what_the_new_cell_lacks_and_delivered_marks_and_deletes_nothing(mover, monkeypatch):
    def raw(key, **fields):
        return to_item({"webhookId": "whk_1", "attemptKey": key, **fields})
    old = {"attempt-late": ("d1", raw("0001#evt_1#02")),
           "both-same": ("d2", raw("0002#evt_2#01")),
           "replay-old": ("d3", raw("!replay#rpl_1", delivered=1)),
           "mark-delivered": ("d4", raw("!delivered#evt_3", state="delivered")),
           "mark-equal": ("d5", raw("!delivered#evt_4", state="delivered"))}
    new = {"both-same": ("d2", None), "replay-old": ("other", None), "mark-delivered": ("sending", None),
           "mark-equal": ("d5", None), "new-only": ("d9", None)}
    monkeypatch.setattr(mover, "fingerprints", lambda place, table: old if place == "old" else new)
    monkeypatch.setattr(mover, "prepared", lambda table, item: item)
    mover.source, mover.target = "old", "new"
    written, deleted = [], []
    monkeypatch.setattr(moves.cell_tables, "put_all", lambda place, table, items: written.append((place, table, items)))
    monkeypatch.setattr(moves.cell_tables, "delete_all", lambda *args: deleted.append(args))
    assert mover.sweep_deliveries() == 2
    assert written == [("new", "WebhookDeliveriesTable", [old["attempt-late"][1], old["mark-delivered"][1]])]
    assert deleted == []


def test_the_clean_up_waits_out_the_grace_after_the_switch_before_it_looks(mover, monkeypatch):
    import time
    order = []
    mover.move["switchedAtMs"] = round(time.time() * 1000)
    monkeypatch.setattr(mover, "save", lambda **changes: order.append(("save", changes.get("status"))))
    for step in ("send_deliveries_on", "carry_dead_letters", "sweep_deliveries"):
        monkeypatch.setattr(mover, step, lambda step=step: order.append(step) or 0)
    monkeypatch.setattr(mover, "webhooks", lambda: set())
    monkeypatch.setattr(mover, "rate_limit_keys", lambda: order.append("rate_limit_keys") or [])
    monkeypatch.setattr(moves.cell_tables, "delete_all", lambda *a: None)
    monkeypatch.setattr(moves, "DELETED", ())
    monkeypatch.setattr(moves, "OBJECT_PREFIXES", ())
    mover.clean()
    grace = settings().tenant_move_delivery_grace_seconds
    assert len(mover.clock_.slept) == 1 and grace - 1 < mover.clock_.slept[0] <= grace
    assert order == [("save", "cleaning"), "send_deliveries_on", "carry_dead_letters", "sweep_deliveries",
                     ("save", None), "rate_limit_keys", ("save", "done")]
