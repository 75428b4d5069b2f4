"""Webhook subscriptions: where a tenant wants its events delivered, which events, and the
secrets the deliveries are signed with (Standard Webhooks).

- url: the rule of svc_core/adapters/webhook_url.py, on the text alone (https, a DNS host name, no IP
  address, no localhost...); the document carries its pattern. Nothing is resolved here: before
  every delivery the name is resolved and every address checked (svc_core/adapters/endpoint_guard.py:
  loopback, private, link-local, metadata, CGNAT... refused), and a refused or unresolvable name
  makes a failed attempt in the deliveries. Local development (AllowLoopbackEndpoints) also
  takes loopback URLs, http too.
- events: event names of svc_core/contracts/events.py, or "*" for all of them (webhook.test is sent by
  the test call only, to one subscription, and cannot be subscribed to).
- secret: supplied by the caller (the spec) or, left out, generated. Two forms:
  the Standard Webhooks form "whsec_" + standard base64 of 24 to 64 random bytes (recommended,
  and what the service generates), whose HMAC key is the decoded bytes; or a plain secret of 32
  to 256 printable ASCII characters without whitespace (not starting with "whsec_" in any case),
  whose HMAC key is its UTF-8 bytes (webhook_delivery.secret_key). Each form is one pattern
  (WHSEC_PATTERN, PLAIN_SECRET_PATTERN in domain/fields/webhooks.py), the document's anyOf and the
  API's rule alike. It is sealed with KMS (svc_core/adapters/sealing.py, context {purpose,
  tenantId, webhookId}) and never answered; a generated one is answered once, by the create or
  rotation that made it. After a rotation the previous secrets keep signing for the overlap: a
  delivery carries one signature per live secret.

Every change is written only over the version that was read (409 CONFLICT otherwise); each
write drops the secrets whose overlap has ended.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from svc_core.adapters import sealing, webhook_url
from svc_core.auth.context import TenantContext
from svc_core.contracts import cursors, rotation
from svc_core.contracts.events import EVENT_PREFIX, Event, event_now
from svc_core.data import webhook_deliveries_table, webhook_delivery_queue, webhooks_table
from svc_core.data.common import ConditionFailed
from svc_core.domain import audit
from svc_core.domain.fields.webhooks import ALL_EVENTS, SECRET_PREFIX
from svc_core.domain.paging import page, tenant_list_page
from svc_core.platform import ids, timeutil
from svc_core.platform.config import settings
from svc_core.platform.errors import Conflict, NotFound, ValidationFailed

if TYPE_CHECKING:
    from svc_core.domain.models.webhooks import WebhookCreate, WebhookRotate, WebhookUpdate

PREFIX = "whk"
PURPOSE = "webhook-secret"
ANSWER_PURPOSE = "webhook-create-answer"   # a generated secret in a kept Idempotency-Key answer
TEST_EVENT = "webhook.test"
GENERATED_SECRET_BYTES = 32
MAX_WEBHOOKS_PER_TENANT = 20
MAX_SIGNING_SECRETS = 5            # the current one and at most four still in their overlap
DISABLED_BY_REQUEST = "disabled through the API"


def generate_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(os.urandom(GENERATED_SECRET_BYTES)).decode()


# ---- views ---------------------------------------------------------------------------------

def _view(record: dict[str, Any]) -> dict[str, Any]:
    return {"id": record["id"], "url": record["url"], "events": record["events"], "enabled": record["enabled"],
            "description": record.get("description"), "disabledReason": record.get("disabledReason"),
            "disabled_at": record.get("disabledAt"), "first_failure_at": timeutil.iso(record.get("failingSince")),
            "version": record["version"], "created_at": record["created_at"], "updated_at": record["updated_at"]}


def _attempt_view(item: dict[str, Any]) -> dict[str, Any]:
    return {"eventId": item["eventId"], "eventType": item["eventType"], "attempt": item["attempt"],
            "outcome": item["outcome"], "statusCode": item.get("statusCode"), "latencyMs": item.get("latencyMs"),
            "error": item.get("error"), "next_retry_at": item.get("nextRetryAt"),
            "attempted_at": item["attemptedAt"], "resentBy": item.get("resentBy")}


# ---- rules ---------------------------------------------------------------------------------

def _not_found(webhook_id: str) -> NotFound:
    return NotFound("The webhook does not exist.", {"id": webhook_id, "resource": "webhook"})


def _changed(webhook_id: str) -> Conflict:
    return Conflict("The webhook changed or was deleted while this request was handled; read it again.",
                    {"id": webhook_id})


def _context(tenant_id: str, webhook_id: str) -> dict[str, str]:
    return {"purpose": PURPOSE, "tenantId": tenant_id, "webhookId": webhook_id}


def check_url(url: str) -> None:
    """VALIDATION_ERROR naming url, with a code, when the URL breaks webhook_url's rule (and is not
    a loopback URL of local development). Nothing is resolved: deliveries check where it points."""
    found = webhook_url.problem(url)
    if found is None or (settings().allow_loopback_endpoints and webhook_url.loopback_in_development(url)):
        return
    code, reason = found
    raise ValidationFailed("The webhook URL is not allowed.", {"fields": [
        {"field": "url", "in": "body", "reason": f"the URL {reason}", "code": code}]})


def live_secrets(secrets: list[dict[str, Any]], now: float) -> list[dict[str, Any]]:
    """The secrets that still sign: the current one (expiresAt null) and those in their overlap."""
    return rotation.live(secrets, now, "expiresAt")


def rotated_secrets(secrets: list[dict[str, Any]], new: dict[str, Any], now: float,
                    overlap_seconds: int) -> list[dict[str, Any]]:
    """The new secret first and current; every live previous one signs until now + overlap at the
    latest (contracts/rotation.py: a shorter overlap shortens an earlier one's too, 0 ends all)."""
    return rotation.rotated(secrets, new, now, int(now) + overlap_seconds, "expiresAt")


def _read(tenant_id: str, webhook_id: str, store) -> dict[str, Any]:
    record = store.get(tenant_id, webhook_id) if ids.is_id(webhook_id, PREFIX) else None
    if record is None:
        raise _not_found(webhook_id)
    return record


# What the audit log records of a webhook (never its secrets).
_RECORDED_FIELDS = ("url", "events", "description", "enabled")


def _recorded(record: dict[str, Any]) -> dict[str, Any]:
    return {f: record.get(f) for f in _RECORDED_FIELDS}


def _write(ctx: TenantContext, current: dict[str, Any], changes: dict[str, Any], now: float, store,
           action: str = "webhook.updated", recorded: dict[str, Any] | None = None) -> dict[str, Any]:
    """Store the changes over the version read, with their audit entry (`recorded`: what it says
    changed; by default the recorded fields that differ)."""
    updated = {**current, **changes, "version": current["version"] + 1, "updated_at": timeutil.iso(now)}
    updated["secrets"] = live_secrets(updated["secrets"], now)
    if recorded is None:
        recorded = audit.changed(_recorded(current), _recorded(updated))
    entry = audit.entry(ctx.tenant_id, action, "webhook", current["id"], ctx=ctx, changes=recorded)
    try:
        store.replace(ctx.tenant_id, updated, current["version"], also=[entry])
    except ConditionFailed:
        raise _changed(current["id"]) from None
    return updated


# ---- operations ----------------------------------------------------------------------------

def create_webhook(ctx: TenantContext, body: WebhookCreate, store=webhooks_table) -> dict[str, Any]:
    check_url(body.url)
    too_many = Conflict(f"A tenant has at most {MAX_WEBHOOKS_PER_TENANT} webhooks; delete one first.",
                        {"resource": "webhook", "limit": MAX_WEBHOOKS_PER_TENANT})
    if store.count_for_tenant(ctx.tenant_id) >= MAX_WEBHOOKS_PER_TENANT:
        raise too_many
    now = timeutil.now()
    stamp = timeutil.iso(now)
    webhook_id = ids.new_id(PREFIX)
    supplied = body.secret is not None
    text = body.secret if supplied else generate_secret()
    record = {"id": webhook_id, "url": body.url, "events": body.events, "enabled": True,
              "description": body.description, "version": 1, "created_at": stamp, "updated_at": stamp,
              "secrets": [{"sealed": sealing.seal(text.encode(), _context(ctx.tenant_id, webhook_id)),
                           "created_at": stamp, "expiresAt": None}]}
    store.create(ctx.tenant_id, record, also=[audit.entry(
        ctx.tenant_id, "webhook.created", "webhook", webhook_id, ctx=ctx,
        changes={**audit.changed({}, _recorded(record)), "secretSource": {"old": None, "new": "supplied" if supplied
                                                                    else "generated"}})])
    # Creates racing past the first count: each checks again, and the ones over the limit withdraw
    # (the log says so: the creation it recorded is followed by this deletion).
    if store.count_for_tenant(ctx.tenant_id) > MAX_WEBHOOKS_PER_TENANT:
        try:
            store.delete(ctx.tenant_id, webhook_id, also=[audit.entry(
                ctx.tenant_id, "webhook.deleted", "webhook", webhook_id, ctx=ctx,
                changes={**audit.changed(_recorded(record), {}), "reason": {"old": None, "new": "over the limit"}})])
        except ConditionFailed:
            pass
        raise too_many
    return {**_view(record), "secret": None if supplied else text}


def sealed_answer(ctx: TenantContext, answer: dict[str, Any]) -> dict[str, Any]:
    """A create's answer as an Idempotency-Key record may keep it: a generated secret sealed
    (KMS, bound to this tenant and webhook), never in clear. opened_answer() undoes it."""
    if answer.get("secret") is None:
        return answer
    sealed = sealing.seal(answer["secret"].encode(), _answer_context(ctx.tenant_id, answer["id"]))
    return {**answer, "secret": None, "sealedSecret": sealed}


def opened_answer(ctx: TenantContext, kept: dict[str, Any]) -> dict[str, Any]:
    if "sealedSecret" not in kept:
        return kept
    answer = {k: v for k, v in kept.items() if k != "sealedSecret"}
    answer["secret"] = sealing.unseal(kept["sealedSecret"], _answer_context(ctx.tenant_id, kept["id"])).decode()
    return answer


def _answer_context(tenant_id: str, webhook_id: str) -> dict[str, str]:
    return {**_context(tenant_id, webhook_id), "purpose": ANSWER_PURPOSE}


def get_webhook(ctx: TenantContext, webhook_id: str, store=webhooks_table) -> dict[str, Any]:
    return _view(_read(ctx.tenant_id, webhook_id, store))


def list_webhooks(ctx: TenantContext, limit: int, cursor: str | None, store=webhooks_table) -> dict[str, Any]:
    return tenant_list_page(store, ctx.tenant_id, limit, cursor, id_prefix=PREFIX, view=_view)


def update_webhook(ctx: TenantContext, webhook_id: str, body: WebhookUpdate, store=webhooks_table) -> dict[str, Any]:
    sent = body.model_fields_set
    current = _read(ctx.tenant_id, webhook_id, store)
    if "url" in sent:
        check_url(body.url)
    now = timeutil.now()
    changes: dict[str, Any] = {f: getattr(body, f) for f in ("url", "events", "description") if f in sent}
    if "enabled" in sent:
        if body.enabled:
            changes.update(enabled=True, disabledReason=None, disabledAt=None, failingSince=None)
        elif current.get("enabled"):
            changes.update(enabled=False, disabledReason=DISABLED_BY_REQUEST, disabledAt=timeutil.iso(now))
    return _view(_write(ctx, current, changes, now, store))


def delete_webhook(ctx: TenantContext, webhook_id: str, store=webhooks_table) -> dict[str, Any]:
    current = _read(ctx.tenant_id, webhook_id, store)
    try:
        store.delete(ctx.tenant_id, webhook_id, also=[audit.entry(
            ctx.tenant_id, "webhook.deleted", "webhook", webhook_id, ctx=ctx,
            changes=audit.changed(_recorded(current), {}))])
    except ConditionFailed:
        raise _not_found(webhook_id) from None  # deleted meanwhile
    return {"id": webhook_id, "deleted": True}


def rotate_secret(ctx: TenantContext, webhook_id: str, body: WebhookRotate, store=webhooks_table) -> dict[str, Any]:
    current = _read(ctx.tenant_id, webhook_id, store)
    now = timeutil.now()
    supplied = "secret" in body.model_fields_set and body.secret is not None
    text = body.secret if supplied else generate_secret()
    new = {"sealed": sealing.seal(text.encode(), _context(ctx.tenant_id, webhook_id)),
           "created_at": timeutil.iso(now), "expiresAt": None}
    secrets = rotated_secrets(current["secrets"], new, now, body.overlapSeconds)
    if len(secrets) > MAX_SIGNING_SECRETS:
        raise Conflict(f"At most {MAX_SIGNING_SECRETS - 1} previous secrets may sign at once; rotate with a "
                       "shorter overlapSeconds (0 ends the previous ones now), or wait until one expires.",
                       {"id": webhook_id, "limit": MAX_SIGNING_SECRETS})
    live_before = len(live_secrets(current["secrets"], now))
    updated = _write(ctx, current, {"secrets": secrets}, now, store, "webhook.secret_rotated", {
        "signingSecrets": {"old": live_before, "new": len(live_secrets(secrets, now))},
        "overlapSeconds": {"old": None, "new": body.overlapSeconds},
        "secretSource": {"old": None, "new": "supplied" if supplied else "generated"}})
    ends = [s["expiresAt"] for s in updated["secrets"] if s.get("expiresAt") is not None]
    return {**_view(updated), "secret": None if supplied else text,
            "previous_secrets_expire_at": timeutil.iso(max(ends)) if ends else None}


def enabled_webhook(ctx: TenantContext, webhook_id: str, action: str, store=webhooks_table) -> dict[str, Any]:
    """The tenant's webhook, which must be enabled for the action (409 CONFLICT when it is not)."""
    current = _read(ctx.tenant_id, webhook_id, store)
    if not current.get("enabled"):
        raise Conflict(f"The webhook is disabled; enable it (PATCH enabled: true) to {action}.", {"id": webhook_id})
    return current


def wanted_types(webhook: dict[str, Any]) -> list[str] | None:
    """The event types a webhook receives; None for all of them."""
    return None if ALL_EVENTS in webhook["events"] else list(webhook["events"])


def send_test(ctx: TenantContext, webhook_id: str, store=webhooks_table,
              enqueue: Callable[[list[webhook_delivery_queue.DeliveryMessage]], None] = webhook_delivery_queue.enqueue
              ) -> dict[str, Any]:
    """A webhook.test event, queued for this webhook only (not through the bus: no other
    subscription receives it). Its attempts appear in the deliveries like any other."""
    enabled_webhook(ctx, webhook_id, "send it a test event", store)
    event = event_now(TEST_EVENT, ctx.tenant_id,
                      {"webhookId": webhook_id, "message": "This is a test event sent through the API."})
    enqueue([webhook_delivery_queue.delivery_message(event, webhook_id)])
    return event.payload()


def fan_out(event: Event, store=webhooks_table,
            enqueue: Callable[[list[webhook_delivery_queue.DeliveryMessage]], None] = webhook_delivery_queue.enqueue
            ) -> int:
    """One delivery message per enabled subscription of the event's tenant that wants its type, on
    the delivery queue (each pair is then delivered and retried on its own); how many."""
    subscriptions = store.subscribers(event.tenantId, event.type)
    enqueue([webhook_delivery_queue.delivery_message(event, s["id"]) for s in subscriptions])
    return len(subscriptions)


def fan_out_message(body: str) -> dict[str, Any]:
    """One message of the webhook queue (the bus's envelope around an event): its deliveries queued
    here ({event, subscriptions}), or, for a tenant homed in another cell now (moved), the message sent
    on to that cell's webhook queue ({event, sentTo}), where the tenant's webhooks are: nothing of the
    tenant is written here any more."""
    from svc_core.data import cell_queues  # on first use: the webhooks API's start does without them
    from svc_core.domain import cell_handoff
    event = Event.of(json.loads(body)["detail"])
    home = cell_handoff.elsewhere(event.tenantId)
    if home is not None:
        cell_queues.send(home, cell_queues.EVENTS, body)
        return {"event": event, "sentTo": home.region}
    return {"event": event, "subscriptions": fan_out(event)}


def list_deliveries(ctx: TenantContext, webhook_id: str, limit: int, cursor: str | None, store=webhooks_table,
                    deliveries=webhook_deliveries_table) -> dict[str, Any]:
    _read(ctx.tenant_id, webhook_id, store)
    after = cursors.attempt_after(cursor, EVENT_PREFIX)
    items, last = deliveries.list_for_webhook(ctx.tenant_id, webhook_id, limit, after)
    return page([_attempt_view(i) for i in items], cursors.attempt_cursor(last) if last else None)

