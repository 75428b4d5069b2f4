"""Billing through the real handler on the moto server, with the test-mode payment provider: the
summary, the ledger and its audit fields, purchases, subscriptions and the plan that follows them,
gift cards (issued by the operator command, stored hashed, redeemed once, failures throttled),
the portal, Idempotency-Key, usage debits and 402, bad input with no balance change, scopes, and
other tenants' resources. The concurrency tests run on DynamoDB Local (atomic_stack)."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from svc_core.adapters.models.registry import scripted
from svc_core.adapters.models.scripted import ScriptedProvider, text_answer
from tests.support import projects as project_api
from tests.support.functions import call
from tests.support.projects import assert_envelope
from tests.support.usage import day_of, metered

MICRO = 1_000_000
WELCOME = 1_000_000
HAIKU = "us.anthropic.claude-haiku-4-5-20251001-v1:0"


def billing(event: str, key: str, **kwargs):
    return call("billing", f"Billing-{event}", token=key, **kwargs)


def summary(key: str) -> dict:
    reply = billing("BillingSummary", key)
    assert reply.status == 200, reply
    return reply.data


def balance(key: str) -> int:
    return summary(key)["balance"]["microCredits"]


def ledger(key: str, **query) -> list[dict]:
    reply = billing("ListLedger", key, query={k: str(v) for k, v in query.items()} or None)
    assert reply.status == 200, reply
    return reply.data["items"]


def invoices(key: str) -> list[dict]:
    reply = billing("ListInvoices", key)
    assert reply.status == 200, reply
    return reply.data["items"]


def purchase(key: str, body, **kwargs):
    return billing("PurchaseCredits", key, body=body, **kwargs)


def redeem(key: str, code: str, **kwargs):
    return billing("RedeemGiftCard", key, body={"code": code}, **kwargs)


def subscribe(key: str, plan: str, **kwargs):
    return billing("CreateSubscription", key, body={"plan": plan}, **kwargs)


def issue_cards(credits: int, count: int = 1, capsys=None) -> list[dict]:
    from ops.__main__ import main
    assert main(["gift-cards", "issue", "--credits", str(credits), "--count", str(count)]) == 0
    return json.loads(capsys.readouterr().out)


def ledger_sum_equals_balance(tenant_id: str) -> tuple[int, int]:
    from svc_core.data import billing_table
    entries = billing_table.all_entries(tenant_id)
    account = billing_table.balance(tenant_id)
    assert account["entryCount"] == len(entries)
    return sum(e["amount"] for e in entries), account["balance"]


# ---- the summary and the ledger -------------------------------------------------------------

def test_a_new_tenant_starts_with_the_welcome_grant_in_its_ledger(stack):
    tenant, key = stack.tenant_with_key(scopes=[])  # reading needs authentication only
    data = summary(key)
    assert data["plan"] == "free" and data["testMode"] is True and data["currency"] == "usd"
    assert data["balance"] == {"microCredits": WELCOME, "credits": "1.000000"}
    assert data["subscription"]["status"] == "none" and data["nextCharge"] is None
    assert data["usage"]["agentRuns"] == {"calls": 0, "inputTokens": 0, "outputTokens": 0, "microCredits": 0}
    assert data["usage"]["periodStart"] < data["usage"]["periodEnd"]
    assert [p["id"] for p in data["packs"]] == ["credits_10", "credits_25", "credits_50", "credits_100"]
    (grant,) = ledger(key)
    assert (grant["kind"], grant["amount"], grant["principal"]) == ("grant", WELCOME, "service")
    assert ledger_sum_equals_balance(tenant) == (WELCOME, WELCOME)


def test_buying_a_pack_credits_it_once_with_an_invoice_and_an_audited_entry(stack):
    tenant, key = stack.tenant_with_key()
    reply = purchase(key, {"pack": "credits_25"})
    assert reply.status == 201, reply
    assert_envelope(reply)
    bought = reply.data
    assert bought["id"].startswith("pur_") and bought["status"] == "succeeded" and bought["testMode"] is True
    assert (bought["credits"], bought["microCredits"], bought["amount"], bought["currency"]) == (25, 25 * MICRO, 2500,
                                                                                                "usd")
    assert bought["invoiceId"].startswith("inv_") and bought["settled_at"]
    assert balance(key) == WELCOME + 25 * MICRO
    (invoice,) = invoices(key)
    assert invoice["id"] == bought["invoiceId"] and invoice["status"] == "paid" and invoice["amount"] == 2500
    assert invoice["number"] == f"{tenant[-8:]}-00001" and invoice["reference"] == bought["id"]
    assert invoice["lines"] == [{"description": "25 credits", "kind": "purchase", "quantity": 1, "unitAmount": 2500,
                                 "amount": 2500, "microCredits": 25 * MICRO}]
    assert invoice["hostedUrl"].endswith(f"/api/v1/billing/invoices/{invoice['id']}") and invoice["testMode"]
    assert billing("GetInvoice", key, path_params={"id": invoice["id"]}).data == invoice
    entry = ledger(key)[0]  # it names the API key that bought, and the request
    assert entry["kind"] == "purchase" and entry["amount"] == 25 * MICRO and entry["reference"] == bought["id"]
    assert entry["principal"].startswith("key_") and entry["requestId"] and entry["created_at"]
    # a custom amount
    custom = purchase(key, {"credits": 7})
    assert custom.status == 201 and custom.data["amount"] == 700
    assert balance(key) == WELCOME + 32 * MICRO
    assert [i["number"] for i in invoices(key)] == [f"{tenant[-8:]}-00002", f"{tenant[-8:]}-00001"]
    assert ledger_sum_equals_balance(tenant) == (WELCOME + 32 * MICRO,) * 2


@pytest.mark.parametrize("body", [
    {"credits": -5}, {"credits": 0}, {"credits": 2.5}, {"credits": 10**12}, {"credits": 4}, {"credits": "10"},
    {"credits": True}, {"pack": "credits_7"}, {"pack": "credits_10", "credits": 10}, {}, {"amount": 10},
])
def test_bad_purchase_amounts_are_refused_and_change_nothing(stack, body):
    tenant, key = stack.tenant_with_key()
    reply = purchase(key, body)
    assert reply.status == 400 and reply.error["code"] == "VALIDATION_ERROR", reply
    assert balance(key) == WELCOME and invoices(key) == []
    assert [e["kind"] for e in ledger(key)] == ["grant"]


def test_posts_need_billing_write_and_reads_need_only_a_credential(stack):
    tenant, key = stack.tenant_with_key(scopes=["billing:read"])
    for event, body in (("PurchaseCredits", {"pack": "credits_10"}), ("CreateSubscription", {"plan": "starter"}),
                        ("RedeemGiftCard", {"code": "GC-00000-00000-00000-00000"}), ("CreatePortalSession", None)):
        reply = billing(event, key, body=body)
        assert reply.status == 403 and reply.error["code"] == "FORBIDDEN", (event, reply)
        assert reply.error["details"]["requiredScope"] == "billing:write"
    assert balance(key) == WELCOME and summary(key)["plan"] == "free"
    assert billing("BillingSummary", None).status == 401


def test_another_tenants_invoice_is_not_found_and_its_ledger_is_not_listed(stack):
    _, key = stack.tenant_with_key()
    _, other = stack.tenant_with_key()
    invoice_id = purchase(key, {"pack": "credits_10"}).data["invoiceId"]
    missing = billing("GetInvoice", other, path_params={"id": invoice_id})
    assert missing.status == 404 and missing.error["details"] == {"id": invoice_id, "resource": "invoice"}
    assert billing("GetInvoice", other, path_params={"id": "nope"}).status == 404
    assert invoices(other) == [] and [e["kind"] for e in ledger(other)] == ["grant"]
    assert balance(other) == WELCOME


def test_lists_page_with_a_cursor_and_refuse_one_off_the_pattern(stack):
    _, key = stack.tenant_with_key()
    for _ in range(3):
        purchase(key, {"pack": "credits_10"})
    first = billing("ListLedger", key, query={"limit": "2"}).data
    assert len(first["items"]) == 2 and first["nextCursor"]
    rest = billing("ListLedger", key, query={"limit": "2", "cursor": first["nextCursor"]}).data
    ids = [e["id"] for e in first["items"] + rest["items"]]
    assert len(ids) == 4 and len(set(ids)) == 4 and ids == sorted(ids, reverse=True)
    # Another list's cursor is a position here too (an invoice's time): it is not refused.
    invoice_page = billing("ListInvoices", key, query={"limit": "2"}).data
    assert billing("ListLedger", key, query={"cursor": invoice_page["nextCursor"]}).status == 200
    assert billing("ListInvoices", key, query={"cursor": "garbage"}).status == 400


# ---- subscriptions ---------------------------------------------------------------------------

def test_a_subscription_moves_the_plan_invoices_the_period_and_credits_its_price(stack):
    from svc_core.data import tenants_table
    tenant, key = stack.tenant_with_key()
    reply = subscribe(key, "starter")
    assert reply.status == 201, reply
    sub = reply.data
    assert (sub["plan"], sub["status"], sub["testMode"]) == ("starter", "active", True)
    assert sub["currentPeriodStart"] < sub["currentPeriodEnd"] and sub["invoiceId"].startswith("inv_")
    assert tenants_table.get_consistent(tenant)["plan"] == "starter"
    data = summary(key)
    assert data["plan"] == "starter" and data["nextCharge"] == {
        "at": sub["currentPeriodEnd"], "plan": "starter", "amount": 2000, "currency": "usd"}
    assert data["balance"]["microCredits"] == WELCOME + 20 * MICRO
    (invoice,) = invoices(key)
    assert invoice["amount"] == 2000 and invoice["lines"][0]["kind"] == "plan_charge"
    assert ledger(key)[0]["kind"] == "plan_charge"
    again = subscribe(key, "starter")
    assert again.status == 409 and again.error["code"] == "CONFLICT"
    assert subscribe(key, "platinum").status == 400
    up = subscribe(key, "growth")
    assert up.status == 201 and up.data["plan"] == "growth"
    down = subscribe(key, "free")
    assert down.status == 201 and (down.data["plan"], down.data["status"]) == ("free", "canceled")
    assert tenants_table.get_consistent(tenant)["plan"] == "free"
    assert summary(key)["nextCharge"] is None
    assert ledger_sum_equals_balance(tenant) == (WELCOME + 120 * MICRO,) * 2


def test_the_new_plan_s_rate_limit_applies(stack):
    from svc_core.auth import tenant_policy
    from svc_core.contracts import plans
    tenant, key = stack.tenant_with_key()
    subscribe(key, "growth")
    tenant_policy.forget()
    reply = billing("BillingSummary", key)
    assert int(reply.headers["x-ratelimit-limit"]) == plans.requests_per_window("growth")


def test_the_portal_answers_a_test_mode_url(stack):
    _, key = stack.tenant_with_key()
    reply = billing("CreatePortalSession", key)
    assert reply.status == 200 and reply.data["testMode"] is True
    assert reply.data["url"].startswith("https://billing.test-mode.invalid/portal/test_cus_")
    assert billing("CreatePortalSession", key).data["url"] == reply.data["url"]  # one customer per tenant


# ---- gift cards ------------------------------------------------------------------------------

def test_a_gift_card_from_the_operator_command_redeems_once_and_is_stored_hashed(stack, capsys):
    from svc_core.platform.config import settings
    tenant, key = stack.tenant_with_key()
    _, other = stack.tenant_with_key()
    (card,) = issue_cards(15, capsys=capsys)
    assert card["code"].startswith("GC-") and card["id"].startswith("gc_")
    stored = json.dumps(stack.client("dynamodb").scan(TableName=settings().billing_table)["Items"])
    assert card["code"] not in stored and card["code"].replace("-", "") not in stored
    # case and spaces do not matter
    reply = redeem(key, " " + card["code"].lower() + " ")
    assert reply.status == 200, reply
    assert reply.data["microCredits"] == 15 * MICRO and reply.data["giftCardId"] == card["id"]
    assert reply.data["balance"]["microCredits"] == WELCOME + 15 * MICRO
    entry = ledger(key)[0]
    assert (entry["kind"], entry["reference"], entry["id"]) == ("gift_card", card["id"], reply.data["entryId"])
    used = redeem(key, card["code"])
    assert used.status == 409 and used.error["details"]["reason"] == "already_redeemed"
    assert redeem(other, card["code"]).status == 409 and balance(other) == WELCOME
    unknown = redeem(key, "GC-00000-00000-00000-00000")
    assert unknown.status == 404 and unknown.error["details"]["resource"] == "gift_card"
    assert balance(key) == WELCOME + 15 * MICRO
    assert ledger_sum_equals_balance(tenant) == (WELCOME + 15 * MICRO,) * 2


def test_failed_redemptions_are_throttled_per_tenant(stack, capsys):
    _, key = stack.tenant_with_key()
    _, other = stack.tenant_with_key()
    (card,) = issue_cards(5, capsys=capsys)
    answers = [redeem(key, f"GC-00000-00000-00000-0000{i}").status for i in range(5)]
    assert answers == [404] * 5
    throttled = redeem(key, card["code"])  # even a good code, until the hour ends
    assert throttled.status == 429 and throttled.error["code"] == "RATE_LIMIT_EXCEEDED"
    assert 1 <= int(throttled.headers["retry-after"]) <= 3600
    assert balance(key) == WELCOME
    assert redeem(other, card["code"]).status == 200  # another tenant is not held back


def test_the_operator_command_refuses_bad_amounts(stack, capsys):
    from ops.__main__ import main
    assert main(["gift-cards", "issue", "--credits", "0"]) == 2
    assert main(["billing", "adjust", "ten_01JD2Q7ZB6V8S3K4X9W2M5N7PA", "5", "--reason", "x"]) == 1
    tenant, key = stack.tenant_with_key()
    capsys.readouterr()
    assert main(["billing", "adjust", tenant, "-400000", "--reason", "goodwill reversal"]) == 0
    entry = ledger(key)[0]
    assert (entry["kind"], entry["amount"], entry["reason"]) == ("adjustment", -400_000, "goodwill reversal")
    assert entry["principal"].startswith("operator:") and balance(key) == WELCOME - 400_000


# ---- Idempotency-Key ---------------------------------------------------------------------------

def test_the_same_idempotency_key_replays_the_answer_and_charges_once(stack):
    tenant, key = stack.tenant_with_key()
    headers = {"Idempotency-Key": "order-42"}
    first = purchase(key, {"pack": "credits_10"}, headers=headers)
    second = purchase(key, {"pack": "credits_10"}, headers=headers)
    assert first.status == second.status == 201 and first.data == second.data
    assert balance(key) == WELCOME + 10 * MICRO and len(invoices(key)) == 1
    other_body = purchase(key, {"pack": "credits_25"}, headers=headers)
    assert other_body.status == 422 and other_body.error["code"] == "IDEMPOTENCY_KEY_REUSED"
    # keys are per tenant: another tenant's same key is its own request
    _, other = stack.tenant_with_key()
    assert purchase(other, {"pack": "credits_10"}, headers=headers).data["id"] != first.data["id"]
    # and per operation
    assert billing("CreatePortalSession", key, headers=headers).status == 200
    bad = purchase(key, {"pack": "credits_10"}, headers={"Idempotency-Key": "bad key with spaces"})
    assert bad.status == 400 and bad.error["details"]["fields"][0]["in"] == "header", bad
    assert balance(key) == WELCOME + 10 * MICRO


def test_a_request_still_in_flight_with_the_key_is_409(stack, monkeypatch):
    from svc_core.adapters.payments.testmode import TestModeProvider
    from svc_core.domain import billing as domain
    _, key = stack.tenant_with_key()
    entered, release = threading.Event(), threading.Event()

    class Slow(TestModeProvider):
        def pay(self, *args, **kwargs):
            entered.set()
            release.wait(10)
            return super().pay(*args, **kwargs)

    monkeypatch.setattr(domain, "payment_provider", Slow)
    headers = {"Idempotency-Key": "slow-1"}
    with ThreadPoolExecutor(max_workers=1) as pool:
        first = pool.submit(purchase, key, {"pack": "credits_10"}, headers=headers)
        assert entered.wait(10)
        busy = purchase(key, {"pack": "credits_10"}, headers=headers)
        release.set()
        assert first.result().status == 201
    assert busy.status == 409 and busy.error["code"] == "REQUEST_IN_PROGRESS"
    assert balance(key) == WELCOME + 10 * MICRO


def test_a_failed_request_leaves_its_key_free(stack):
    _, key = stack.tenant_with_key()
    headers = {"Idempotency-Key": "sub-1"}
    assert subscribe(key, "free", headers=headers).status == 409  # already on free
    assert subscribe(key, "free", headers=headers).status == 409  # ran again, not replayed as a success


# ---- usage debits and 402 -----------------------------------------------------------------------

def new_agent(key: str) -> str:
    reply = call("agents", "Agents-CreateAgent", token=key, body={"name": "Notes", "systemPrompt": "Keep notes.",
                                                                    "config": {"autonomyLevel": "autonomous"}})
    assert reply.status == 201, reply
    return reply.data["id"]


def run_agent(key: str, agent_id: str, project_id: str, tokens=(2000, 500)):
    provider = ScriptedProvider([text_answer("Done.", *tokens)], model_id=HAIKU)
    with scripted(provider):
        return call("agents", "Agents-ExecuteAgent", token=key, path_params={"id": agent_id},
                    body={"goal": "Write.", "projectId": project_id})


def test_a_run_s_usage_is_debited_from_its_record_and_shown_in_the_summary(stack):
    from svc_core.data import usage_table
    tenant, key = stack.tenant_with_key()
    project = project_api.create(key, name="Docs")
    agent_id = new_agent(key)
    reply = run_agent(key, agent_id, project["id"])
    assert reply.status == 201, reply
    run = reply.data
    (record,) = usage_table.records_for(tenant, run["id"])
    cost = record["microCredits"]
    assert cost == run["usage"]["microCredits"] == 2000 * 1000 // 1000 + 500 * 5000 // 1000
    entry = ledger(key)[0]
    assert (entry["kind"], entry["amount"], entry["reference"]) == ("usage", -cost, run["id"])
    assert entry["principal"].startswith("key_") and entry["requestId"]
    data = summary(key)
    assert data["balance"]["microCredits"] == WELCOME - cost
    assert data["usage"]["agentRuns"] == {"calls": 1, "inputTokens": 2000, "outputTokens": 500, "microCredits": cost}
    assert data["usage"]["chat"]["calls"] == 0 and data["usage"]["totalMicroCredits"] == cost
    assert ledger_sum_equals_balance(tenant) == (WELCOME - cost,) * 2


def test_a_usage_record_is_debited_once_even_if_stored_again(stack):
    from svc_core.data import billing_table
    from svc_core.domain import billing_ledger, metering
    tenant, key = stack.tenant_with_key()
    record = metering.usage_record(tenant, "run", "run_01JD2Q7ZB6V8S3K4X9W2M5N7PA", HAIKU,
                                   {"inputTokens": 1000, "outputTokens": 0})
    billing_ledger.record_usage(record)
    with pytest.raises(billing_table.Refused):
        billing_ledger.record_usage(record)
    assert balance(key) == WELCOME - 1000


def test_no_run_starts_when_the_balance_is_used_up(stack):
    from svc_core.data import usage_table
    from svc_core.domain import billing as domain
    from svc_core.domain import metering
    from svc_core.platform.errors import PaymentRequired
    tenant, key = stack.tenant_with_key()
    domain.adjust(tenant, -WELCOME, "used up", "test")
    with pytest.raises(PaymentRequired) as refused:
        metering.require_credit(tenant)
    assert refused.value.status == 402 and refused.value.details["balanceMicroCredits"] == 0
    project = project_api.create(key, name="Docs")
    agent_id = new_agent(key)
    reply = run_agent(key, agent_id, project["id"])
    assert reply.status == 402 and reply.error["code"] == "PAYMENT_REQUIRED", reply
    assert call("agents", "Agents-ListRuns", token=key, path_params={"id": agent_id}).data["items"] == []
    assert usage_table.records_between(tenant, "2000-01-01T00:00:00.000Z", "2999-01-01T00:00:00.000Z") == []
    purchase(key, {"pack": "credits_10"})
    metering.require_credit(tenant)  # credit again: runs may start
    assert run_agent(key, agent_id, project["id"]).status == 201


# ---- the usage series ------------------------------------------------------------------------

def usage_series(key: str, **query):
    return billing("BillingUsage", key, query={k.rstrip("_"): v for k, v in query.items()} or None)


def test_the_usage_series_sums_each_day_s_calls_per_model_sorted_and_only_the_tenant_s(stack):
    tenant, key = stack.tenant_with_key()
    other, other_key = stack.tenant_with_key()
    a = metered(tenant, HAIKU, "2026-11-02T00:00:00.000Z", 1000, 100)      # the first instant of `from`
    b = metered(tenant, HAIKU, "2026-11-02T13:30:00.000Z", 2000, 300)
    c = metered(tenant, "offline", "2026-11-02T23:59:59.999Z", 500, 50)
    d = metered(tenant, "offline", "2026-11-03T08:00:00.000Z", 700, 70)
    e = metered(tenant, HAIKU, "2026-11-03T23:59:59.999Z", 3000, 0)       # the last instant of `to`
    metered(tenant, HAIKU, "2026-11-01T23:59:59.999Z", 9000, 900)          # the day before: not counted
    metered(tenant, "offline", "2026-11-04T00:00:00.000Z", 9000, 900)      # the day after: not counted
    metered(other, HAIKU, "2026-11-02T12:00:00.000Z", 4000, 400)           # another tenant's: never counted
    reply = usage_series(key, from_="2026-11-02", to="2026-11-03")
    assert reply.status == 200, reply
    assert reply.data == {"from": "2026-11-02", "to": "2026-11-03", "models": ["offline", HAIKU], "days": [
        day_of("2026-11-02", "offline", c), day_of("2026-11-02", HAIKU, a, b),
        day_of("2026-11-03", "offline", d), day_of("2026-11-03", HAIKU, e)]}
    assert reply.data["days"][1] == {"date": "2026-11-02", "model": HAIKU, "calls": 2, "inputTokens": 3000,
                                     "outputTokens": 400, "microCredits": 3000 + 400 * 5}
    # Days without calls are left out; a range without any has no models.
    assert usage_series(key, from_="2026-10-01", to="2026-10-31").data == {
        "from": "2026-10-01", "to": "2026-10-31", "models": [], "days": []}
    assert usage_series(key, from_="2026-11-03", to="2026-11-03").data["days"] == [
        day_of("2026-11-03", "offline", d), day_of("2026-11-03", HAIKU, e)]
    # The other tenant sees its own call only.
    assert usage_series(other_key, from_="2026-11-01", to="2026-11-04").data["days"] == [
        {"date": "2026-11-02", "model": HAIKU, "calls": 1, "inputTokens": 4000, "outputTokens": 400,
         "microCredits": 4000 + 400 * 5}]


def test_the_usage_series_is_the_30_days_to_today_by_default(stack):
    from datetime import UTC, datetime, timedelta
    tenant, key = stack.tenant_with_key()
    today = datetime.now(UTC).date()
    first = today - timedelta(days=29)
    now = metered(tenant, HAIKU, None, 100, 10)
    earliest = metered(tenant, HAIKU, f"{first.isoformat()}T00:00:00.000Z", 200, 20)
    metered(tenant, HAIKU, f"{(first - timedelta(days=1)).isoformat()}T23:59:59.999Z", 400, 40)  # a day too early
    reply = usage_series(key)
    assert reply.status == 200, reply
    if datetime.now(UTC).date() != today:  # midnight passed meanwhile: the default moved with it
        pytest.skip("the UTC day changed during the test")
    assert (reply.data["from"], reply.data["to"]) == (first.isoformat(), today.isoformat())
    assert reply.data["days"] == [day_of(first.isoformat(), HAIKU, earliest), day_of(now["created_at"][:10], HAIKU, now)]
    # `to` alone: the 30 days to it; `from` alone: from it to today.
    assert usage_series(key, to=first.isoformat()).data["from"] == (first - timedelta(days=29)).isoformat()
    alone = usage_series(key, from_=today.isoformat()).data
    assert (alone["from"], alone["to"], alone["days"]) == (today.isoformat(), today.isoformat(),
                                                           [day_of(today.isoformat(), HAIKU, now)])


@pytest.mark.parametrize(("query", "field"), [
    ({"from_": "2026-11-31", "to": "2026-12-01"}, "from"),         # no such day
    ({"from_": "2025-02-29"}, "from"),                             # not a leap year
    ({"to": "2026-13-01"}, "to"),
    ({"to": "0000-01-01"}, "to"),                                  # the calendar starts at 0001
    ({"from_": "20261101"}, "from"),                               # ISO's basic form is not taken
    ({"to": "2026-11-1"}, "to"),
    ({"from_": "2026-11-01T00:00:00Z"}, "from"),
    ({"from_": ""}, "from"),
])
def test_a_day_the_document_does_not_take_is_400_naming_the_field(stack, query, field):
    _, key = stack.tenant_with_key()
    reply = usage_series(key, **query)
    assert reply.status == 400 and reply.error["code"] == "VALIDATION_ERROR", reply
    assert [(f["field"], f["in"]) for f in reply.error["details"]["fields"]] == [(field, "query")], reply.error


@pytest.mark.parametrize(("query", "covered"), [
    ({"from_": "2026-11-03", "to": "2026-11-02"}, ("2026-11-03", "2026-11-02")),   # from after to: empty
    ({"from_": "2026-01-01", "to": "2026-04-03"}, ("2026-01-02", "2026-04-03")),   # 93 days: the last 92
    ({"to": "0001-01-05"}, ("0001-01-01", "0001-01-05")),                          # from the calendar's first day
    ({"to": "9999-12-31"}, ("9999-12-02", "9999-12-31")),                          # to the calendar's last
    ({"from_": "2024-02-29", "to": "2024-02-29"}, ("2024-02-29", "2024-02-29")),   # a leap day
])
def test_every_range_the_document_takes_is_answered_and_says_what_it_covers(stack, query, covered):
    """A request valid by the document is never refused as invalid (docs/conventions.md)."""
    tenant, key = stack.tenant_with_key()
    metered(tenant, HAIKU, "2026-01-01T12:00:00.000Z", 100, 10)     # before the kept 92 days
    metered(tenant, HAIKU, "2026-01-02T00:00:00.000Z", 200, 20)     # their first instant
    reply = usage_series(key, **query)
    assert reply.status == 200, reply
    assert (reply.data["from"], reply.data["to"]) == covered
    days = [d["date"] for d in reply.data["days"]]
    assert days == (["2026-01-02"] if covered[0] == "2026-01-02" else []), reply.data


def test_the_usage_series_takes_92_days_and_needs_billing_read(stack):
    tenant, key = stack.tenant_with_key(scopes=["billing:read"])
    metered(tenant, HAIKU, "2026-04-02T12:00:00.000Z", 100, 10)
    reply = usage_series(key, from_="2026-01-01", to="2026-04-02")             # 92 days, both included
    assert reply.status == 200 and [d["date"] for d in reply.data["days"]] == ["2026-04-02"], reply
    for scopes in (["billing:write"], ["projects:read"]):
        _, narrow = stack.tenant_with_key(scopes=scopes)
        refused = usage_series(narrow)
        assert refused.status == 403 and refused.error["code"] == "FORBIDDEN", refused
        assert refused.error["details"]["requiredScope"] == "billing:read"
    assert billing("BillingUsage", None).status == 401


# ---- the welcome credit: once per user ---------------------------------------------------------

PASSWORD = "correct horse battery staple"


def a_second_tenant_of(email: str) -> tuple[str, str, str]:
    """Register (a first tenant, with the welcome credit), create a second tenant and sign in to it:
    (first tenant's token, second tenant's id, second tenant's token)."""
    call("auth", "Auth-Register", body={"email": email, "password": PASSWORD, "name": "Ada"})
    first = call("auth", "Auth-Login", body={"email": email, "password": PASSWORD}).data
    second = call("tenants", "Tenants-CreateTenant", token=first["accessToken"], body={"name": "Second"})
    assert second.status == 201, second
    pair = call("auth", "Auth-Refresh", body={"refreshToken": first["refreshToken"], "tenantId": second.data["id"]})
    assert pair.status == 200, pair
    return first["accessToken"], second.data["id"], pair.data["accessToken"]


def test_a_users_second_tenant_opens_at_zero_and_runs_and_chats_only_once_credits_are_bought(stack):
    first, tenant, token = a_second_tenant_of("ada@example.com")
    assert balance(first) == WELCOME   # the first tenant's: the user's one welcome credit
    assert balance(token) == 0 and ledger(token) == []
    assert ledger_sum_equals_balance(tenant) == (0, 0)
    project = project_api.create(token, name="Docs")
    agent_id = new_agent(token)
    refused = run_agent(token, agent_id, project["id"])
    assert refused.status == 402 and refused.error["code"] == "PAYMENT_REQUIRED", refused
    session = call("chat", "Chat-CreateChatSession", token=token, body={}).data
    message = {"content": "Hello there."}
    chat = call("chat", "Chat-SendChatMessage", token=token, path_params={"id": session["id"]}, body=message)
    assert chat.status == 402 and chat.error["details"]["balanceMicroCredits"] == 0, chat

    assert purchase(token, {"pack": "credits_10"}).status == 201
    assert run_agent(token, agent_id, project["id"]).status == 201
    assert call("chat", "Chat-SendChatMessage", token=token, path_params={"id": session["id"]},
                body=message).status == 202


# ---- concurrency (DynamoDB Local) ---------------------------------------------------------------

def test_of_twenty_concurrent_redemptions_of_one_code_exactly_one_succeeds(atomic_stack, capsys):
    stack = atomic_stack.stack
    tenant, key = stack.tenant_with_key()
    (card,) = issue_cards(50, capsys=capsys)
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda _: redeem(key, card["code"]), range(20)))
    statuses = sorted(a.status for a in answers)
    assert statuses.count(200) == 1 and set(statuses) <= {200, 409, 429}, statuses
    assert balance(key) == WELCOME + 50 * MICRO
    assert [e["kind"] for e in ledger(key)].count("gift_card") == 1


