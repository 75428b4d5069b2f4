"""The test-mode payment provider: no money moves. Every payment succeeds at once, every
subscription is active at once for 30 days, and every id starts with test_ (the API answers
testMode: true on everything it made), so nothing of it can be mistaken for a real charge."""

from __future__ import annotations

from typing import Any

from svc_core.adapters.payments.base import Payment, Subscription
from svc_core.platform import ids, timeutil

PERIOD_SECONDS = 30 * 24 * 3600
PORTAL = "https://billing.test-mode.invalid/portal"   # .invalid: a name that can never resolve (RFC 2606)


class TestModeProvider:
    name = "test"
    test_mode = True

    def create_customer(self, tenant_id: str) -> str:
        return ids.new_id("test_cus")

    def pay(self, tenant_id: str, customer: str, purchase: dict[str, Any]) -> Payment:
        return Payment(status="succeeded", reference=ids.new_id("test_pay"))

    def subscribe(self, tenant_id: str, customer: str, plan: str, idempotency_key: str) -> Subscription:
        now = timeutil.now()
        return Subscription(status="active", reference=ids.new_id("test_sub"), invoice_reference=ids.new_id("test_in"),
                            period_start=now, period_end=now + PERIOD_SECONDS)

    def cancel(self, reference: str) -> None:
        return None

    def portal_url(self, customer: str, return_url: str) -> str:
        return f"{PORTAL}/{customer}"
