"""The delivery queue's two messages: their wire form, and what they refuse (an unknown field, a
missing one, a value of the wrong type), checked without pydantic."""

from __future__ import annotations

import dataclasses
import json

import pytest

from svc_core.contracts.events import Event, EventInvalid
from svc_core.data.webhook_delivery_queue import DeliveryMessage, MessageInvalid, ReplayStep, delivery_message

EVENT = {"id": "evt_1", "type": "project.created", "timestamp": "2026-11-25T10:00:00.000Z", "tenantId": "ten_1",
         "data": {"id": "proj_1"}}
STEP = {"replayId": "rpl_1", "webhookId": "whk_1", "tenantId": "ten_1", "position": "start"}


def test_a_delivery_message_reads_back_what_it_sends():
    for send_id in (None, "rdl_1"):
        message = delivery_message(Event.of(EVENT), "whk_1", send_id)
        wire = json.loads(message.to_json())
        assert wire == {"event": EVENT, "webhookId": "whk_1", "tenantId": "ten_1",
                        **({"sendId": send_id} if send_id else {})}
        assert DeliveryMessage.of(message.to_json()) == message
    assert DeliveryMessage.of(json.dumps({"event": EVENT, "webhookId": "w", "tenantId": "t", "sendId": None})).sendId is None


@pytest.mark.parametrize("body", [
    {"event": EVENT, "webhookId": "whk_1", "tenantId": "ten_1", "extra": 1},
    {"event": EVENT, "webhookId": "whk_1"},
    {"event": EVENT, "webhookId": 1, "tenantId": "ten_1"},
    {"event": EVENT, "webhookId": "whk_1", "tenantId": "ten_1", "sendId": 7},
    {"event": "evt_1", "webhookId": "whk_1", "tenantId": "ten_1"},
    {"event": {**EVENT, "extra": 1}, "webhookId": "whk_1", "tenantId": "ten_1"},
    ["not", "an", "object"],
])
def test_a_delivery_message_refuses_what_it_does_not_declare(body):
    with pytest.raises((MessageInvalid, EventInvalid)):
        DeliveryMessage.of(json.dumps(body))


def test_a_replay_step_reads_back_what_it_sends_and_a_delivery_is_not_one():
    step = ReplayStep.of(json.dumps({"replayStep": STEP}))
    assert step is not None and step.payload() == STEP and list(step.payload()) == list(STEP)
    assert dataclasses.replace(step, position="evt_2").position == "evt_2"
    assert ReplayStep.of(json.dumps({"event": EVENT, "webhookId": "whk_1", "tenantId": "ten_1"})) is None


@pytest.mark.parametrize("fields", [{**STEP, "extra": "x"}, {k: v for k, v in STEP.items() if k != "position"},
                                    {**STEP, "position": 3}, None])
def test_a_replay_step_refuses_what_it_does_not_declare(fields):
    with pytest.raises(MessageInvalid):
        ReplayStep.of(json.dumps({"replayStep": fields}))


def test_messages_are_frozen_and_typed_when_built_in_code():
    message = delivery_message(Event.of(EVENT), "whk_1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.sendId = "rdl_1"  # type: ignore[misc]
    with pytest.raises(MessageInvalid):
        DeliveryMessage(event=EVENT, webhookId="whk_1", tenantId="ten_1")  # type: ignore[arg-type]
    with pytest.raises(MessageInvalid):
        ReplayStep(**{**STEP, "tenantId": None})
    with pytest.raises(TypeError):
        ReplayStep("rpl_1", "whk_1", "ten_1", "start")  # type: ignore[misc]  # keywords only, as the fields are alike