def test_thousands_of_concurrent_mixed_entries_keep_the_balance_equal_to_their_sum(atomic_stack):
    """2,000 entries from six threads at once on one balance: four replay 450 mixed entries each
    (the operator's import, 50 a call), one debits 100 metered calls, one credits 100 purchases.
    (DynamoDB Local writes ~400 items a second here: this is about as many as CI can afford.)"""
    from svc_core.domain import billing as domain
    from svc_core.domain import billing_ledger, metering
    tenant = atomic_stack.stack.new_tenant()
    billing_ledger.ensure_account(tenant)
    kinds = ("purchase", "gift_card", "adjustment", "refund", "plan_charge")

    def replay(worker: int) -> int:
        rows = [{"kind": kinds[i % 5], "amount": (i + 1) * (-7 if kinds[i % 5] in ("refund", "adjustment") else 13),
                 "reason": f"replay {worker}.{i}"} for i in range(450)]
        for start in range(0, 450, 50):
            assert domain.import_entries(tenant, rows[start:start + 50], "test") == 50
        return sum(r["amount"] for r in rows)

    def debit(_: int) -> int:
        total = 0
        for i in range(100):
            record = metering.usage_record(tenant, "run", "run_01JD2Q7ZB6V8S3K4X9W2M5N7PA", HAIKU,
                                           {"inputTokens": 1000 + i, "outputTokens": i})
            billing_ledger.record_usage(record)
            total -= record["microCredits"]
        return total

    def credit(_: int) -> int:
        for i in range(100):
            billing_ledger.record(tenant, billing_ledger.new_entry(
                "purchase", MICRO + i, principal="test", request_id=None, reason="purchase", reference=None))
        return sum(MICRO + i for i in range(100))

    with ThreadPoolExecutor(max_workers=6) as pool:
        futures = [pool.submit(replay, w) for w in range(4)] + [pool.submit(debit, 0), pool.submit(credit, 0)]
        expected = WELCOME + sum(f.result() for f in futures)
    total, stored = ledger_sum_equals_balance(tenant)
    assert total == stored == expected
    from svc_core.data import billing_table
    assert len(billing_table.all_entries(tenant)) == 1 + 1800 + 200


