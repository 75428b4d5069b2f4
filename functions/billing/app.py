"""Billing: summary, invoices and ledger (any credential of the tenant); the usage series
(billing:read); credit purchases, the subscription, gift-card redemption and the portal
(billing:write, each honouring Idempotency-Key)."""

from __future__ import annotations  # the models are named lazily (svc_core/domain/models)

from typing import Annotated

from svc_core.domain import billing
from svc_core.domain.fields.billing import USAGE_DATE_PATTERN
from svc_core.domain.paging import DEFAULT_LIMIT, MAX_LIMIT
from svc_core.http.api import AUTHENTICATED, Api
from svc_core.http.params import IdCursor, Query
from svc_core.platform.lazy import lazy_module

models = lazy_module("svc_core.domain.models.billing")
api = Api()
TAGS = ["Billing"]


@api.get("/api/v1/billing/summary", scope=AUTHENTICATED, response_model="models.BillingSummary", tags=TAGS,
         summary="Plan, subscription, balance, this period's usage by kind, and the next charge")
def get_summary():
    return billing.summary(api.tenant_context())


@api.get("/api/v1/billing/usage", scope="billing:read", response_model="models.BillingUsageSeries", tags=TAGS,
         summary="Metered model calls summed per UTC day and per model",
         description=f"Both days included; without `from` and `to`, the {billing.USAGE_SERIES_DAYS} days to today. "
                     f"At most {billing.USAGE_SERIES_MAX_DAYS} days: a longer range keeps its last "
                     f"{billing.USAGE_SERIES_MAX_DAYS} days, and `from` after `to` is an empty range; the answer's "
                     "`from` and `to` are the days it covers. A day without calls of a model has no entry "
                     "in `days` (so a day without any call has none).")
def get_usage_series(date_from: Annotated[str | None, Query(
                         alias="from", pattern=USAGE_DATE_PATTERN, examples=["2026-11-01"],
                         description="the first UTC day, YYYY-MM-DD (default: 29 days before `to`)")] = None,
                     to: Annotated[str | None, Query(
                         pattern=USAGE_DATE_PATTERN, examples=["2026-11-30"],
                         description="the last UTC day, YYYY-MM-DD, included (default: today)")] = None):
    return billing.usage_series(api.tenant_context(), date_from, to)


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
          response_model="models.BillingPurchase", tags=TAGS, errors=(409, 422, 502), idempotent="purchase",
          summary="Buy credits: a pack or a custom amount",
          description="Test mode settles at once (status succeeded, credited, invoiced); Stripe answers pending "
                      "with a checkoutUrl and credits when its webhook confirms the payment.")
def purchase_credits(body: models.BillingPurchaseCreate):
    return billing.purchase_credits(api.tenant_context(), body)


@api.post("/api/v1/billing/subscription/create", scope="billing:write", status=201,
          response_model="models.BillingSubscriptionState", tags=TAGS, errors=(409, 422, 502), idempotent="subscription",
          summary="Start or change the subscription (free cancels it); the plan, features and rate limit follow",
          description="A paid period is invoiced and its price credited as credits (plan_charge).")
def create_subscription(body: models.BillingSubscriptionCreate):
    return billing.change_subscription(api.tenant_context(), body)


@api.post("/api/v1/billing/gift-cards/redeem", scope="billing:write", response_model="models.BillingRedemption",
          tags=TAGS, errors=(409, 422), idempotent="redeem", summary="Redeem a gift card's code: its credits, once",
          description="Unknown code: 404; redeemed or expired: 409; more than 5 failed attempts in an hour: 429.")
def redeem_gift_card(body: models.BillingGiftCardRedeem):
    return billing.redeem_gift_card(api.tenant_context(), body)


@api.post("/api/v1/billing/portal", scope="billing:write", response_model="models.BillingPortal", tags=TAGS,
          errors=(409, 422, 502), idempotent="portal",
          summary="A URL where the customer manages payment methods and invoices", description="No body.")
def create_portal_session():
    return billing.portal(api.tenant_context())


api.snapstart()  # SnapStart's hooks (svc_core/platform/snapshot.py); a no-op outside Lambda
lambda_handler = api.handler
