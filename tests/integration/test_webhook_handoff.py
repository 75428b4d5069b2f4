"""A tenant's webhook messages once the directory homes it in another cell (a move's switch), on the moto
server under the functions' own roles: the other cell's queues are the same server's in eu-central-1,
published in the directory as a deployed cell publishes them. A retry hidden here is brought back at once
(the move's role, by the receipt handle its wait recorded) and sent on with its attempts and due time,
writing nothing here; the fan-out and a replay's step send theirs on; a carried delivery waits for its due
time in its new cell and numbers its attempts on; the move takes the tenant's dead letters to the new cell
and leaves another tenant's."""

from __future__ import annotations

import json
import time

import botocore.session
import pytest

from devstack import iam
from svc_core.contracts import events
from svc_core.data import cell_queues, cell_tables, directory_table, webhook_deliveries_table, webhook_delivery_queue
from svc_core.domain import tenant_moves
from svc_core.platform.config import settings
from tests.support.queues import take_messages
from tests.support.webhook_receiver import register

US, EU = "us-east-1", "eu-central-1"
QUEUES = cell_queues.WEBHOOK_QUEUES


class OtherCell:
    """eu-central-1's webhook queues on the same moto server, published in the directory."""

    def __init__(self, stack) -> None:
        self.sqs = botocore.session.get_session().create_client(
            "sqs", region_name=EU, endpoint_url=stack.endpoint, aws_access_key_id="local", aws_secret_access_key="local")
        self.urls = {queue: self.sqs.create_queue(QueueName=queue)["QueueUrl"] for queue in QUEUES}
        for url in self.urls.values():   # what an earlier test left
            take_messages(self.sqs, url)
        directory_table.put_cell_resources(EU, {"tables": {"TenantsTable": "t"}, "bucket": "b", "dataKey": "alias/k",
                                                "endpoints": {"sqs": stack.endpoint}, "queues": self.urls})

    def counts(self, queue: str) -> dict[str, int]:
        names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"]
        answer = self.sqs.get_queue_attributes(QueueUrl=self.urls[queue], AttributeNames=names)["Attributes"]
        return {name.removeprefix("ApproximateNumberOf"): int(answer[name]) for name in names}

    def take(self, queue: str, wait: float = 0) -> list[tuple[float, dict]]:
        """(when received, body) of every message of the queue visible within `wait` seconds."""
        found, deadline = [], time.monotonic() + wait
        while True:
            for message in self.sqs.receive_message(QueueUrl=self.urls[queue], MaxNumberOfMessages=10).get("Messages", []):
                found.append((time.time(), json.loads(message["Body"])))
                self.sqs.delete_message(QueueUrl=self.urls[queue], ReceiptHandle=message["ReceiptHandle"])
            if found or time.monotonic() > deadline:
                return found
            time.sleep(0.2)


@pytest.fixture
def eu(stack, path, setting):
    setting("CELLS", json.dumps({US: "https://us.example.test", EU: "https://eu.example.test"}))
    return OtherCell(stack)


def home(tenant_id: str, region: str) -> None:
    """The tenant's HOME in this cell's replica of the directory, as a move's switch writes it."""
    item = directory_table.home_item(tenant_id, {"homeRegion": region, "status": directory_table.ACTIVE})
    cell_tables.put_all(cell_tables.here(), cell_tables.DIRECTORY, [item])


def stored(tenant_id: str) -> list[dict]:
    """Every item of the tenant's in this cell's deliveries table (attempts, marks, waits)."""
    from svc_core.adapters import aws
    from svc_core.adapters.dynamo import from_item
    pages = aws.client("dynamodb").get_paginator("scan").paginate(TableName=settings().webhook_deliveries_table)
    return [from_item(i) for page in pages for i in page.get("Items", []) if i.get("tenantId", {}).get("S") == tenant_id]


def test_a_retry_hidden_here_is_brought_back_and_sent_on_with_its_attempts_and_due_time_writing_nothing(
        stack, path, eu, receivers, setting):
    setting("WEBHOOK_RETRY_SCHEDULE", "4,0,0,0,0,0,0")   # the first retry 4 to 4.8 s after the first attempt
    tenant_id = stack.new_tenant()
    receiver = receivers(lambda n, d: (500, {}))
    webhook_id = register(tenant_id, receiver.url, receiver.secret)
    event = events.new_event("project.created", tenant_id, {"id": "proj_1"})
    path.publish(event)
    path.pump(until=lambda: len(receiver.deliveries) == 1)
    time.sleep(0.3)   # its wait recorded and the message hidden
    wait = webhook_deliveries_table.parked(webhook_id, event.id, None)
    assert wait is not None and wait["attempt"] == 1 and wait["tenantId"] == tenant_id
    due = int(wait["dueAt"])
    assert 3.5 <= due - time.time() <= 6
    before = stored(tenant_id)

    home(tenant_id, EU)   # the switch
    with iam.acting_as("TenantMoveFunction"):   # the clean-up brings it back at once
        assert cell_queues.release(cell_tables.here(), cell_queues.DELIVERIES, wait["receiptHandle"]) is True
        assert cell_queues.release(cell_tables.here(), cell_queues.DELIVERIES, "not-a-handle") is False
    path.pump()   # the delivery function sends it on; nothing is left here

    assert len(receiver.deliveries) == 1   # no attempt here after the switch
    assert webhook_deliveries_table.parked(webhook_id, event.id, None) is None
    assert sorted(i["attemptKey"] for i in stored(tenant_id)) == sorted(i["attemptKey"] for i in before
                                                                        if not i["attemptKey"].startswith("!waiting#"))
    assert eu.counts(cell_queues.DELIVERIES)["MessagesDelayed"] == 1   # held back until its attempt is due
    [(received_at, body)] = eu.take(cell_queues.DELIVERIES, wait=8)
    assert received_at >= due - 0.5
    assert body == {"event": event.payload(), "webhookId": webhook_id, "tenantId": tenant_id, "attempts": 1,
                    "dueAt": due}