def test_a_test_mode_subscription_is_charged_again_when_its_period_has_ended(stack, monkeypatch):
    from svc_core.platform import timeutil
    tenant, key = stack.tenant_with_key()
    first = subscribe(key, "starter").data
    real_now = timeutil.now
    monkeypatch.setattr(timeutil, "now", lambda: real_now() + 61 * 24 * 3600)  # two periods later
    data = summary(key)
    assert data["balance"]["microCredits"] == WELCOME + 3 * 20 * MICRO
    assert data["subscription"]["currentPeriodStart"] > first["currentPeriodEnd"]
    assert data["nextCharge"]["at"] == data["subscription"]["currentPeriodEnd"] > timeutil.iso(timeutil.now())
    periods = [(i["periodStart"], i["periodEnd"]) for i in reversed(invoices(key))]
    assert len(periods) == 3 and periods[0][1] == periods[1][0] and periods[1][1] == periods[2][0]
    assert summary(key)["balance"]["microCredits"] == WELCOME + 3 * 20 * MICRO  # charged once
    assert ledger_sum_equals_balance(tenant) == (WELCOME + 60 * MICRO,) * 2


def test_tenants_created_at_once_by_one_user_share_one_welcome_credit_and_the_ceiling(atomic_stack):
    """A user who joined a tenant by invitation has had no welcome credit: eight creations at once
    (DynamoDB Local) make five tenants (TENANTS_PER_USER), refuse three, and one of the five has the
    credit. A client sends a 409 (the user's creations collided) again."""
    from svc_core.data import tenants_table, users_table
    from svc_core.data.common import transact
    from svc_core.domain import billing_ledger
    from svc_core.platform import ids, timeutil
    stack = atomic_stack.stack
    host, user_id, stamp = stack.new_tenant(), ids.new_id("usr"), timeutil.iso(timeutil.now())
    transact([*users_table.put_new({"id": user_id, "email": "joined@example.com", "name": "J", "status": "active",
                                    "created_at": stamp}),
              users_table.put_membership(user_id, host, "member", stamp)])
    token = stack.user_token(host, "member", user_id)
    start = threading.Barrier(8)

    def create(n: int):
        start.wait()
        for _ in range(10):
            reply = call("tenants", "Tenants-CreateTenant", token=token, body={"name": f"Mine {n}"})
            if reply.status != 409:
                return reply
        return reply

    with ThreadPoolExecutor(max_workers=8) as pool:
        replies = list(pool.map(create, range(8)))
    assert sorted(r.status for r in replies) == [201] * 5 + [403] * 3, replies
    made = [r.data["id"] for r in replies if r.status == 201]
    grants = [tenants_table.get_consistent(t)["welcomeGrant"] for t in made]
    assert grants.count(True) == 1
    assert [billing_ledger.balance_of(t) for t in made].count(WELCOME) == 1
    assert sum(billing_ledger.balance_of(t) for t in made) == WELCOME
    assert users_table.get(user_id)["tenantsCreated"] == 5
    assert users_table.get(user_id)["welcomeCreditTenant"] == made[grants.index(True)]
