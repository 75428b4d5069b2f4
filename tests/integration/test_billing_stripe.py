"""The Stripe provider through the official `stripe` package, pointed at a loopback server that
answers Stripe-shaped objects, and Stripe's webhooks signed with Stripe's scheme (t=…,v1=HMAC-SHA256
of "t.payload") and verified by stripe.Webhook.construct_event: a purchase pending until
checkout.session.completed, a subscription until invoice.paid, a bad signature, an old (replayed)
signature, a replayed event, a Stripe failure. The keys come from Secrets Manager."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl

import pytest

from tests.support.functions import call

MICRO = 1_000_000
WELCOME = 1_000_000
STARTER_PRICE = "price_starter_1"


class FakeStripe:
    """Answers the few Stripe API calls the provider makes, and records them."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.fail_next: dict | None = None
        self.session_amounts: dict[str, int] = {}
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Request-Id", "req_fake")
                self.end_headers()
                self.wfile.write(data)

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                form = dict(parse_qsl(self.rfile.read(length).decode())) if length else {}
                fake.requests.append({"method": self.command, "path": self.path, "form": form,
                                      "headers": {k.lower(): v for k, v in self.headers.items()}})
                if fake.fail_next is not None:
                    error, fake.fail_next = fake.fail_next, None
                    return self._answer(402, {"error": error})
                self._answer(200, fake.answer(self.command, self.path.split("?")[0], form))

            do_POST = do_GET = do_DELETE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, method: str, path: str, form: dict) -> dict:
        now = int(time.time())
        if path == "/v1/customers":
            return {"id": "cus_fake1", "object": "customer", "metadata": {"tenantId": form.get("metadata[tenantId]")}}
        if path == "/v1/checkout/sessions":
            session_id = f"cs_test_{secrets.token_hex(6)}"
            amount = int(form["line_items[0][price_data][unit_amount]"])
            self.session_amounts[session_id] = amount
            return {"id": session_id, "object": "checkout.session", "status": "open", "payment_status": "unpaid",
                    "amount_total": amount, "url": f"https://checkout.stripe.com/c/pay/{session_id}",
                    "metadata": {"tenantId": form["metadata[tenantId]"], "purchaseId": form["metadata[purchaseId]"]}}
        if path == "/v1/subscriptions" and method == "POST":
            return {"id": "sub_fake1", "object": "subscription", "status": "incomplete", "customer": form["customer"],
                    "latest_invoice": {"id": "in_fake1", "object": "invoice",
                                       "hosted_invoice_url": "https://invoice.stripe.com/i/in_fake1"},
                    "items": {"object": "list", "data": [{"id": "si_1", "object": "subscription_item",
                                                          "current_period_start": now,
                                                          "current_period_end": now + 30 * 86400}]}}
        if path.startswith("/v1/subscriptions/") and method == "DELETE":
            return {"id": path.rsplit("/", 1)[1], "object": "subscription", "status": "canceled"}
        if path == "/v1/billing_portal/sessions":
            return {"id": "bps_1", "object": "billing_portal.session", "url": "https://billing.stripe.com/p/session/x"}
        return {"id": "unknown", "object": "unknown"}

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stripe_stack(stack, monkeypatch):
    from svc_core.adapters import secrets_cache
    from svc_core.platform import config
    fake = FakeStripe()
    api_key = "_".join(["sk", "test", secrets.token_hex(12)])   # made at run time: no key-shaped literal
    webhook_secret = secrets.token_hex(24)
    monkeypatch.setenv("PAYMENT_PROVIDER", "stripe")
    monkeypatch.setenv("STRIPE_API_BASE", fake.base)
    monkeypatch.setenv("STRIPE_PLAN_PRICES", json.dumps({"starter": STARTER_PRICE}))
    config.settings.cache_clear()
    secrets_cache.clear()
    stack.client("secretsmanager").put_secret_value(
        SecretId=config.settings().stripe_secret_id,
        SecretString=json.dumps({"apiKey": api_key, "webhookSecret": webhook_secret}))
    yield stack, fake, api_key, webhook_secret
    fake.stop()
    config.settings.cache_clear()
    secrets_cache.clear()


def billing(event: str, key: str, **kwargs):
    return call("billing", f"Billing-{event}", token=key, **kwargs)


