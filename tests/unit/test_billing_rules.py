"""Billing rules without AWS: amounts, gift-card codes and their hashes, ledger entries, periods,
the Stripe webhook's signature check, the Idempotency-Key's shape."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from svc_core.contracts import plans
from svc_core.domain import billing, billing_ledger
from svc_core.domain.models import billing as models


@pytest.mark.parametrize("body", [{"credits": 5}, {"credits": 10_000}, {"credits": 25.0}, {"pack": "credits_50"}])
def test_purchase_bodies_that_are_accepted(body):
    parsed = models.BillingPurchaseCreate.model_validate(body)
    assert (parsed.pack or parsed.credits) is not None


@pytest.mark.parametrize("body", [{"credits": 4}, {"credits": 10_001}, {"credits": 0}, {"credits": -1},
                                  {"credits": 2.5}, {"credits": "7"}, {"credits": True}, {"pack": "credits_7"},
                                  {}, {"pack": "credits_10", "credits": 10}, {"credits": 10, "currency": "eur"}])
def test_purchase_bodies_that_are_refused(body):
    with pytest.raises(ValidationError):
        models.BillingPurchaseCreate.model_validate(body)


def test_the_documented_purchase_schema_accepts_exactly_what_the_api_accepts():
    """The schema's oneOf is the model's exactly-one rule: over every mix of absent, null, good and
    bad values of both fields, the published schema and the model agree."""
    import itertools

    from jsonschema import Draft202012Validator

    from devstack import openapi
    schema = json.loads(openapi.DOCUMENT.read_text())["components"]["schemas"]["BillingPurchaseCreate"]
    absent = object()
    packs = (absent, None, "credits_10", "credits_100", "credits_7", "", 10)
    credits = (absent, None, 5, 10_000, 25.0, 4, 10_001, 2.5, "7", True)
    for pack, amount in itertools.product(packs, credits):
        body = {k: v for k, v in (("pack", pack), ("credits", amount)) if v is not absent}
        try:
            models.BillingPurchaseCreate.model_validate(body)
            accepted = True
        except ValidationError:
            accepted = False
        assert Draft202012Validator(schema).is_valid(body) is accepted, body


def test_an_unknown_plan_is_refused():
    assert models.BillingSubscriptionCreate.model_validate({"plan": "growth"}).plan == "growth"
    with pytest.raises(ValidationError):
        models.BillingSubscriptionCreate.model_validate({"plan": "platinum"})


def test_the_fields_a_read_answers_are_its_models_fields():
    """The domain spells them out so that a read loads no pydantic; they are the answers' models' fields."""
    assert billing.INVOICE_FIELDS == tuple(models.BillingInvoice.model_fields)
    assert billing.ENTRY_FIELDS == tuple(models.BillingLedgerEntry.model_fields)
    assert billing.PURCHASE_FIELDS == tuple(models.BillingPurchase.model_fields)


def test_every_paid_plan_has_a_price_and_free_costs_nothing():
    assert set(plans.MONTHLY_PRICE_CENTS) == set(plans.PLANS) and plans.MONTHLY_PRICE_CENTS["free"] == 0
    assert billing.PAID_PLANS == ("starter", "growth", "enterprise")


def test_gift_card_codes_are_random_100_bit_and_hash_the_same_however_typed():
    codes = {billing.new_code() for _ in range(200)}
    assert len(codes) == 200
    code = codes.pop()
    assert len(code) == 3 + 4 * 5 + 3 and set(code[3:].replace("-", "")) <= set(billing._CODE_ALPHABET)
    assert len(billing._CODE_ALPHABET) == 32  # 20 characters x 5 bits
    digest = billing.code_hash(code)
    assert digest == hashlib.sha256(code.encode()).hexdigest() and code not in digest
    assert billing.code_hash(" " + code.lower() + "\n") == digest
    assert billing.code_hash(code[:-1] + ("0" if code[-1] != "0" else "1")) != digest


def test_balances_show_as_decimal_credits():
    assert billing._balance_view(16_000_000)["credits"] == "16.000000"
    assert billing._balance_view(1)["credits"] == "0.000001"
    assert billing._balance_view(-2_500_000)["credits"] == "-2.500000"


def test_ledger_entries_are_integer_and_of_a_known_kind():
    entry = billing_ledger.new_entry("purchase", 5, principal="key_x", request_id="r", reason="why", reference="pur_x")
    assert entry["id"].startswith("led_") and entry["created_at"].endswith("Z")
    with pytest.raises(ValueError):
        billing_ledger.new_entry("bonus", 5, principal="p", request_id=None, reason="r", reference=None)
    for amount in (1.5, True, "5"):
        with pytest.raises(TypeError):
            billing_ledger.new_entry("purchase", amount, principal="p", request_id=None, reason="r", reference=None)


def test_the_conversion_is_one_credit_per_dollar():
    assert billing_ledger.MICRO_PER_CREDIT == 100 * billing_ledger.MICRO_PER_CENT == 1_000_000


def test_the_default_period_is_the_calendar_month_in_utc():
    start, end = billing._month(1_795_000_000)  # 2026-11-18
    assert (start, end) == ("2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z")
    assert billing._month(1_798_700_000) == ("2026-12-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z")


def test_the_stripe_webhook_signature_is_its_credential_and_each_failure_is_401_with_its_reason(monkeypatch):
    from svc_core.adapters.payments import stripe_provider
    from svc_core.platform.errors import Unauthorized, ValidationFailed
    secret = "test-secret-made-here"
    monkeypatch.setattr(stripe_provider, "_secret", lambda: {"webhookSecret": secret})
    payload = json.dumps({"id": "evt_1", "object": "event", "type": "invoice.paid", "data": {"object": {}}})

    def header(key: str, at: int, body: str = payload) -> str:
        return f"t={at},v1=" + hmac.new(key.encode(), f"{at}.{body}".encode(), hashlib.sha256).hexdigest()

    def reason(body: bytes, signature: str | None) -> str:
        with pytest.raises(Unauthorized) as refused:
            stripe_provider.verify_webhook(body, signature)
        assert refused.value.status == 401 and refused.value.code == "UNAUTHORIZED"
        return refused.value.details["reason"]

    now = int(time.time())
    # The provider's clock stops at `now` and a half: the 299 s below stay within the 300 s on a
    # loaded machine (CI: a second passed between reading the time and the check, and it was 'too_old').
    monkeypatch.setattr(stripe_provider, "time", SimpleNamespace(time=lambda: now + 0.5))
    assert stripe_provider.verify_webhook(payload.encode(), header(secret, now))["type"] == "invoice.paid"
    assert stripe_provider.verify_webhook(payload.encode(), header(secret, now - 299))["id"] == "evt_1"
    assert reason(payload.encode(), header(secret, now - 301)) == "too_old"   # the other side of the line
    assert reason(payload.encode(), None) == reason(payload.encode(), "") == "missing"
    for malformed in ("t=1", "v1=00", "t=soon,v1=00", "Bearer abc", f"t={now},v0=00"):
        assert reason(payload.encode(), malformed) == "malformed", malformed
    assert reason(payload.encode(), header("other", now)) == "mismatch"
    assert reason(payload.encode(), f"t={now},v1=00") == "mismatch"
    assert reason(payload.replace("invoice", "refund").encode(), header(secret, now)) == "mismatch"  # body changed
    assert reason(b"\xff\xfe", header(secret, now)) == "mismatch"  # not UTF-8: cannot be Stripe's
    assert reason(payload.encode(), header(secret, now - 600)) == "too_old"  # a replay
    with pytest.raises(ValidationFailed):  # verified, yet no event
        stripe_provider.verify_webhook(b"[1]", header(secret, now, "[1]"))
    monkeypatch.setattr(stripe_provider, "_secret", lambda: {"webhookSecret": ""})
    assert reason(payload.encode(), header("", now)) == "not_configured"


@pytest.mark.parametrize("key,ok", [("order-42", True), ("a" * 255, True), ("a" * 256, False), ("", False),
                                    ("has space", False), ("é", False)])
def test_the_idempotency_key_shape(key, ok):
    from svc_core.http import idempotency
    assert bool(idempotency.KEY_PATTERN.match(key)) is ok
