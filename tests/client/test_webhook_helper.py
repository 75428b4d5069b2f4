"""verify_webhook with real Standard Webhooks signatures, made by the reference library's own
signer (the service's deliveries are checked the same way in test_library_stack.py)."""

from __future__ import annotations

import base64
import json
import os
import time
from datetime import UTC, datetime, timedelta

import pytest
from standardwebhooks import Webhook

from svc_client import (
    AgentRunEvent,
    ProjectEvent,
    UserEvent,
    WebhookEvent,
    WebhookVerificationError,
    parse_webhook_event,
    verify_webhook,
)


def secret() -> str:
    return "whsec_" + base64.b64encode(os.urandom(32)).decode()


def delivery(payload: dict, key: str | bytes, *, at: datetime | None = None, extra_keys: tuple[str, ...] = ()):
    body = json.dumps(payload)
    at = at or datetime.now(UTC)
    signatures = [Webhook(k).sign(payload["id"], at, body) for k in (key, *extra_keys)]
    return body.encode(), {"webhook-id": payload["id"], "webhook-timestamp": str(int(at.timestamp())),
                           "webhook-signature": " ".join(signatures), "Content-Type": "application/json"}


PROJECT_UPDATED = {"id": "evt_01", "type": "project.updated", "timestamp": "2026-11-21T21:00:00.000Z",
                   "tenantId": "ten_01", "data": {"id": "proj_01", "name": "Apollo", "description": None,
                                                  "language": "python", "created_at": "t", "updated_at": "t",
                                                  "changes": ["language"]}}   # the names sent, as the service sends them
AGENT_FAILED = {"id": "evt_02", "type": "agent.failed", "timestamp": "t", "tenantId": "ten_01",
                "data": {"runId": "run_01", "agentId": "agt_01", "projectId": "proj_01", "status": "cancelled",
                         "model": "offline", "usage": {"inputTokens": 1, "outputTokens": 2, "microCredits": 3},
                         "created_at": "t", "completed_at": "t",
                         "error": {"code": "CANCELLED", "message": "cancelled"}}}


def test_a_signed_delivery_verifies_and_parses_as_its_typed_event():
    key = secret()
    event = verify_webhook(*delivery(PROJECT_UPDATED, key), key)
    assert isinstance(event, ProjectEvent) and event.data.name == "Apollo"
    assert event.data.changes == ["language"] and event.tenant_id == "ten_01"
    run = verify_webhook(*delivery(AGENT_FAILED, key), key)
    assert isinstance(run, AgentRunEvent) and run.data.error.code == "CANCELLED" and run.data.usage.micro_credits == 3


def test_during_a_rotation_any_live_secret_verifies():
    old, new = secret(), secret()
    body, headers = delivery(PROJECT_UPDATED, new, extra_keys=(old,))
    assert verify_webhook(body, headers, old).id == verify_webhook(body, headers, new).id == "evt_01"


def test_a_plain_secret_of_the_callers_choosing_verifies_with_its_utf8_bytes_as_the_key():
    import secrets as random_secrets

    from svc_client.webhook_events import signing_key
    plain = random_secrets.token_urlsafe(30)  # 40 characters, no whsec_ prefix
    body, headers = delivery(PROJECT_UPDATED, plain.encode("utf-8"))  # the service signs with these bytes
    assert verify_webhook(body, headers, plain).id == "evt_01"
    assert verify_webhook(body, headers, plain.encode("utf-8")).id == "evt_01"  # bytes: the key itself
    assert signing_key(plain) == plain.encode() and signing_key("whsec_" + base64.b64encode(b"k" * 32).decode()) \
        == b"k" * 32
    with pytest.raises(WebhookVerificationError):  # another plain secret
        verify_webhook(body, headers, random_secrets.token_urlsafe(30))


@pytest.mark.parametrize("spoil", ["body", "secret", "old", "unsigned"])
def test_a_delivery_that_does_not_verify_is_refused(spoil):
    key = secret()
    body, headers = delivery(PROJECT_UPDATED, key,
                             at=datetime.now(UTC) - timedelta(minutes=10) if spoil == "old" else None)
    if spoil == "body":
        body = body.replace(b"Apollo", b"Apollo 2")
    if spoil == "unsigned":
        del headers["webhook-signature"]
    with pytest.raises(WebhookVerificationError):
        verify_webhook(body, headers, secret() if spoil == "secret" else key)


def test_an_unknown_type_is_a_plain_event_and_user_events_are_typed():
    unknown = parse_webhook_event({"id": "evt_03", "type": "invoice.paid", "timestamp": "t", "tenantId": "t",
                                   "data": {"x": 1}})
    assert type(unknown) is WebhookEvent and unknown.data == {"x": 1}
    user = parse_webhook_event({"id": "evt_04", "type": "user.created", "timestamp": "t", "tenantId": "t",
                                "data": {"id": "usr_01", "email": "a@example.com", "name": "A", "status": "active",
                                         "created_at": str(time.time())}})
    assert isinstance(user, UserEvent) and user.data.email == "a@example.com"


def test_the_clients_webhook_event_is_the_services_envelope_field_by_field():
    # The service's Event (svc_core/events.py) is what every delivery's body is; the client keeps its
    # own model of it (it cannot import the service's layer). Same JSON names in the same order, the
    # same JSON types (the client may accept more), required alike.
    from pydantic import TypeAdapter

    from svc_core.contracts.events import Event
    ours = TypeAdapter(Event).json_schema()  # a dataclass's fields, as pydantic reads them
    theirs = WebhookEvent.model_json_schema(by_alias=True)
    assert list(theirs["properties"]) == list(ours["properties"])
    for name, schema in ours["properties"].items():
        client_type = theirs["properties"][name].get("type")
        assert client_type in (None, schema["type"]), name  # None: the client takes any JSON value
    assert set(theirs["required"]) == set(ours["required"]) - {"data"}  # a missing data reads as {}


def test_every_event_the_service_sends_parses_as_a_typed_event_with_the_same_fields():
    from svc_client.webhook_events import _BY_PREFIX
    from svc_core.contracts.events import EVENT_TYPES, Event, new_event
    from svc_core.domain.webhooks import TEST_EVENT
    for kind in (*EVENT_TYPES, TEST_EVENT):
        assert [cls for prefix, cls in _BY_PREFIX.items() if kind.startswith(prefix)], f"{kind} has no typed event"
    sent = new_event("user.created", "ten_01", {"id": "usr_01", "email": "a@example.com", "name": "A",
                                                "status": "active", "created_at": "2026-11-21T21:00:00.000Z"})
    key = secret()
    body = sent.to_json()  # the delivery's body, as the service sends it
    headers = {"webhook-id": sent.id, "webhook-timestamp": str(int(time.time())),
               "webhook-signature": Webhook(key).sign(sent.id, datetime.now(UTC), body)}
    received = verify_webhook(body.encode(), headers, key)
    assert isinstance(received, UserEvent) and received.raw() == sent.payload()
    assert Event.of(received.raw()) == sent
