"""Webhooks: register, read, change, delete, rotate the signing secret, send a test event, read
the delivery log, and send events again (one, or a replay of a time range). Secrets are sealed at
rest and never answered (but a generated one, once)."""

from __future__ import annotations  # the models are named lazily (svc_core/domain/models)

from typing import Annotated

from svc_core.domain import webhook_replays, webhooks
from svc_core.domain.paging import DEFAULT_LIMIT, MAX_LIMIT
from svc_core.http import idempotency
from svc_core.http.api import Api
from svc_core.http.params import AttemptCursor, Body, IdCursor, Query
from svc_core.platform.lazy import lazy_module

models = lazy_module("svc_core.domain.models.webhooks")
api = Api()
TAGS = ["Webhooks"]


@api.get("/api/v1/webhooks", scope="webhooks:read", response_model="models.WebhookPage", tags=TAGS,
         summary="List the tenant's webhooks, newest first (never their secrets)")
def list_webhooks(limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
                  cursor: IdCursor = None):
    return webhooks.list_webhooks(api.tenant_context(), limit, cursor)


@api.post("/api/v1/webhooks", scope="webhooks:write", status=201, response_model="models.WebhookCreated", tags=TAGS,
          errors=idempotency.ERRORS, summary="Register a webhook (a supplied secret is sealed and never answered; a "
                                             "generated one is answered this once, and to a replay of its request)",
          description=idempotency.DESCRIPTION.strip() + " A replay answers a generated secret again: the kept "
          "answer holds it sealed, as the webhook does.")
def create_webhook(body: models.WebhookCreate, idempotency_key: idempotency.IdempotencyKey = None):
    ctx = api.tenant_context()
    if idempotency_key is None or body.secret is not None:
        return idempotency.run(api, "webhook.create", idempotency_key, body.model_dump(mode="json"),
                               lambda: webhooks.create_webhook(ctx, body))
    kept = idempotency.run(api, "webhook.create", idempotency_key, body.model_dump(mode="json"),
                           lambda: webhooks.sealed_answer(ctx, webhooks.create_webhook(ctx, body)))
    return webhooks.opened_answer(ctx, kept)


@api.get("/api/v1/webhooks/{id}", scope="webhooks:read", response_model="models.Webhook", tags=TAGS,
         summary="Read one webhook")
def get_webhook(id: str):
    return webhooks.get_webhook(api.tenant_context(), id)


@api.patch("/api/v1/webhooks/{id}", scope="webhooks:write", response_model="models.Webhook", tags=TAGS, errors=(409,),
           summary="Change the URL, the events, the description, or enable / disable deliveries")
def update_webhook(id: str, body: models.WebhookUpdate):
    return webhooks.update_webhook(api.tenant_context(), id, body)


@api.delete("/api/v1/webhooks/{id}", scope="webhooks:write", response_model="models.WebhookDeleted", tags=TAGS,
            summary="Delete a webhook: no delivery is made to it any more")
def delete_webhook(id: str):
    return webhooks.delete_webhook(api.tenant_context(), id)


@api.post("/api/v1/webhooks/{id}/rotate-secret", scope="webhooks:write", response_model="models.WebhookRotated", tags=TAGS,
          errors=(409,), summary="Sign with a new secret; the previous ones keep signing for the overlap")
def rotate_webhook_secret(id: str, body: Annotated[models.WebhookRotate | None, Body()] = None):
    return webhooks.rotate_secret(api.tenant_context(), id, body or models.WebhookRotate())


@api.post("/api/v1/webhooks/{id}/test", scope="webhooks:write", status=202, response_model="models.TestEvent", tags=TAGS,
          errors=(409,), summary="Send this webhook a webhook.test event (queued; see its deliveries)")
def test_webhook(id: str):
    return webhooks.send_test(api.tenant_context(), id)


@api.get("/api/v1/webhooks/{id}/deliveries", scope="webhooks:read", response_model="models.DeliveryPage", tags=TAGS,
         summary="The webhook's delivery attempts, newest first (kept 30 days)")
def list_webhook_deliveries(id: str,
                            limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
                            cursor: AttemptCursor = None):
    return webhooks.list_deliveries(api.tenant_context(), id, limit, cursor)


@api.post("/api/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver", scope="webhooks:write", status=202,
          response_model="models.Redelivery", tags=TAGS, errors=(409,),
          summary="Send one event of the event log to this webhook again (a new attempt, the same webhook-id)",
          description="`deliveryId` is the delivery's `eventId`. Signed with the webhook's current secrets; its "
                      "attempts appear in the deliveries with `resentBy`.")
def redeliver_webhook_event(id: str, deliveryId: str):
    return webhook_replays.redeliver(api.tenant_context(), id, deliveryId)


@api.post("/api/v1/webhooks/{id}/replay", scope="webhooks:write", status=202, response_model="models.Replay", tags=TAGS,
          errors=(409,), summary="Queue every event of a time range for this webhook again (one replay at a time)",
          description="Each event is sent to the webhook by one replay at most (a replay twice does not deliver "
                      "twice); `onlyFailed` leaves out the events delivered already. Read the progress with "
                      "GET /webhooks/{id}/replays/{replayId}.")
def replay_webhook_events(id: str, body: models.ReplayRequest):
    return webhook_replays.start_replay(api.tenant_context(), id, body)


@api.get("/api/v1/webhooks/{id}/replays/{replayId}", scope="webhooks:read", response_model="models.Replay", tags=TAGS,
         summary="A replay's progress")
def get_webhook_replay(id: str, replayId: str):
    return webhook_replays.get_replay(api.tenant_context(), id, replayId)


api.snapstart()  # SnapStart's hooks (svc_core/platform/snapshot.py); a no-op outside Lambda
lambda_handler = api.handler
