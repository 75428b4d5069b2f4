"""Billing: the summary, invoices and ledger a tenant reads; credit purchases, plan subscriptions,
gift-card redemption and the customer portal; what the payment provider's webhooks confirm; and
the operators' gift cards and adjustments. The ledger itself is svc_core/domain/billing_ledger.py.

Currency: US dollars, amounts in cents; 1 credit = 1 USD = 1,000,000 micro-credits.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

from svc_core.adapters.payments import PaymentProvider
from svc_core.adapters.payments import provider as payment_provider
from svc_core.auth.context import TenantContext
from svc_core.contracts import cursors, plans
from svc_core.data import billing_table, tenants_table, usage_table
from svc_core.data.common import read_items
from svc_core.domain import audit, tenants
from svc_core.domain import billing_ledger as ledger
from svc_core.domain.fields.billing import PACKS
from svc_core.domain.paging import id_page
from svc_core.platform import ids, timeutil
from svc_core.platform.config import settings
from svc_core.platform.errors import Conflict, NotFound, RateLimited

if TYPE_CHECKING:
    from svc_core.domain.models.billing import BillingGiftCardRedeem, BillingPurchaseCreate, BillingSubscriptionCreate

CURRENCY = "usd"
GIFT_CARD_MAX_CREDITS = 10_000
REDEEM_FAILURES_PER_HOUR = 5
PAID_PLANS = tuple(p for p in plans.PLANS if plans.MONTHLY_PRICE_CENTS[p] > 0)


# ---- helpers -----------------------------------------------------------------------------------

def _balance_view(micro: int) -> dict[str, Any]:
    sign = "-" if micro < 0 else ""
    whole, part = divmod(abs(micro), ledger.MICRO_PER_CREDIT)
    return {"microCredits": micro, "credits": f"{sign}{whole}.{part:06d}"}


def _who(ctx: TenantContext) -> tuple[str, str]:
    return ctx.principal.subject, ctx.request_id


def _month(now: float) -> tuple[str, str]:
    moment = datetime.fromtimestamp(now, UTC)
    start = moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    end = start.replace(year=start.year + 1, month=1) if start.month == 12 else start.replace(month=start.month + 1)
    return timeutil.iso(start.timestamp()), timeutil.iso(end.timestamp())


def _invoice_url(invoice_id: str) -> str:
    return f"{settings().public_base_url}/api/v1/billing/invoices/{invoice_id}"


def _subscription_view(tenant: dict[str, Any], sub: dict[str, Any] | None) -> dict[str, Any]:
    sub = sub or {}
    return {"plan": tenant.get("plan", "free"), "status": sub.get("status", "none"),
            "pendingPlan": sub.get("pendingPlan"), "currentPeriodStart": sub.get("currentPeriodStart"),
            "currentPeriodEnd": sub.get("currentPeriodEnd"), "hostedUrl": sub.get("hostedUrl"),
            "invoiceId": sub.get("invoiceId"), "provider": sub.get("provider", settings().payment_provider),
            "testMode": sub.get("testMode", settings().payment_provider == "test")}


def _tenant(tenant_id: str) -> dict[str, Any]:
    tenant = tenants_table.get_consistent(tenant_id)
    if tenant is None:
        raise NotFound("No such tenant.", {"id": tenant_id, "resource": "tenant"})
    return tenant


def _customer(tenant_id: str, pay: PaymentProvider) -> tuple[str, dict[str, Any]]:
    """The tenant's customer at the provider (made on first need), and the subscription record."""
    sub = billing_table.subscription(tenant_id) or {}
    key = f"customer_{pay.name}"
    if not sub.get(key):
        sub[key] = pay.create_customer(tenant_id)
        billing_table.save_subscription(tenant_id, sub)
        if pay.name == "stripe":  # webhooks name the customer: find the tenant from it
            billing_table.put_customer(sub[key], tenant_id, timeutil.iso(timeutil.now()))
    return sub[key], sub


# ---- reads -------------------------------------------------------------------------------------