def balance(key: str) -> int:
    return billing("BillingSummary", key).data["balance"]["microCredits"]


def signed(payload: str, secret: str, at: int | None = None) -> str:
    at = int(time.time()) if at is None else at
    digest = hmac.new(secret.encode(), f"{at}.{payload}".encode(), hashlib.sha256).hexdigest()
    return f"t={at},v1={digest}"


def webhook(payload: str, signature: str | None):
    headers = {"Stripe-Signature": signature} if signature is not None else {}
    return call("stripe_webhook", "StripeWebhook-StripeWebhook", raw_body=payload, headers=headers)


def event(kind: str, obj: dict) -> str:
    return json.dumps({"id": f"evt_{secrets.token_hex(8)}", "object": "event", "type": kind,
                       "api_version": "2026-10-28", "created": int(time.time()), "data": {"object": obj}})


def test_a_stripe_purchase_is_pending_until_its_signed_webhook_and_credited_once(stripe_stack):
    stack, fake, api_key, secret = stripe_stack
    tenant, key = stack.tenant_with_key()
    reply = billing("PurchaseCredits", key, body={"pack": "credits_25"})
    assert reply.status == 201, reply
    bought = reply.data
    assert (bought["status"], bought["provider"], bought["testMode"]) == ("pending", "stripe", True)
    assert bought["checkoutUrl"].startswith("https://checkout.stripe.com/") and bought["invoiceId"] is None
    assert balance(key) == WELCOME
    create = next(r for r in fake.requests if r["path"] == "/v1/checkout/sessions")
    assert create["headers"]["authorization"] == f"Bearer {api_key}"
    assert create["headers"]["idempotency-key"] == bought["id"]
    assert create["form"]["line_items[0][price_data][unit_amount]"] == "2500"
    assert create["form"]["metadata[tenantId]"] == tenant and create["form"]["mode"] == "payment"
    assert api_key not in reply.text
    session_id = next(iter(fake.session_amounts))
    payload = event("checkout.session.completed", {
        "id": session_id, "object": "checkout.session", "payment_status": "paid", "amount_total": 2500,
        "metadata": {"tenantId": tenant, "purchaseId": bought["id"]}})
    # a bad signature, and none at all: refused, nothing credited
    bad = webhook(payload, signed(payload, "not-the-secret"))
    assert bad.status == 401 and bad.error["code"] == "UNAUTHORIZED" and bad.error["details"]["reason"] == "mismatch"
    assert webhook(payload, None).error["details"]["reason"] == "missing"
    changed = webhook(payload.replace("2500", "250000"), signed(payload, secret))
    assert changed.status == 401 and changed.error["details"]["reason"] == "mismatch"
    assert balance(key) == WELCOME
    good = webhook(payload, signed(payload, secret))
    assert good.status == 200 and good.data == {"received": True, "type": "checkout.session.completed",
                                                "applied": True}
    assert balance(key) == WELCOME + 25 * MICRO
    # the same event delivered again (Stripe retries): acknowledged, applied once
    again = webhook(payload, signed(payload, secret))
    assert again.status == 200 and again.data["applied"] is False
    # a captured delivery replayed later: its signature's timestamp is too old
    old = webhook(payload, signed(payload, secret, at=int(time.time()) - 3600))
    assert old.status == 401 and old.error["details"]["reason"] == "too_old"
    assert balance(key) == WELCOME + 25 * MICRO
    (invoice,) = billing("ListInvoices", key).data["items"]
    assert invoice["provider"] == "stripe" and invoice["amount"] == 2500


def test_a_paid_amount_that_is_not_the_price_credits_nothing(stripe_stack):
    stack, fake, _, secret = stripe_stack
    tenant, key = stack.tenant_with_key()
    bought = billing("PurchaseCredits", key, body={"credits": 10}).data
    payload = event("checkout.session.completed", {
        "id": "cs_test_x", "payment_status": "paid", "amount_total": 1,
        "metadata": {"tenantId": tenant, "purchaseId": bought["id"]}})
    assert webhook(payload, signed(payload, secret)).data["applied"] is False
    assert balance(key) == WELCOME


