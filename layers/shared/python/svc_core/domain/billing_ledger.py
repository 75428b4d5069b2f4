"""The credit ledger: every change of a tenant's balance is an entry, written in the same DynamoDB
transaction as the change, so the balance always equals the sum of the entries.

Money: integer micro-credits everywhere (1 credit = 1,000,000 micro-credits; usage is priced in
them by svc_core/domain/metering.py). Credits are bought in US cents at 1 credit = 1 USD, so 1 cent =
10,000 micro-credits.

Entry kinds: grant (what a new tenant starts with), purchase, gift_card, plan_charge (a paid plan
period's price, credited as credits), usage (a model call, negative), refund (negative), adjustment
(an operator's, either sign). Each says who (the principal: usr_…, key_…, operator:…, or service),
when, why, the request id and what it refers to (pur_…, gc_…, a usage record, inv_…).

A tenant's account is opened on first use: its balance item, and the welcome grant
(BILLING_WELCOME_MICRO_CREDITS, one credit by default) when the tenant has it. The welcome credit is
once per user: their first tenant has it (the tenant item's welcomeGrant, decided at its creation
with a claim on the user, domain/tenants.py), any other tenant they create opens at 0. A tenant
created before that was decided (no welcomeGrant) keeps its grant.
"""

from __future__ import annotations

import sys
from typing import Any

from svc_core.data import billing_table, tenants_table, usage_table
from svc_core.data.common import ConditionFailed
from svc_core.platform import ids, timeutil
from svc_core.platform.config import settings
from svc_core.platform.errors import PaymentRequired

MICRO_PER_CREDIT = 1_000_000
MICRO_PER_CENT = 10_000
KINDS = ("grant", "purchase", "gift_card", "plan_charge", "usage", "refund", "adjustment")
SERVICE = "service"


def current_request() -> tuple[str, str | None]:
    """(principal, request id) of the API request being served in this context, if any: a usage
    debit names the caller that started the run or message."""
    api = sys.modules.get("svc_core.http.api")
    state = api._state.get(None) if api is not None else None
    if state is None:
        return SERVICE, None
    return (state.principal.subject if state.principal else SERVICE), state.request_id


def new_entry(kind: str, amount: int, *, principal: str, request_id: str | None, reason: str,
              reference: str | None, entry_id: str | None = None, now: float | None = None) -> dict[str, Any]:
    if kind not in KINDS:
        raise ValueError(f"unknown ledger entry kind {kind!r}")
    if not isinstance(amount, int) or isinstance(amount, bool):
        raise TypeError("amounts are integer micro-credits")
    return {"id": entry_id or ids.new_id("led"), "kind": kind, "amount": amount, "principal": principal,
            "requestId": request_id, "reason": reason, "reference": reference,
            "created_at": timeutil.iso(timeutil.now() if now is None else now)}


def ensure_account(tenant_id: str) -> dict[str, Any]:
    """The tenant's balance item, opened (with the welcome grant, if the tenant has it) if the
    tenant has none yet."""
    found = billing_table.balance(tenant_id)
    if found is not None:
        return found
    tenant = tenants_table.get_consistent(tenant_id) or {}
    grant = settings().billing_welcome_micro_credits if tenant.get("welcomeGrant", True) else 0
    entry = new_entry("grant", grant, principal=SERVICE, request_id=None, reason="welcome grant of a new tenant",
                      reference=None) if grant else None
    items = [billing_table.open_account(tenant_id, timeutil.iso(timeutil.now()), entry)]
    if entry:
        items.append(billing_table.put_entry(tenant_id, entry))
    try:
        billing_table.write(items)
    except billing_table.Refused:
        pass  # opened meanwhile by another request, or not written at all (below)
    opened = billing_table.balance(tenant_id)
    if opened is None:  # refused, and nobody else opened it: nothing was written; the client may retry
        raise ConditionFailed()
    return opened


def balance_of(tenant_id: str) -> int:
    return ensure_account(tenant_id)["balance"]


def require_credit(tenant_id: str) -> None:
    """Before a run or a chat message calls a model: its balance must be above zero, else 402.
    (The cost is known only after the calls; they are debited as they happen, so a balance can
    end a little below zero, and the next run or message is then refused.)"""
    balance = balance_of(tenant_id)
    if balance <= 0:
        raise PaymentRequired("The tenant's credit balance is used up: buy credits or redeem a gift card.",
                              {"balanceMicroCredits": balance})


def record(tenant_id: str, entry: dict[str, Any], *, extra: list[dict[str, Any]] | None = None,
           invoice: dict[str, Any] | None = None) -> dict[str, Any]:
    """Add one entry and change the balance by its amount in one transaction, with the extra writes
    (whose conditions make a credit happen once) and an invoice, numbered per tenant.
    billing_table.Refused(index) when an extra write's condition fails (index 2 is extra[0])."""
    account = ensure_account(tenant_id) if invoice is not None else None  # a plain entry needs no read
    for _ in range(5):
        now_iso = timeutil.iso(timeutil.now())
        items = [billing_table.add_to_balance(tenant_id, entry["amount"], now_iso,
                                              account["invoiceCount"] if invoice else None),
                 billing_table.put_entry(tenant_id, entry), *(extra or [])]
        if invoice is not None:
            invoice["number"] = f"{tenant_id[-8:]}-{account['invoiceCount'] + 1:05d}"
            items.append(billing_table.put_invoice(tenant_id, invoice))
        try:
            billing_table.write(items)
            return entry
        except billing_table.Refused as refused:
            if refused.index != 0:
                raise
            # the account did not exist yet, or another invoice took the number: read it, again
            account = ensure_account(tenant_id)
    raise billing_table.Refused(0)


BATCH = 99   # a transaction holds at most 100 writes: the balance and 99 entries


def record_batch(tenant_id: str, entries: list[dict[str, Any]]) -> None:
    """Add many entries (an operator's import or replay of a ledger), up to 99 per transaction,
    each transaction changing the balance by its entries' sum: the balance still equals the sum
    of the entries at every moment, whatever else writes meanwhile."""
    ensure_account(tenant_id)
    for start in range(0, len(entries), BATCH):
        chunk = entries[start:start + BATCH]
        billing_table.write([
            billing_table.add_to_balance(tenant_id, sum(e["amount"] for e in chunk), timeutil.iso(timeutil.now()),
                                         entries=len(chunk)),
            *(billing_table.put_entry(tenant_id, e) for e in chunk)])


def record_usage(usage_record: dict[str, Any]) -> dict[str, Any] | None:
    """Store a metered call's usage record and debit its cost, in one transaction: the record is the
    single source of the debit, whose entry id is derived from the record's own (sk's ULID), so a
    record can never be debited twice. The entry, or None for a call that cost nothing."""
    tenant_id, cost = usage_record["tenantId"], usage_record["microCredits"]
    if cost <= 0:
        usage_table.record(usage_record)
        return None
    principal, request_id = current_request()
    entry = new_entry("usage", -cost, principal=principal, request_id=request_id,
                      reason=f"{usage_record['model']} call of {usage_record['source']} {usage_record['sourceId']}",
                      reference=usage_record["sourceId"], entry_id="led_" + usage_record["sk"].rsplit("#", 1)[1])
    return record(tenant_id, entry, extra=[usage_table.put_new(usage_record)])