def _usage(records: list[dict[str, Any]]) -> dict[str, int]:
    totals = usage_table.summed(records)
    return {"calls": totals["calls"], "inputTokens": totals["inputTokens"], "outputTokens": totals["outputTokens"],
            "microCredits": totals["microCredits"]}


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def renew_test_mode(tenant_id: str, sub: dict[str, Any] | None) -> dict[str, Any] | None:
    """Test mode has no scheduler: a subscription whose period has ended is charged for the periods
    since, when the tenant's billing is next read. Each period's charge is marked by
    <subscription>:<period start>, so concurrent reads charge it once. (Stripe renews by itself and
    says so with invoice.paid.)"""
    if not _test_renewal_due(sub):
        return sub
    from svc_core.adapters.payments.testmode import PERIOD_SECONDS
    plan, now = sub.get("plan"), timeutil.now()
    while plan in PAID_PLANS and _epoch(sub["currentPeriodEnd"]) <= now:
        start = _epoch(sub["currentPeriodEnd"])
        settle_plan_period(tenant_id, plan, sub["reference"], f"{sub['reference']}:{sub['currentPeriodEnd']}", start,
                           start + PERIOD_SECONDS, None, ledger.SERVICE, None)
        fresh = billing_table.subscription(tenant_id) or {}
        if fresh.get("currentPeriodEnd") == sub["currentPeriodEnd"]:
            break  # not moved on (ended meanwhile): leave it
        sub = fresh
    return sub


def _test_renewal_due(sub: dict[str, Any] | None) -> bool:
    """Whether a test-mode subscription has a period ended and not yet charged."""
    return bool(sub and sub.get("status") == "active" and sub.get("provider") == "test"
                and sub.get("currentPeriodEnd") and sub.get("plan") in PAID_PLANS
                and _epoch(sub["currentPeriodEnd"]) <= timeutil.now())


def summary(ctx: TenantContext) -> dict[str, Any]:
    # The tenant, its balance and its subscription in one round trip (all read consistently).
    tenant, account, sub = read_items([tenants_table.consistent_read(ctx.tenant_id),
                                       billing_table.balance_read(ctx.tenant_id),
                                       billing_table.subscription_read(ctx.tenant_id)])
    if tenant is None:
        raise NotFound("No such tenant.", {"id": ctx.tenant_id, "resource": "tenant"})
    if account is None:
        account = ledger.ensure_account(ctx.tenant_id)
    if _test_renewal_due(sub):
        sub = renew_test_mode(ctx.tenant_id, sub)
        account = billing_table.balance(ctx.tenant_id)  # the periods charged since (here or by another read)
    active = bool(sub and sub.get("status") == "active" and sub.get("currentPeriodStart"))
    start, end = (sub["currentPeriodStart"], sub["currentPeriodEnd"]) if active else _month(timeutil.now())
    records = usage_table.records_between(ctx.tenant_id, start, end)
    runs = _usage([r for r in records if r.get("source") == "run"])
    chat = _usage([r for r in records if r.get("source") == "message"])
    plan = tenant.get("plan", "free")
    next_charge = None
    if active and plans.MONTHLY_PRICE_CENTS.get(plan, 0) > 0:
        next_charge = {"at": end, "plan": plan, "amount": plans.MONTHLY_PRICE_CENTS[plan], "currency": CURRENCY}
    return {"plan": plan, "subscription": _subscription_view(tenant, sub), "balance": _balance_view(account["balance"]),
            "usage": {"periodStart": start, "periodEnd": end, "agentRuns": runs, "chat": chat,
                      "totalMicroCredits": runs["microCredits"] + chat["microCredits"]},
            "nextCharge": next_charge,
            "packs": [{"id": k, "credits": v, "amount": v * 100, "currency": CURRENCY} for k, v in PACKS.items()],
            "currency": CURRENCY, "testMode": settings().payment_provider == "test"}


USAGE_SERIES_DAYS = 30       # the days a series covers when `from` is not given (`to` included)
USAGE_SERIES_MAX_DAYS = 92   # the longest series: a quarter of daily points is enough for a chart


def _day(text: str) -> date:
    return date.fromisoformat(text)   # the query's pattern (USAGE_DATE_PATTERN) admits only days that exist


def _usage_days(date_from: str | None, date_to: str | None) -> tuple[date, date]:
    """The first and last UTC days of a usage series: the query's, else the 30 days to today included.
    A range longer than USAGE_SERIES_MAX_DAYS keeps its last days; a `from` after `to` is an empty
    range (the answer says which days it covers)."""
    last = _day(date_to) if date_to else datetime.fromtimestamp(timeutil.now(), UTC).date()
    earliest = date.fromordinal(max(1, last.toordinal() - (USAGE_SERIES_MAX_DAYS - 1)))
    first = _day(date_from) if date_from else date.fromordinal(max(1, last.toordinal() - (USAGE_SERIES_DAYS - 1)))
    return max(first, earliest), last


