"""Billing: summary, invoices and ledger (any credential of the tenant); credit purchases, the
subscription, gift-card redemption and the portal (billing:write, each honouring Idempotency-Key)."""

from __future__ import annotations  # the models are named lazily (svc_core/domain/models)

from typing import Annotated

from svc_core.domain import billing
from svc_core.domain.paging import DEFAULT_LIMIT, MAX_LIMIT
from svc_core.http import idempotency
from svc_core.http.api import AUTHENTICATED, Api
from svc_core.http.params import IdCursor, Query
from svc_core.platform.lazy import lazy_module

models = lazy_module("svc_core.domain.models.billing")
api = Api()
TAGS = ["Billing"]
IdempotencyKey = idempotency.IdempotencyKey
IDEMPOTENT = idempotency.DESCRIPTION


@api.get("/api/v1/billing/summary", scope=AUTHENTICATED, response_model="models.BillingSummary", tags=TAGS,
         summary="Plan, subscription, balance, this period's usage by kind, and the next charge")
def get_summary():
    return billing.summary(api.tenant_context())


@api.get("/api/v1/billing/invoices", scope=AUTHENTICATED, response_model="models.BillingInvoicePage", tags=TAGS,
         summary="The tenant's invoices, newest first")
def list_invoices(limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
                  cursor: IdCursor = None):
    return billing.list_invoices(api.tenant_context(), limit, cursor)


@api.get("/api/v1/billing/invoices/{id}", scope=AUTHENTICATED, response_model="models.BillingInvoice", tags=TAGS,
         summary="One invoice")
def get_invoice(id: str):
    return billing.get_invoice(api.tenant_context(), id)


@api.get("/api/v1/billing/ledger", scope=AUTHENTICATED, response_model="models.BillingLedgerPage", tags=TAGS,
         summary="Every change of the balance (who, when, why, the request id), newest first")
def list_ledger(limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
                cursor: IdCursor = None):
    return billing.list_ledger(api.tenant_context(), limit, cursor)


@api.post("/api/v1/billing/credits/purchase", scope="billing:write", status=201,
          response_model="models.BillingPurchase", tags=TAGS, errors=(409, 422, 502),
          summary="Buy credits: a pack or a custom amount",
          description="Test mode settles at once (status succeeded, credited, invoiced); Stripe answers pending "
                      "with a checkoutUrl and credits when its webhook confirms the payment." + IDEMPOTENT)
def purchase_credits(body: models.BillingPurchaseCreate, idempotency_key: IdempotencyKey = None):
    return idempotency.run(api, "purchase", idempotency_key, body.model_dump(mode="json"),
                           lambda: billing.purchase_credits(api.tenant_context(), body))


@api.post("/api/v1/billing/subscription/create", scope="billing:write", status=201,
          response_model="models.BillingSubscriptionState", tags=TAGS, errors=(409, 422, 502),
          summary="Start or change the subscription (free cancels it); the plan, features and rate limit follow",
          description="A paid period is invoiced and its price credited as credits (plan_charge)." + IDEMPOTENT)
def create_subscription(body: models.BillingSubscriptionCreate, idempotency_key: IdempotencyKey = None):
    return idempotency.run(api, "subscription", idempotency_key, body.model_dump(mode="json"),
                           lambda: billing.change_subscription(api.tenant_context(), body))


@api.post("/api/v1/billing/gift-cards/redeem", scope="billing:write", response_model="models.BillingRedemption",
          tags=TAGS, errors=(409, 422), summary="Redeem a gift card's code: its credits, once",
          description="Unknown code: 404; redeemed or expired: 409; more than 5 failed attempts in an hour: 429."
                      + IDEMPOTENT)
def redeem_gift_card(body: models.BillingGiftCardRedeem, idempotency_key: IdempotencyKey = None):
    return idempotency.run(api, "redeem", idempotency_key, body.model_dump(mode="json"),
                           lambda: billing.redeem_gift_card(api.tenant_context(), body))


@api.post("/api/v1/billing/portal", scope="billing:write", response_model="models.BillingPortal", tags=TAGS,
          errors=(409, 422, 502), summary="A URL where the customer manages payment methods and invoices",
          description="No body." + IDEMPOTENT)
def create_portal_session(idempotency_key: IdempotencyKey = None):
    return idempotency.run(api, "portal", idempotency_key, None, lambda: billing.portal(api.tenant_context()))


api.snapstart()  # SnapStart's hooks (svc_core/platform/snapshot.py); a no-op outside Lambda
lambda_handler = api.handler