def test_a_stripe_subscription_starts_the_plan_when_its_invoice_is_paid(stripe_stack):
    from svc_core.data import tenants_table
    stack, fake, _, secret = stripe_stack
    tenant, key = stack.tenant_with_key()
    reply = billing("CreateSubscription", key, body={"plan": "starter"})
    assert reply.status == 201, reply
    assert (reply.data["status"], reply.data["pendingPlan"], reply.data["plan"]) == ("incomplete", "starter", "free")
    assert reply.data["hostedUrl"] == "https://invoice.stripe.com/i/in_fake1"
    create = next(r for r in fake.requests if r["path"] == "/v1/subscriptions")
    assert create["form"]["items[0][price]"] == STARTER_PRICE and create["form"]["customer"] == "cus_fake1"
    assert tenants_table.get_consistent(tenant)["plan"] == "free"
    now = int(time.time())
    payload = event("invoice.paid", {
        "id": "in_fake1", "object": "invoice", "customer": "cus_fake1", "subscription": "sub_fake1",
        "amount_paid": 2000, "hosted_invoice_url": "https://invoice.stripe.com/i/in_fake1",
        "lines": {"data": [{"period": {"start": now, "end": now + 30 * 86400}}]}})
    assert webhook(payload, signed(payload, secret)).data["applied"] is True
    assert tenants_table.get_consistent(tenant)["plan"] == "starter"
    assert balance(key) == WELCOME + 20 * MICRO
    assert webhook(payload, signed(payload, secret)).data["applied"] is False  # replayed: once
    assert balance(key) == WELCOME + 20 * MICRO
    (invoice,) = billing("ListInvoices", key).data["items"]
    assert invoice["hostedUrl"] == "https://invoice.stripe.com/i/in_fake1" and invoice["reference"] == "in_fake1"
    ended = event("customer.subscription.deleted", {"id": "sub_fake1", "object": "subscription",
                                                    "customer": "cus_fake1", "status": "canceled"})
    assert webhook(ended, signed(ended, secret)).data["applied"] is True
    assert tenants_table.get_consistent(tenant)["plan"] == "free"


def test_a_stripe_failure_is_502_without_stripe_s_text_and_changes_nothing(stripe_stack, caplog):
    stack, fake, api_key, _ = stripe_stack
    _, key = stack.tenant_with_key()
    billing("CreatePortalSession", key)  # the customer exists
    fake.fail_next = {"type": "card_error", "code": "card_declined", "message": "Your card was declined (secret)."}
    reply = billing("PurchaseCredits", key, body={"pack": "credits_10"})
    assert reply.status == 502 and reply.error["code"] == "PROVIDER_ERROR", reply
    assert reply.error["details"] == {"provider": "stripe", "providerError": "card_declined"}
    assert "declined (secret)" not in reply.text and api_key not in reply.text
    assert balance(key) == WELCOME
    logs = json.dumps([{**r.__dict__, "msg": r.getMessage()} for r in caplog.records], default=str)
    assert "card_declined" in logs  # the code is logged, neither the key nor Stripe's message
    assert api_key not in logs and "declined (secret)" not in logs


def test_the_portal_is_a_stripe_billing_portal_session(stripe_stack):
    stack, fake, _, _ = stripe_stack
    _, key = stack.tenant_with_key()
    reply = billing("CreatePortalSession", key)
    assert reply.status == 200 and reply.data["url"] == "https://billing.stripe.com/p/session/x"
    portal = next(r for r in fake.requests if r["path"] == "/v1/billing_portal/sessions")
    assert portal["form"]["customer"] == "cus_fake1"


def test_without_a_webhook_secret_every_delivery_is_401_and_changes_nothing(stack):
    # The test provider has no Stripe secret: nothing can verify, so nothing is taken as Stripe's.
    tenant, key = stack.tenant_with_key()
    before = balance(key)
    payload = event("checkout.session.completed", {"payment_status": "paid", "amount_total": 1000,
                                                   "metadata": {"tenantId": tenant, "purchaseId": "pur_x"}})
    for signature in (None, "t=1,v1=00", signed(payload, "")):
        refused = webhook(payload, signature)
        assert refused.status == 401 and refused.error["details"] == {"reason": "not_configured",
                                                                     "header": "Stripe-Signature"}
    assert balance(key) == before