def usage_series(ctx: TenantContext, date_from: str | None, date_to: str | None) -> dict[str, Any]:
    """The tenant's metered model calls summed per UTC day and model, by date then model; a day
    and model without calls has no entry."""
    first, last = _usage_days(date_from, date_to)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    if first <= last:
        # Up to the last instant of `last` (a record's created_at ends in "Z", before "~"): no day after
        # it is computed, so 9999-12-31 needs no day that the calendar lacks.
        start, end = f"{first.isoformat()}T00:00:00.000Z", f"{last.isoformat()}T23:59:59.999~"
        for r in usage_table.records_between(ctx.tenant_id, start, end):
            groups.setdefault((r["created_at"][:10], r["model"]), []).append(r)
    days = [{"date": day, "model": model, **_usage(records)} for (day, model), records in sorted(groups.items())]
    return {"from": first.isoformat(), "to": last.isoformat(), "models": sorted({d["model"] for d in days}),
            "days": days}


# The answers' fields, spelled out so that a read needs no model (test_billing_rules checks they match)
INVOICE_FIELDS = ("id", "number", "periodStart", "periodEnd", "currency", "amount", "status", "lines", "hostedUrl",
                  "reference", "provider", "testMode", "created_at")
ENTRY_FIELDS = ("id", "kind", "amount", "principal", "requestId", "reason", "reference", "created_at")
PURCHASE_FIELDS = ("id", "status", "credits", "microCredits", "amount", "currency", "checkoutUrl", "invoiceId",
                   "provider", "testMode", "created_at", "settled_at")


def list_invoices(ctx: TenantContext, limit: int, cursor: str | None) -> dict[str, Any]:
    items, last_id = billing_table.list_invoices(ctx.tenant_id, limit, cursors.id_after(cursor, "inv"))
    return id_page(items, last_id, lambda i: {k: i.get(k) for k in INVOICE_FIELDS})


def get_invoice(ctx: TenantContext, invoice_id: str) -> dict[str, Any]:
    found = billing_table.get_invoice(ctx.tenant_id, invoice_id) if ids.is_id(invoice_id, "inv") else None
    if found is None:
        raise NotFound("The invoice does not exist.", {"id": invoice_id, "resource": "invoice"})
    return {k: found.get(k) for k in INVOICE_FIELDS}


def list_ledger(ctx: TenantContext, limit: int, cursor: str | None) -> dict[str, Any]:
    after = cursors.id_after(cursor, "led")
    items, last_id = billing_table.list_entries(ctx.tenant_id, limit, after)
    if not items and after is None:  # nothing yet: the account may be unopened (its welcome grant comes first)
        ledger.ensure_account(ctx.tenant_id)
        items, last_id = billing_table.list_entries(ctx.tenant_id, limit, after)
    return id_page(items, last_id, lambda i: {k: i.get(k) for k in ENTRY_FIELDS})


# ---- credit purchases --------------------------------------------------------------------------

def _purchase_view(p: dict[str, Any]) -> dict[str, Any]:
    return {k: p.get(k) for k in PURCHASE_FIELDS}


def purchase_credits(ctx: TenantContext, body: BillingPurchaseCreate) -> dict[str, Any]:
    credits = PACKS[body.pack] if body.pack else body.credits
    pay = payment_provider()
    customer, _ = _customer(ctx.tenant_id, pay)
    principal, request_id = _who(ctx)
    purchase = {"id": ids.new_id("pur"), "status": "pending", "credits": credits,
                "microCredits": credits * ledger.MICRO_PER_CREDIT, "amount": credits * 100, "currency": CURRENCY,
                "checkoutUrl": None, "invoiceId": None, "provider": pay.name, "testMode": pay.test_mode,
                "principal": principal, "requestId": request_id, "sourceIp": ctx.source_ip,
                "created_at": timeutil.iso(timeutil.now()), "settled_at": None}
    billing_table.put_purchase(ctx.tenant_id, purchase)
    try:
        payment = pay.pay(ctx.tenant_id, customer, purchase)
    except Exception:
        billing_table.fail_purchase(ctx.tenant_id, purchase["id"], {"settled_at": timeutil.iso(timeutil.now())})
        raise
    if payment.status == "succeeded":
        settle_purchase(ctx.tenant_id, purchase["id"], payment.reference, principal, request_id)
    elif payment.status == "failed":
        billing_table.fail_purchase(ctx.tenant_id, purchase["id"], {"providerReference": payment.reference,
                                                                    "settled_at": timeutil.iso(timeutil.now())})
    else:
        billing_table.save_purchase_fields(ctx.tenant_id, purchase["id"], {
            "providerReference": payment.reference, "checkoutUrl": payment.checkout_url})
    return _purchase_view(billing_table.get_purchase(ctx.tenant_id, purchase["id"]))


