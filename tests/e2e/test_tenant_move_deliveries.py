"""A tenant moved between the two cells of the local stack while its webhook receiver is down: every
delivery the old cell holds (retries hidden on its delivery queue, a dead letter) goes to the new cell,
none is dropped as skipped, and once the receiver is up again every event arrives exactly once. The
attempts go on where they were: numbered on, none sooner than the old cell had scheduled it. When the
move says done the old cell holds nothing of the tenant (its tables, its bucket, its webhook queues: the
residency audit and the queues' counts), and writes nothing of it afterwards."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter, defaultdict

import pytest

from svc_core.adapters.dynamo import from_item
from tests.support.cells import TwoCells
from tests.support.functions import ROOT
from tests.support.moving import Routed, events, move_of, tenant_items
from tests.support.waiting import until
from tests.support.webhook_receiver import Receiver, new_secret

pytestmark = pytest.mark.long_running   # two whole stacks, each in a process of its own

US, EU = "us-east-1", "eu-central-1"
PASSWORD = "moving-password-0123456789"
# A second attempt at once, then 40 s apart: the first attempts fail before the move, and their retries
# wait hidden on the old cell's queue through it (the clean-up looks 30 s after the switch).
SCHEDULE = "1,40,40,40,40,40,40"
BEFORE = 25   # events while the receiver is down, before the move: a project created, renamed 24 times
WANTED = ("project.created", "project.updated")
QUEUES = ("WEBHOOK_QUEUE_URL", "WEBHOOK_DLQ_URL", "WEBHOOK_DELIVERY_QUEUE_URL", "WEBHOOK_DELIVERY_DLQ_URL")


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    with TwoCells(tmp_path_factory.mktemp("cells"), extra=("--parameter", f"WebhookRetrySchedule={SCHEDULE}"),
                  environment={"TENANT_POLICY_CACHE_SECONDS": "2"}).start() as pair:
        yield pair


class FlakyReceiver:
    """A Standard Webhooks receiver that answers 500 while down, 200 once up; what it accepted."""

    def __init__(self) -> None:
        self.up = threading.Event()
        self.accepted: list[str] = []   # the webhook-id of each delivery answered 200
        self.receiver = Receiver(new_secret(), self._respond)

    def _respond(self, _n, delivery):
        if not self.up.is_set():
            return 500, {}
        if delivery.verify_error is None:
            self.accepted.append(delivery.headers["webhook-id"])
        return 200, {}


def _queued(cell) -> dict[str, int]:
    """Every message on each of the cell's webhook queues: visible, hidden (in flight) and delayed."""
    sqs, counts = cell.client("sqs"), {}
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"]
    for variable in QUEUES:
        answer = sqs.get_queue_attributes(QueueUrl=cell.environment[variable], AttributeNames=names)["Attributes"]
        counts[variable] = sum(int(answer[name]) for name in names)
    return counts


def _attempts(routed: Routed, webhook_id: str) -> list[dict]:
    found, cursor = [], None
    while True:
        page = routed.call("GET", f"/api/v1/webhooks/{webhook_id}/deliveries",
                           params={"limit": 100, **({"cursor": cursor} if cursor else {})})
        assert page.status_code == 200, page.text
        found += page.json()["data"]["items"]
        cursor = page.json()["data"].get("nextCursor")
        if not cursor:
            return found


def _move_item(cell, tenant_id: str) -> dict:
    item = cell.dynamodb().get_item(TableName="DirectoryTable", Key={"pk": {"S": f"TENANT#{tenant_id}"},
                                                                     "sk": {"S": "MOVE"}}, ConsistentRead=True)["Item"]
    return from_item(item)


