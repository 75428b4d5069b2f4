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
import time
from typing import Any

import stripe

from svc_core.adapters import secrets_cache
from svc_core.adapters.payments.base import Payment, Subscription
from svc_core.platform.config import settings
from svc_core.platform.errors import ProviderError, Unauthorized, ValidationFailed
from svc_core.platform.log import logger

WEBHOOK_TOLERANCE_SECONDS = 300   # a signed event older than this is refused (replay)
SIGNATURE_HEADER = "Stripe-Signature"
SIGNATURE_SCHEME = "stripeSignature"  # its OpenAPI security scheme (devstack/openapi.py declares it)


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


def _signed_at(header: str) -> int | None:
    """The t= of a Stripe-Signature header (t=<unix time>,v1=<hex>[,v1=…]) as the stripe package
    reads it, or None when the header is not of that form (no t, not a number, no v1)."""
    parts = [item.split("=", 2) for item in header.split(",")]
    stamps = [part[1] for part in parts if len(part) > 1 and part[0] == "t"]
    if not stamps or not any(len(part) > 1 and part[0] == "v1" for part in parts):
        return None
    try:
        return int(stamps[0])
    except ValueError:
        return None


def _refused(reason: str, message: str) -> Unauthorized:
    return Unauthorized(message, {"reason": reason, "header": SIGNATURE_HEADER})


def verify_webhook(payload: bytes, signature: str | None) -> dict[str, Any]:
    """The event, when Stripe's signature (Stripe-Signature, HMAC-SHA256 with a timestamp) verifies
    and is recent. The signature is the request's credential, so anything else is 401 with
    details.reason: not_configured (no webhook secret here: nothing can verify), missing,
    malformed, mismatch (another secret, or a changed body) or too_old (a replay)."""
    secret = _secret().get("webhookSecret") or ""
    if not secret.strip():
        raise _refused("not_configured", "No Stripe webhook secret is configured: no signature can verify.")
    if not signature:
        raise _refused("missing", "The Stripe-Signature header is missing.")
    signed_at = _signed_at(signature)
    if signed_at is None:
        raise _refused("malformed", "The Stripe-Signature header is not t=<time>,v1=<signature>.")
    try:  # the age is checked below, to say which of the two failed
        stripe.WebhookSignature.verify_header(payload, signature, secret, tolerance=None)
    except (stripe.SignatureVerificationError, UnicodeDecodeError):
        raise _refused("mismatch", "The Stripe-Signature header does not verify.") from None
    if signed_at < time.time() - WEBHOOK_TOLERANCE_SECONDS:
        raise _refused("too_old", f"The signature is more than {WEBHOOK_TOLERANCE_SECONDS} seconds old.")
    try:
        event = json.loads(payload)
    except ValueError:
        event = None
    if not isinstance(event, dict):  # signed with our secret, yet no event: say what is wrong with it
        raise ValidationFailed("The payload is not a Stripe event.",
                               {"fields": [{"field": "body", "in": "body", "reason": "not a JSON object"}]})
    return event


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