def settle_purchase(tenant_id: str, purchase_id: str, reference: str, principal: str, request_id: str | None,
                    paid_cents: int | None = None) -> bool:
    """Credit a paid purchase, with its invoice, once; False when it was settled before (or is
    unknown, or the amount paid is not its price)."""
    purchase = billing_table.get_purchase(tenant_id, purchase_id)
    if purchase is None or purchase["status"] != "pending":
        return False
    if paid_cents is not None and paid_cents != purchase["amount"]:
        return False
    ledger.ensure_account(tenant_id)  # the welcome grant comes first in the ledger
    now = timeutil.now()
    stamp = timeutil.iso(now)
    invoice_id = ids.new_id("inv")
    invoice = {"id": invoice_id, "periodStart": stamp, "periodEnd": stamp, "currency": purchase["currency"],
               "amount": purchase["amount"], "status": "paid",
               "lines": [{"description": f"{purchase['credits']} credits", "kind": "purchase", "quantity": 1,
                          "unitAmount": purchase["amount"], "amount": purchase["amount"],
                          "microCredits": purchase["microCredits"]}],
               "hostedUrl": _invoice_url(invoice_id), "reference": purchase_id, "provider": purchase["provider"],
               "testMode": purchase["testMode"], "created_at": stamp}
    entry = ledger.new_entry("purchase", purchase["microCredits"], principal=principal, request_id=request_id,
                             reason=f"purchase of {purchase['credits']} credits ({purchase['provider']} {reference})",
                             reference=purchase_id, now=now)
    # Recorded for whoever bought (the purchase's principal, from where they asked), whenever it is paid.
    bought = audit.entry(tenant_id, "billing.credits_purchased", "purchase", purchase_id,
                         actor=audit.actor_named(purchase.get("principal") or ""),
                         source_ip=purchase.get("sourceIp") or "", request_id=purchase.get("requestId"),
                         changes=audit.changed({}, {"credits": purchase["credits"], "amount": purchase["amount"],
                                                    "currency": purchase["currency"], "invoiceId": invoice_id}),
                         now=now)
    try:
        ledger.record(tenant_id, entry, invoice=invoice, extra=[billing_table.settle_purchase(
            tenant_id, purchase_id, "succeeded", {"providerReference": reference, "invoiceId": invoice_id,
                                                  "settled_at": stamp, "checkoutUrl": None}), bought])
    except billing_table.Refused:
        return False  # settled meanwhile (a webhook and its retry at once)
    return True


def fail_purchase(tenant_id: str, purchase_id: str) -> bool:
    return billing_table.fail_purchase(tenant_id, purchase_id, {"settled_at": timeutil.iso(timeutil.now())})


# ---- subscriptions -----------------------------------------------------------------------------

