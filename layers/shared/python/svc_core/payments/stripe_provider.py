"""Stripe through the official `stripe` package: Checkout Sessions for credit purchases, Subscriptions
for plans (one Stripe price per plan, STRIPE_PLAN_PRICES), Billing Portal sessions, and webhooks
verified with stripe.Webhook.construct_event.

The API key and the webhook signing secret are the JSON secret STRIPE_SECRET_ID,
{"apiKey": "sk_…", "webhookSecret": "whsec_…"} (cached a few minutes, as every secret). Neither is
ever logged or answered. STRIPE_API_BASE points the client elsewhere (the tests' loopback server).
A Stripe failure is 502 PROVIDER_ERROR with Stripe's error code, never its message.
"""

from __future__ import annotations

import json
from typing import Any

import stripe

from svc_core import secrets_cache
from svc_core.config import settings
from svc_core.errors import ProviderError, SignatureInvalid, ValidationFailed
from svc_core.log import logger
from svc_core.payments import Payment, Subscription

WEBHOOK_TOLERANCE_SECONDS = 300   # a signed event older than this is refused (replay)


def _secret() -> dict[str, str]:
    return secrets_cache.get_json_secret(settings().stripe_secret_id)


def _failed(exc: stripe.StripeError) -> ProviderError:
    code = getattr(exc, "code", None) or type(exc).__name__
    logger.warning("stripe call failed", extra={"stripe_error": code, "http_status": getattr(exc, "http_status", None)})
    return ProviderError("The payment provider refused the request or did not answer.",
                         {"provider": "stripe", "providerError": code})


def _plain(obj: Any) -> dict[str, Any]:
    """A StripeObject as plain dicts and lists (it is no dict in stripe 15+)."""
    return obj.to_dict() if hasattr(obj, "to_dict") else obj


def _field(obj: Any, *path: str) -> Any:
    for name in path:
        if obj is None:
            return None
        obj = obj.get(name) if hasattr(obj, "get") else None
    return obj


def verify_webhook(payload: bytes, signature: str | None) -> dict[str, Any]:
    """The event, when Stripe's signature (Stripe-Signature, HMAC-SHA256 with a timestamp) verifies
    and is recent; else SignatureInvalid (a replay of an old event fails the timestamp check)."""
    secret = _secret().get("webhookSecret") or ""
    if not secret:
        raise SignatureInvalid("No Stripe webhook secret is configured.")
    try:
        event = stripe.Webhook.construct_event(payload, signature, secret, tolerance=WEBHOOK_TOLERANCE_SECONDS)
    except stripe.SignatureVerificationError:
        raise SignatureInvalid("The Stripe-Signature header does not verify (or the event is too old).") from None
    except ValueError:
        raise SignatureInvalid("The payload is not a Stripe event.") from None
    return event.to_dict() if hasattr(event, "to_dict") else json.loads(payload)


class StripeProvider:
    name = "stripe"
    test_mode = False

    def __init__(self) -> None:
        api_key = _secret().get("apiKey") or ""
        if not api_key:
            raise ProviderError("The payment provider is not configured.", {"provider": "stripe",
                                                                            "providerError": "not_configured"})
        base = settings().stripe_api_base
        # sk_test_… keys are Stripe's own test mode: say so as the test provider does
        self.test_mode = api_key.startswith(("sk_test_", "rk_test_"))
        self.client = stripe.StripeClient(api_key, base_addresses={"api": base} if base else None,
                                          max_network_retries=2)

    def create_customer(self, tenant_id: str) -> str:
        try:
            customer = _plain(self.client.v1.customers.create(
                params={"metadata": {"tenantId": tenant_id}}, options={"idempotency_key": f"customer-{tenant_id}"}))
        except stripe.StripeError as exc:
            raise _failed(exc) from None
        return customer["id"]

    def pay(self, tenant_id: str, customer: str, purchase: dict[str, Any]) -> Payment:
        back = settings().public_base_url or "https://example.invalid"
        params: dict[str, Any] = {
            "mode": "payment", "customer": customer, "client_reference_id": purchase["id"],
            "metadata": {"tenantId": tenant_id, "purchaseId": purchase["id"]},
            "line_items": [{"quantity": 1, "price_data": {
                "currency": purchase["currency"], "unit_amount": purchase["amount"],
                "product_data": {"name": f"{purchase['credits']} credits"}}}],
            "success_url": f"{back}/billing/purchases/{purchase['id']}?status=success",
            "cancel_url": f"{back}/billing/purchases/{purchase['id']}?status=cancelled"}
        try:
            session = _plain(self.client.v1.checkout.sessions.create(
                params=params, options={"idempotency_key": purchase["id"]}))
        except stripe.StripeError as exc:
            raise _failed(exc) from None
        paid = session.get("payment_status") == "paid"
        return Payment(status="succeeded" if paid else "pending", reference=session["id"],
                       checkout_url=None if paid else session.get("url"))

    def subscribe(self, tenant_id: str, customer: str, plan: str, idempotency_key: str) -> Subscription:
        price = json.loads(settings().stripe_plan_prices or "{}").get(plan)
        if not price:
            raise ValidationFailed(f"The {plan} plan has no Stripe price in this deployment.", {"fields": [
                {"field": "plan", "in": "body", "reason": "not sold through Stripe here"}]})
        try:
            sub = _plain(self.client.v1.subscriptions.create(params={
                "customer": customer, "items": [{"price": price}], "metadata": {"tenantId": tenant_id, "plan": plan},
                "payment_behavior": "default_incomplete", "expand": ["latest_invoice"]},
                options={"idempotency_key": idempotency_key}))
        except stripe.StripeError as exc:
            raise _failed(exc) from None
        invoice = sub.get("latest_invoice")
        invoice_id = invoice if isinstance(invoice, str) else _field(invoice, "id")
        item = (_field(sub, "items", "data") or [{}])[0]
        # newer API versions keep the period on the item, older ones on the subscription
        start = sub.get("current_period_start") or _field(item, "current_period_start")
        end = sub.get("current_period_end") or _field(item, "current_period_end")
        return Subscription(status="active" if sub.get("status") in ("active", "trialing") else "incomplete",
                            reference=sub["id"], invoice_reference=invoice_id, period_start=start, period_end=end,
                            hosted_url=None if isinstance(invoice, str) else _field(invoice, "hosted_invoice_url"))

    def cancel(self, reference: str) -> None:
        try:
            self.client.v1.subscriptions.cancel(reference)
        except stripe.StripeError as exc:
            raise _failed(exc) from None

    def portal_url(self, customer: str, return_url: str) -> str:
        try:
            session = _plain(self.client.v1.billing_portal.sessions.create(
                params={"customer": customer, "return_url": return_url or "https://example.invalid"}))
        except stripe.StripeError as exc:
            raise _failed(exc) from None
        return session["url"]
