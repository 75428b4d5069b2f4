"""Payment providers, one small interface: a customer, a one-off payment (credits), a subscription
(a plan), its cancellation, a customer portal, and the provider's signed webhooks.

The interface and the shapes of its answers are base.py's. PAYMENT_PROVIDER chooses: "test"
(svc_core/adapters/payments/testmode.py: settles at once, every object says it is test mode; the
local stack and the tests) or "stripe" (svc_core/adapters/payments/stripe_provider.py, the official
`stripe` package; its keys in Secrets Manager, STRIPE_SECRET_ID).
"""

from __future__ import annotations

from svc_core.adapters.payments.base import Payment, PaymentProvider, Subscription

__all__ = ["Payment", "PaymentProvider", "Subscription", "provider"]


def provider() -> PaymentProvider:
    from svc_core.platform.config import settings
    name = settings().payment_provider
    if name == "stripe":
        from svc_core.adapters.payments.stripe_provider import StripeProvider
        return StripeProvider()
    if name == "test":
        from svc_core.adapters.payments.testmode import TestModeProvider
        return TestModeProvider()
    raise ValueError(f"unknown PAYMENT_PROVIDER {name!r}")