def change_subscription(ctx: TenantContext, body: BillingSubscriptionCreate) -> dict[str, Any]:
    tenant = _tenant(ctx.tenant_id)
    sub = billing_table.subscription(ctx.tenant_id) or {}
    plan = body.plan
    if plan == tenant.get("plan", "free") and sub.get("status") != "incomplete":
        raise Conflict(f"The tenant is on the {plan} plan already.", {"resource": "subscription", "plan": plan})
    pay = payment_provider()
    if sub.get("reference") and sub.get("status") in ("active", "incomplete"):
        pay.cancel(sub["reference"])  # a change is a new subscription at the new price (no proration)
    now = timeutil.iso(timeutil.now())
    if plan == "free":
        sub.update(status="canceled", pendingPlan=None, reference=None, hostedUrl=None, invoiceId=None,
                   currentPeriodStart=None, currentPeriodEnd=None, updated_at=now)
        billing_table.save_subscription(ctx.tenant_id, sub)
        tenant = tenants.set_plan(ctx.tenant_id, "free", ctx=ctx)
        return _subscription_view(tenant, sub)
    customer, sub = _customer(ctx.tenant_id, pay)
    started = pay.subscribe(ctx.tenant_id, customer, plan, idempotency_key=ids.new_id("subreq"))
    sub.update(reference=started.reference, provider=pay.name, testMode=pay.test_mode, updated_at=now)
    if started.status == "active" and started.invoice_reference:
        principal, request_id = _who(ctx)
        settle_plan_period(ctx.tenant_id, plan, started.reference, started.invoice_reference,
                           started.period_start, started.period_end, started.hosted_url, principal, request_id,
                           sub=sub, ctx=ctx)
    else:
        sub.update(status="incomplete", pendingPlan=plan, hostedUrl=started.hosted_url)
        billing_table.save_subscription(ctx.tenant_id, sub)
    return _subscription_view(_tenant(ctx.tenant_id), billing_table.subscription(ctx.tenant_id))


def settle_plan_period(tenant_id: str, plan: str, reference: str, invoice_reference: str, period_start: float | None,
                       period_end: float | None, hosted_url: str | None, principal: str, request_id: str | None,
                       sub: dict[str, Any] | None = None, ctx: TenantContext | None = None) -> bool:
    """A paid period of a plan: its invoice, its price credited (plan_charge), the subscription active
    and the tenant on the plan. Once per provider invoice: False when it was credited before. A
    change of plan is recorded by the caller in ctx (a plan paid at once), else by the principal."""
    sub = dict(sub if sub is not None else (billing_table.subscription(tenant_id) or {}))
    cents = plans.MONTHLY_PRICE_CENTS[plan]
    ledger.ensure_account(tenant_id)
    now = timeutil.now()
    start, end = timeutil.iso(period_start or now), timeutil.iso(period_end or now + 30 * 24 * 3600)
    invoice_id = ids.new_id("inv")
    micro = cents * ledger.MICRO_PER_CENT
    invoice = {"id": invoice_id, "periodStart": start, "periodEnd": end, "currency": CURRENCY, "amount": cents,
               "status": "paid", "lines": [{"description": f"{plan} plan, {start[:10]} to {end[:10]}",
                                            "kind": "plan_charge", "quantity": 1, "unitAmount": cents,
                                            "amount": cents, "microCredits": micro}],
               "hostedUrl": hosted_url or _invoice_url(invoice_id), "reference": invoice_reference,
               "provider": sub.get("provider", settings().payment_provider),
               "testMode": bool(sub.get("testMode", settings().payment_provider == "test")),
               "created_at": timeutil.iso(now)}
    sub.update(status="active", plan=plan, pendingPlan=None, reference=reference, currentPeriodStart=start,
               currentPeriodEnd=end, hostedUrl=None, invoiceId=invoice_id, updated_at=timeutil.iso(now))
    entry = ledger.new_entry("plan_charge", micro, principal=principal, request_id=request_id,
                             reason=f"{plan} plan period {start[:10]} to {end[:10]} paid (its price as credits)",
                             reference=invoice_id, now=now)
    try:
        ledger.record(tenant_id, entry, invoice=invoice, extra=[
            billing_table.mark_reference(tenant_id, invoice_reference, timeutil.iso(now)),
            billing_table.put_subscription(tenant_id, sub)])
    except billing_table.Refused:
        return False
    tenants.set_plan(tenant_id, plan, ctx=ctx, actor=None if ctx else audit.actor_named(principal))
    return True


def end_subscription(tenant_id: str, reference: str) -> bool:
    """The provider ended the subscription (cancelled, unpaid): the tenant is back on free."""
    sub = billing_table.subscription(tenant_id) or {}
    if sub.get("reference") != reference:
        return False
    sub.update(status="canceled", pendingPlan=None, reference=None, currentPeriodStart=None, currentPeriodEnd=None,
               updated_at=timeutil.iso(timeutil.now()))
    billing_table.save_subscription(tenant_id, sub)
    tenants.set_plan(tenant_id, "free")
    return True


# ---- the portal --------------------------------------------------------------------------------

def portal(ctx: TenantContext) -> dict[str, Any]:
    pay = payment_provider()
    customer, _ = _customer(ctx.tenant_id, pay)
    return {"url": pay.portal_url(customer, settings().public_base_url), "testMode": pay.test_mode}


