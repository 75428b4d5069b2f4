"""Billing's request and response models (svc_core/domain/models says why they live apart)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from svc_core.contracts import plans
from svc_core.domain.fields.billing import MAX_CUSTOM_CREDITS, MIN_CUSTOM_CREDITS, PACKS
from svc_core.domain.models.common import Page, named
from svc_core.domain.models.request_body import RequestBody, whole_number


class BillingPurchaseCreate(RequestBody):
    # Exactly one of the two, null counting as absent: the schema says so (a body matching both
    # branches, or neither, is invalid) and _one_of checks the same.
    model_config = ConfigDict(json_schema_extra={"oneOf": [
        {"required": ["pack"], "properties": {"pack": {"type": "string"}}},
        {"required": ["credits"], "properties": {"credits": {"type": "integer"}}},
    ]})

    pack: Literal[tuple(PACKS)] | None = Field(  # type: ignore[valid-type]
        default=None, examples=[next(iter(PACKS))],
        description="one of the packs: " + ", ".join(f"{k} ({v} credits)" for k, v in PACKS.items()))
    credits: whole_number(MIN_CUSTOM_CREDITS, MAX_CUSTOM_CREDITS) | None = Field(  # type: ignore[valid-type]
        default=None, description=f"a custom amount: whole credits, {MIN_CUSTOM_CREDITS} to {MAX_CUSTOM_CREDITS:,}")

    @model_validator(mode="after")
    def _one_of(self) -> BillingPurchaseCreate:
        if (self.pack is None) == (self.credits is None):
            raise ValueError("send exactly one of pack and credits")
        return self


class BillingSubscriptionCreate(RequestBody):
    plan: Literal[plans.PLANS] = Field(  # type: ignore[valid-type]
        description="the plan to be on: free cancels the subscription, any other starts or changes it",
        examples=["starter"])


class BillingGiftCardRedeem(RequestBody):
    code: Annotated[str, StringConstraints(min_length=8, max_length=64, pattern=r"^[A-Za-z0-9 -]+$")] = Field(
        description="the gift card's code as printed, e.g. GC-7K2QD-M9XTR-4HVN8-PJ3WE (case and spaces do not matter)")


class BillingMoneyLine(BaseModel):
    description: str
    kind: str = Field(description="purchase or plan_charge")
    quantity: int
    unitAmount: int = Field(description="cents")
    amount: int = Field(description="cents")
    microCredits: int = Field(description="credits this line added to the balance")


class BillingInvoice(BaseModel):
    id: str = Field(examples=["inv_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
    number: str = Field(description="per tenant, in order: <last 8 characters of the tenant id>-00001")
    periodStart: str
    periodEnd: str
    currency: str
    amount: int = Field(description="total in cents")
    status: str = Field(description="paid")
    lines: list[BillingMoneyLine]
    hostedUrl: str | None = Field(description="where the invoice can be seen: Stripe's hosted invoice page, "
                                                 "or this API's GET /billing/invoices/{id}")
    reference: str = Field(description="what was paid: the purchase (pur_…) or the provider's invoice")
    provider: str
    testMode: bool
    created_at: str


BillingInvoicePage = named("BillingInvoicePage", Page[BillingInvoice])


class BillingLedgerEntry(BaseModel):
    id: str = Field(examples=["led_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
    kind: str = Field(description="grant, purchase, gift_card, plan_charge, usage, refund or adjustment")
    amount: int = Field(description="micro-credits: positive adds to the balance, negative takes from it")
    principal: str = Field(description="who: usr_…, key_…, operator:<name>, or service")
    requestId: str | None = Field(description="the API request that caused it, if one did")
    reason: str
    reference: str | None = Field(description="what it is for: pur_…, gc_…, run_…, msg_…, inv_…")
    created_at: str


BillingLedgerPage = named("BillingLedgerPage", Page[BillingLedgerEntry])


class BillingUsage(BaseModel):
    calls: int
    inputTokens: int
    outputTokens: int
    microCredits: int


class BillingPeriodUsage(BaseModel):
    periodStart: str
    periodEnd: str
    agentRuns: BillingUsage
    chat: BillingUsage
    totalMicroCredits: int


class BillingSubscriptionState(BaseModel):
    plan: str
    status: str = Field(description="none, active, incomplete (waiting for payment) or canceled")
    pendingPlan: str | None = Field(description="the plan an incomplete subscription will start when paid")
    currentPeriodStart: str | None
    currentPeriodEnd: str | None
    hostedUrl: str | None = Field(description="where to pay an incomplete subscription")
    invoiceId: str | None = Field(description="the invoice of the period just charged")
    provider: str
    testMode: bool


class BillingNextCharge(BaseModel):
    at: str
    plan: str
    amount: int = Field(description="cents")
    currency: str


class BillingBalance(BaseModel):
    microCredits: int
    credits: str = Field(description="the same, as a decimal string of credits (6 places)")


class BillingPack(BaseModel):
    id: str
    credits: int
    amount: int = Field(description="cents")
    currency: str


class BillingSummary(BaseModel):
    plan: str
    subscription: BillingSubscriptionState
    balance: BillingBalance
    usage: BillingPeriodUsage
    nextCharge: BillingNextCharge | None
    packs: list[BillingPack]
    currency: str
    testMode: bool


class BillingUsageDay(BaseModel):
    date: str = Field(description="the UTC day, YYYY-MM-DD", examples=["2026-11-27"])
    model: str = Field(description="the model as its calls were metered", examples=["anthropic:claude-haiku-4-5"])
    calls: int = Field(description="metered calls of this model on this day (at least 1)")
    inputTokens: int
    outputTokens: int
    microCredits: int = Field(description="what these calls cost")


class BillingUsageSeries(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: str = Field(alias="from", description="the first UTC day, YYYY-MM-DD")
    to: str = Field(description="the last UTC day, YYYY-MM-DD (included)")
    models: list[str] = Field(description="the models in days, sorted")
    days: list[BillingUsageDay] = Field(description="by date, then model; a day without calls of a model has no "
                                                    "entry")


class BillingPurchase(BaseModel):
    id: str = Field(examples=["pur_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
    status: str = Field(description="succeeded (credited), pending (pay at checkoutUrl) or failed")
    credits: int
    microCredits: int
    amount: int = Field(description="cents")
    currency: str
    checkoutUrl: str | None
    invoiceId: str | None
    provider: str
    testMode: bool
    created_at: str
    settled_at: str | None


class BillingRedemption(BaseModel):
    giftCardId: str
    microCredits: int
    entryId: str
    balance: BillingBalance


class BillingPortal(BaseModel):
    url: str
    testMode: bool
