"""Billing on the local stack over real HTTP (issue 8's "done when"): a tenant buys credits (test
mode), redeems a gift card issued by the operator command, runs an agent whose usage is debited,
sees all of it in the summary, the ledger and an invoice, and cannot run once the balance is used up."""

from __future__ import annotations

import json

import httpx

MICRO = 1_000_000


def new_tenant_key() -> tuple[str, str]:
    """A tenant of its own (the shared development tenant's balance stays untouched)."""
    import secrets

    from svc_core.auth.scopes import ALL_SCOPES
    from svc_core.domain.api_keys import issue_key
    from svc_core.domain.tenants import create_tenant_with_owner
    created = create_tenant_with_owner(tenant_name="Billing e2e", email=f"billing-{secrets.token_hex(4)}@example.com",
                                       user_name="Payer", password=secrets.token_urlsafe(16))
    tenant_id = created["tenant"]["id"]
    key = issue_key(tenant_id=tenant_id, created_by=created["user"]["id"], name="e2e", key_type="sdk",
                    environment="Development", scopes=sorted(ALL_SCOPES), expires_in_days=None)["key"]
    return tenant_id, key


def operator(capsys, *argv: str) -> dict | list:
    from ops.__main__ import main
    capsys.readouterr()
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_buy_redeem_run_see_it_all_and_be_refused_when_the_balance_is_used_up(local_stack, capsys):
    tenant_id, key = new_tenant_key()
    with httpx.Client(base_url=local_stack.base_url, timeout=20, headers={"Authorization": f"Bearer {key}"}) as http:
        start = http.get("/api/v1/billing/summary").json()["data"]
        assert start["testMode"] is True and start["balance"]["microCredits"] == MICRO  # the welcome grant

        bought = http.post("/api/v1/billing/credits/purchase", json={"pack": "credits_10"},
                           headers={"Idempotency-Key": "e2e-buy-1"})
        again = http.post("/api/v1/billing/credits/purchase", json={"pack": "credits_10"},
                          headers={"Idempotency-Key": "e2e-buy-1"})
        assert bought.status_code == 201 and bought.json()["data"]["status"] == "succeeded", bought.text
        assert again.json()["data"] == bought.json()["data"]  # replayed, charged once

        (card,) = operator(capsys, "gift-cards", "issue", "--credits", "5")
        redeemed = http.post("/api/v1/billing/gift-cards/redeem", json={"code": card["code"]})
        assert redeemed.status_code == 200, redeemed.text

        project = http.post("/api/v1/projects", json={"name": "Paid work"}).json()["data"]
        agent = http.post("/api/v1/agents", json={"name": "Notes", "systemPrompt": "You keep notes.",
                                                  "config": {"autonomyLevel": "autonomous"}}).json()["data"]
        ran = http.post(f"/api/v1/agents/{agent['id']}/execute",
                        json={"goal": "Write the file notes.md with 'paid'", "projectId": project["id"]})
        assert ran.status_code == 201 and ran.json()["data"]["status"] == "completed", ran.text
        cost = ran.json()["data"]["usage"]["microCredits"]
        assert cost > 0

        summary = http.get("/api/v1/billing/summary").json()["data"]
        assert summary["balance"]["microCredits"] == MICRO + 10 * MICRO + 5 * MICRO - cost
        assert summary["usage"]["agentRuns"]["microCredits"] == cost and summary["usage"]["agentRuns"]["calls"] >= 1
        (invoice,) = http.get("/api/v1/billing/invoices").json()["data"]["items"]
        assert invoice["amount"] == 1000 and invoice["status"] == "paid" and invoice["testMode"] is True
        assert http.get(f"/api/v1/billing/invoices/{invoice['id']}").json()["data"] == invoice
        kinds = [e["kind"] for e in http.get("/api/v1/billing/ledger", params={"limit": 100}).json()["data"]["items"]]
        assert kinds[-3:] == ["gift_card", "purchase", "grant"] and set(kinds[:-3]) == {"usage"}

        left = summary["balance"]["microCredits"]
        operator(capsys, "billing", "adjust", tenant_id, str(-left), "--reason", "e2e: use it all up")
        refused = http.post(f"/api/v1/agents/{agent['id']}/execute",
                            json={"goal": "Write again", "projectId": project["id"]})
        assert refused.status_code == 402 and refused.json()["error"]["code"] == "PAYMENT_REQUIRED", refused.text
        runs = http.get(f"/api/v1/agents/{agent['id']}/runs").json()["data"]["items"]
        assert [r["id"] for r in runs] == [ran.json()["data"]["id"]]
        assert http.get("/api/v1/billing/summary").json()["data"]["balance"]["microCredits"] == 0