# ---- gift cards --------------------------------------------------------------------------------

_CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford's base 32: no I, L, O, U


def normalise_code(code: str) -> str:
    return "".join(code.split()).upper()


def code_hash(code: str) -> str:
    """SHA-256 of the normalised code. Enough here (no salt, no slow hash): a code holds 100 random
    bits, so nobody can guess one or invert the hash, and equal codes must hash equally to be found."""
    return hashlib.sha256(normalise_code(code).encode()).hexdigest()


def new_code() -> str:
    groups = ["".join(secrets.choice(_CODE_ALPHABET) for _ in range(5)) for _ in range(4)]  # 20 x 5 bits
    return "GC-" + "-".join(groups)


def issue_gift_cards(credits: int, count: int, expires_in_days: int, operator: str) -> list[dict[str, Any]]:
    """Operator command: new gift cards worth `credits` each; the codes are shown only here."""
    if not 1 <= credits <= GIFT_CARD_MAX_CREDITS or not 1 <= count <= 1000 or not 1 <= expires_in_days <= 3650:
        raise ValueError(f"credits 1 to {GIFT_CARD_MAX_CREDITS}, count 1 to 1000, expiry 1 to 3650 days")
    now = timeutil.now()
    issued = []
    for _ in range(count):
        code = new_code()
        card = {"id": ids.new_id("gc"), "credits": credits, "microCredits": credits * ledger.MICRO_PER_CREDIT,
                "status": "active", "createdBy": operator, "created_at": timeutil.iso(now),
                "expires_at": timeutil.iso(now + expires_in_days * 24 * 3600)}
        billing_table.put_card(code_hash(code), card)
        issued.append({"id": card["id"], "code": code, "credits": credits, "expires_at": card["expires_at"]})
    return issued


