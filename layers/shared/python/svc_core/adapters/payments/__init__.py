"""Payment providers, one small interface: a customer, a one-off payment (credits), a subscription
(a plan), its cancellation, a customer portal, and the provider's signed webhooks.

PAYMENT_PROVIDER chooses: "test" (svc_core/adapters/payments/testmode.py: settles at once, every object
says it is test mode; the local stack and the tests) or "stripe" (svc_core/adapters/payments/stripe_provider.py,
the official `stripe` package; its keys in Secrets Manager, STRIPE_SECRET_ID).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Payment:
    status: str                  # succeeded | pending (the customer pays at checkout_url) | failed
    reference: str               # the provider's id of it (cs_…, test_pay_…)
    checkout_url: str | None = None


@dataclass(frozen=True)
class Subscription:
    status: str                  # active (its first period paid) | incomplete (waiting for payment)
    reference: str               # sub_…, test_sub_…
    invoice_reference: str | None
    period_start: float | None
    period_end: float | None
    hosted_url: str | None = None


class PaymentProvider(Protocol):
    name: str
    test_mode: bool

    def create_customer(self, tenant_id: str) -> str: ...

    def pay(self, tenant_id: str, customer: str, purchase: dict[str, Any]) -> Payment: ...

    def subscribe(self, tenant_id: str, customer: str, plan: str, idempotency_key: str) -> Subscription: ...

    def cancel(self, reference: str) -> None: ...

    def portal_url(self, customer: str, return_url: str) -> str: ...


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
