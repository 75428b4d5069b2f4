"""Stripe's webhooks: no credential of ours; the Stripe-Signature header, verified by the stripe
package with the webhook secret, is the authentication. Every change an event makes happens once."""

import base64

from svc_core.adapters.payments.stripe_provider import SIGNATURE_SCHEME, verify_webhook
from svc_core.domain import billing
from svc_core.http.api import Api

api = Api()


@api.post("/api/v1/billing/stripe/webhook", public=True, security_scheme=SIGNATURE_SCHEME, response_model=dict,
          tags=["Billing"], summary="Stripe's events (checkout.session.*, invoice.paid, customer.subscription.deleted)",
          description="401 UNAUTHORIZED when no webhook secret is configured, or the Stripe-Signature header is "
                      "missing, malformed, does not verify or is over 5 minutes old (details.reason: "
                      "not_configured, missing, malformed, mismatch, too_old); 200 {received, type, applied} "
                      "otherwise (applied false: nothing to do, or done before).")
def stripe_webhook():
    event = api.current_event()
    body = event.get("body") or ""
    payload = base64.b64decode(body) if event.get("isBase64Encoded") else body.encode()
    return billing.handle_stripe_event(verify_webhook(payload, api.header("stripe-signature")))


api.snapstart()  # SnapStart's hooks (svc_core/platform/snapshot.py); a no-op outside Lambda
lambda_handler = api.handler