def _hour(now: float) -> str:
    return str(int(now) // 3600)


def _failed_redemption(tenant_id: str, now: float) -> None:
    billing_table.count_failure(tenant_id, _hour(now), int(now) // 3600 * 3600 + 7200)


def redeem_gift_card(ctx: TenantContext, body: BillingGiftCardRedeem) -> dict[str, Any]:
    now = timeutil.now()
    if billing_table.failures(ctx.tenant_id, _hour(now)) >= REDEEM_FAILURES_PER_HOUR:
        reset = int(now) // 3600 * 3600 + 3600
        raise RateLimited(f"More than {REDEEM_FAILURES_PER_HOUR} failed gift-card redemptions this hour.",
                          {"limit": REDEEM_FAILURES_PER_HOUR, "resetAt": reset, "reason": "gift_card_failures"},
                          {"Retry-After": str(max(1, reset - int(now)))})
    digest = code_hash(body.code)
    card = billing_table.get_card(digest)
    if card is None:
        _failed_redemption(ctx.tenant_id, now)
        raise NotFound("No gift card has this code.", {"resource": "gift_card"})
    stamp = timeutil.iso(now)
    if card["status"] != "active" or card["expires_at"] <= stamp:
        _failed_redemption(ctx.tenant_id, now)
        reason = "expired" if card["status"] == "active" else "already_redeemed"
        raise Conflict(f"The gift card cannot be redeemed ({reason.replace('_', ' ')}).",
                       {"resource": "gift_card", "reason": reason})
    principal, request_id = _who(ctx)
    ledger.ensure_account(ctx.tenant_id)
    entry = ledger.new_entry("gift_card", card["microCredits"], principal=principal, request_id=request_id,
                             reason=f"gift card {card['id']} redeemed", reference=card["id"], now=now)
    redeemed = audit.entry(ctx.tenant_id, "billing.gift_card_redeemed", "gift_card", card["id"], ctx=ctx,
                           changes=audit.changed({}, {"credits": card["credits"]}), now=now)
    try:
        ledger.record(ctx.tenant_id, entry, extra=[billing_table.redeem_card(digest, ctx.tenant_id, principal, stamp),
                                                   redeemed])
    except billing_table.Refused:
        _failed_redemption(ctx.tenant_id, now)
        raise Conflict("The gift card cannot be redeemed (already redeemed).",
                       {"resource": "gift_card", "reason": "already_redeemed"}) from None
    return {"giftCardId": card["id"], "microCredits": card["microCredits"], "entryId": entry["id"],
            "balance": _balance_view(ledger.balance_of(ctx.tenant_id))}


# ---- operators ---------------------------------------------------------------------------------

def adjust(tenant_id: str, micro_credits: int, reason: str, operator: str) -> dict[str, Any]:
    """Operator command: add (or, negative, take) micro-credits, with the reason in the ledger."""
    if not micro_credits or abs(micro_credits) > 10**15:
        raise ValueError("a non-zero amount of at most 10^15 micro-credits")
    _tenant(tenant_id)
    ledger.ensure_account(tenant_id)
    entry = ledger.new_entry("adjustment", micro_credits, principal=f"operator:{operator}", request_id=None,
                             reason=reason, reference=None)
    return ledger.record(tenant_id, entry)


# ---- the payment provider's webhooks (Stripe) ----------------------------------------------------

STRIPE = "stripe:webhook"   # the principal of what a Stripe event changes


def _period(invoice: dict[str, Any]) -> tuple[float | None, float | None]:
    line = ((invoice.get("lines") or {}).get("data") or [{}])[0]
    period = line.get("period") or {}
    return period.get("start") or invoice.get("period_start"), period.get("end") or invoice.get("period_end")


def _subscription_of(invoice: dict[str, Any]) -> str | None:
    sub = invoice.get("subscription")  # older API versions; newer ones: parent.subscription_details
    if sub is None:
        sub = ((invoice.get("parent") or {}).get("subscription_details") or {}).get("subscription")
    return sub if isinstance(sub, str) or sub is None else sub.get("id")


def handle_stripe_event(event: dict[str, Any]) -> dict[str, Any]:
    """Apply a verified Stripe event; {"applied": bool, "type"}. Every change is made once: a
    replayed or retried event (same object) finds it made and applies nothing."""
    kind, obj = event.get("type", ""), (event.get("data") or {}).get("object") or {}
    applied = False
    if kind in ("checkout.session.completed", "checkout.session.async_payment_succeeded"):
        meta = obj.get("metadata") or {}
        if obj.get("payment_status") == "paid" and meta.get("tenantId") and meta.get("purchaseId"):
            applied = settle_purchase(meta["tenantId"], meta["purchaseId"], obj.get("id", ""), STRIPE, event.get("id"),
                                      paid_cents=obj.get("amount_total"))
    elif kind in ("checkout.session.expired", "checkout.session.async_payment_failed"):
        meta = obj.get("metadata") or {}
        if meta.get("tenantId") and meta.get("purchaseId"):
            applied = fail_purchase(meta["tenantId"], meta["purchaseId"])
    elif kind == "invoice.paid":
        tenant_id = billing_table.tenant_of_customer(obj.get("customer") or "")
        sub = billing_table.subscription(tenant_id) if tenant_id else None
        reference = _subscription_of(obj)
        if sub and reference and sub.get("reference") == reference:
            plan = sub.get("pendingPlan") or sub.get("plan")
            if plan in PAID_PLANS:
                start, end = _period(obj)
                applied = settle_plan_period(tenant_id, plan, reference, obj.get("id", ""), start, end,
                                             obj.get("hosted_invoice_url"), STRIPE, event.get("id"))
    elif kind == "customer.subscription.deleted":
        tenant_id = billing_table.tenant_of_customer(obj.get("customer") or "")
        if tenant_id:
            applied = end_subscription(tenant_id, obj.get("id", ""))
    return {"received": True, "type": kind, "applied": applied}


def import_entries(tenant_id: str, rows: list[dict[str, Any]], operator: str) -> int:
    """Operator command: replay entries into a tenant's ledger (a migration from another system):
    each row {kind, amount, reason, reference?}; usage comes only from usage records, so not here.
    Every row is checked before any is written; the count written."""
    _tenant(tenant_id)
    entries = []
    for number, row in enumerate(rows, 1):
        kind, amount = row.get("kind"), row.get("amount")
        if kind not in ledger.KINDS or kind == "usage" or not isinstance(amount, int) or isinstance(amount, bool) \
                or not amount or not isinstance(row.get("reason"), str) or not row["reason"]:
            raise ValueError(f"row {number}: needs kind (not usage), a non-zero integer amount and a reason")
        entries.append(ledger.new_entry(kind, amount, principal=f"operator:{operator}", request_id=None,
                                        reason=row["reason"], reference=row.get("reference")))
    ledger.record_batch(tenant_id, entries)
    return len(entries)