def test_a_delivery_carried_here_waits_for_its_due_time_then_makes_its_next_attempt_and_ends_its_wait(
        stack, path, receivers):
    tenant_id = stack.new_tenant()
    receiver = receivers()
    webhook_id = register(tenant_id, receiver.url, receiver.secret)
    event = events.new_event("project.created", tenant_id, {"id": "proj_1"})
    due = int(time.time()) + 3
    carried = webhook_delivery_queue.DeliveryMessage(event=event, webhookId=webhook_id, tenantId=tenant_id,
                                                     attempts=3, dueAt=due, waitFirst=True)
    stack.client("sqs").send_message(QueueUrl=settings().webhook_delivery_queue_url, MessageBody=carried.to_json())
    path.pump(timeout=2, until=lambda: webhook_deliveries_table.parked(webhook_id, event.id, None) is not None)
    assert receiver.deliveries == []
    assert webhook_deliveries_table.parked(webhook_id, event.id, None)["attempt"] == 3
    path.pump(timeout=8, until=lambda: receiver.deliveries)
    assert receiver.deliveries[0].received_at >= due - 1
    path.pump()
    [logged] = webhook_deliveries_table.list_for_webhook(tenant_id, webhook_id, 10, None)[0]
    assert (logged["attempt"], logged["outcome"]) == (4, "delivered")
    assert webhook_deliveries_table.parked(webhook_id, event.id, None) is None


def test_the_fan_out_and_a_replays_step_send_a_moved_tenants_messages_on_and_queue_nothing_here(
        stack, path, eu, receivers):
    tenant_id = stack.new_tenant()
    receiver = receivers()
    webhook_id = register(tenant_id, receiver.url, receiver.secret)
    home(tenant_id, EU)
    event = events.new_event("project.created", tenant_id, {"id": "proj_1"})
    path.publish(event)
    step = webhook_delivery_queue.ReplayStep(replayId="rpl_1", webhookId=webhook_id, tenantId=tenant_id, position="start")
    webhook_delivery_queue.enqueue_step(step)
    path.pump()
    assert receiver.deliveries == [] and stored(tenant_id) == []
    [(_, envelope)] = eu.take(cell_queues.EVENTS, wait=2)
    assert envelope["detail"] == event.payload()
    [(_, forwarded)] = eu.take(cell_queues.DELIVERIES, wait=2)
    assert forwarded == {"replayStep": step.payload()}


def test_the_move_takes_the_tenants_dead_letters_to_the_new_cell_and_leaves_anothers(stack, path, eu):
    tenant_id, other = stack.new_tenant(), stack.new_tenant("Other")
    sqs = stack.client("sqs")
    event = events.new_event("project.created", tenant_id, {"id": "proj_1"})
    mine = webhook_delivery_queue.delivery_message(event, "whk_1").to_json()
    theirs = webhook_delivery_queue.delivery_message(events.new_event("project.created", other, {"id": "p"}),
                                                     "whk_2").to_json()
    envelope = json.dumps({"source": "svc.api", "detail-type": event.type, "detail": event.payload()})
    their_envelope = json.dumps({"source": "svc.api", "detail-type": event.type,
                                 "detail": {**event.payload(), "tenantId": other}})
    for url, body in ((settings().webhook_delivery_dead_letter_queue_url, mine),
                      (settings().webhook_delivery_dead_letter_queue_url, theirs),
                      (settings().webhook_dead_letter_queue_url, envelope),
                      (settings().webhook_dead_letter_queue_url, their_envelope)):
        sqs.send_message(QueueUrl=url, MessageBody=body)
    mover = tenant_moves.Mover({"tenantId": tenant_id, "status": "cleaning"}, cell_tables.here(),
                               tenant_moves.peer(EU))
    with iam.acting_as("TenantMoveFunction"):
        assert mover.carry_dead_letters() == 2
    assert [body for _, body in eu.take(cell_queues.DELIVERY_DEAD_LETTERS, wait=2)] == [json.loads(mine)]
    assert [body for _, body in eu.take(cell_queues.EVENT_DEAD_LETTERS, wait=2)] == [json.loads(envelope)]
    left = sqs.receive_message(QueueUrl=settings().webhook_delivery_dead_letter_queue_url, MaxNumberOfMessages=10)
    assert [json.loads(m["Body"]) for m in left.get("Messages", [])] == [json.loads(theirs)]   # visible again
    left = sqs.receive_message(QueueUrl=settings().webhook_dead_letter_queue_url, MaxNumberOfMessages=10)
    assert [json.loads(m["Body"]) for m in left.get("Messages", [])] == [json.loads(their_envelope)]
