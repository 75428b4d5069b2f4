"""What every payment provider answers, and the interface they share (the package's __init__
chooses one; each provider imports this module, never the package)."""

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