def _audit(us, eu) -> dict:
    done = subprocess.run([sys.executable, "-m", "ops", "residency", "audit", "--local", f"{us.port},{eu.port}",
                           "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["outOfPlace"] == 0, report["findings"][:5]
    return report


def test_a_move_while_the_receiver_is_down_delivers_every_event_once_from_the_new_cell_and_leaves_nothing(cells):
    from svc_client import Client
    us, eu = cells.cell(US), cells.cell(EU)
    email = f"hooks-{uuid.uuid4().hex[:10]}@example.com"
    with Client(us.base_url, api_key="") as svc:
        tenant_id = svc.auth.register(email, PASSWORD, "Hooked", region=US)["tenant"]["id"]
        svc.auth.login(email, PASSWORD)
        key = svc.api_keys.create("hooks", "sdk", "Production").key
    routed = Routed(us.base_url, key)
    flaky = FlakyReceiver()
    try:
        hook = routed.call("POST", "/api/v1/webhooks", json={"url": flaky.receiver.url, "secret": flaky.receiver.secret,
                                                             "events": list(WANTED)})
        assert hook.status_code == 201, hook.text
        webhook_id = hook.json()["data"]["id"]
        made = routed.call("POST", "/api/v1/projects", json={"name": "Before", "language": "python"})
        assert made.status_code == 201, made.text
        project_id = made.json()["data"]["id"]
        for n in range(BEFORE - 1):
            renamed = routed.call("PATCH", f"/api/v1/projects/{project_id}", json={"name": f"before {n}"})
            assert renamed.status_code == 200, renamed.text
        # Each event failed twice in the old cell (its second attempt a second after the first), and waits.
        assert until(lambda: sum(1 for d in flaky.receiver.deliveries) >= 2 * BEFORE, 60)
        # A dead letter of the tenant (and one of another tenant) on the old cell's dead-letter queue.
        sqs = us.client("sqs")
        dead = {"event": {"id": "evt_01DEADLETTER0000000000000", "type": "project.created",
                          "timestamp": "2026-11-28T10:00:00.000Z", "tenantId": tenant_id, "data": {"id": "proj_x"}},
                "webhookId": webhook_id, "tenantId": tenant_id}
        other = {**dead, "tenantId": cells.credentials["tenantId"], "webhookId": "whk_other"}
        for body in (dead, other):
            sqs.send_message(QueueUrl=us.environment["WEBHOOK_DELIVERY_DLQ_URL"], MessageBody=json.dumps(body))

        # Writes go on while it moves (refused only while paused), each an event.
        stop, writes = threading.Event(), []

        def rename() -> None:
            own = Routed(us.base_url, key)
            n = 0
            while not stop.is_set():
                n += 1
                writes.append(own.call("PATCH", f"/api/v1/projects/{project_id}", json={"name": f"renamed {n}"}).status_code)
                time.sleep(0.3)

        writer = threading.Thread(target=rename, daemon=True)
        started = routed.call("POST", f"/api/v1/regions/migrations/{tenant_id}", json={"toRegion": EU})
        assert started.status_code == 202, started.text
        writer.start()
        done = until(lambda: (m := move_of(routed, tenant_id)) and m["status"] in ("done", "failed") and m, 300)
        at_done = {"tables": tenant_items(us, "WEBHOOK_DELIVERIES_TABLE", tenant_id), "queues": _queued(us)}
        stop.set()
        writer.join(30)
        assert done and done["status"] == "done", done
        move = _move_item(us, tenant_id)

        # When the move says done, the old cell holds nothing of the tenant's deliveries: no record, and its
        # webhook queues hold nothing but the other tenant's dead letter.
        assert at_done["tables"] == []
        assert at_done["queues"] == {**{variable: 0 for variable in QUEUES}, "WEBHOOK_DELIVERY_DLQ_URL": 1}, at_done
        assert move["deliveries"]["sentOn"] >= 1 and move["deliveries"]["deadLetters"] == 1, move["deliveries"]
        carried = eu.client("sqs").receive_message(QueueUrl=eu.environment["WEBHOOK_DELIVERY_DLQ_URL"],
                                                   MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
        assert [json.loads(m["Body"]) for m in carried] == [dead]
        assert {m["Body"] for m in sqs.receive_message(QueueUrl=us.environment["WEBHOOK_DELIVERY_DLQ_URL"],
                                                       MaxNumberOfMessages=10).get("Messages", [])} == {json.dumps(other)}

        # The receiver comes back: every event arrives once, from the new cell, on its schedule.
        flaky.up.set()
        published = [e["id"] for e in events(routed) if e["type"] in WANTED]
        accepted_writes = sum(1 for status in writes if status == 200)
        assert len(published) == BEFORE + accepted_writes and accepted_writes > 0
        assert until(lambda: set(flaky.accepted) >= set(published), 180), sorted(set(published) - set(flaky.accepted))
        # The receiver's answer is recorded after it arrives: on a loaded machine a second or more later.
        def recorded() -> dict[str, list[dict]]:
            by_event = defaultdict(list)
            for attempt in _attempts(routed, webhook_id):
                by_event[attempt["eventId"]].append(attempt)
            return by_event
        assert until(lambda: set(seen := recorded()) == set(published)
                     and all(any(a["outcome"] == "delivered" for a in tried) for tried in seen.values()), 60)
        time.sleep(3)   # a duplicate would come now
        received = Counter(flaky.accepted)
        print(f"\nevents published {len(published)} ({BEFORE} before the move, {accepted_writes} during it); "
              f"delivered {len(received)}, {sum(received.values())} deliveries accepted; "
              f"{len(flaky.receiver.deliveries)} attempts reached the receiver; move: {move['deliveries']}")
        assert received == Counter(published), {k: v for k, v in received.items() if v != 1}

        # Their attempts: none skipped, numbered on across the cells, none sooner than scheduled.
        by_event = recorded()
        assert set(by_event) == set(published)
        switched = move["switchedAt"]
        crossed = 0
        for event_id, tried in by_event.items():
            tried.sort(key=lambda a: a["attempt"])
            assert [a["attempt"] for a in tried] == list(range(1, len(tried) + 1)), (event_id, tried)
            assert [a["outcome"] for a in tried] == ["retrying"] * (len(tried) - 1) + ["delivered"], (event_id, tried)
            for before, after in zip(tried, tried[1:], strict=False):
                assert after["attempted_at"] >= _earlier(before["next_retry_at"]), (event_id, before, after)
            if tried[0]["attempted_at"] < switched < tried[-1]["attempted_at"]:
                crossed += 1
        assert crossed >= BEFORE   # the events made before the move went on in the new cell

        # And afterwards the old cell wrote nothing of the tenant: the audit finds nothing out of place.
        assert tenant_items(us, "WEBHOOK_DELIVERIES_TABLE", tenant_id) == []
        assert {k: v for k, v in _queued(us).items() if k != "WEBHOOK_DELIVERY_DLQ_URL"} == \
            {variable: 0 for variable in QUEUES if variable != "WEBHOOK_DELIVERY_DLQ_URL"}
        _audit(us, eu)
    finally:
        flaky.receiver.stop()
        errors = [line for line in cells.process.lines if "ERROR" in line or "Error" in line]
        print("".join(errors[-40:]))   # the cells' failures, if any, for whoever reads a failed run


def _earlier(iso: str) -> str:
    """An ISO time a second earlier (the retry's time is kept in whole seconds when it changes cells)."""
    from datetime import datetime, timedelta
    moment = datetime.fromisoformat(iso.replace("Z", "+00:00")) - timedelta(seconds=1)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
