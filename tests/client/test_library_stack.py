"""The client library against the local stack over real HTTP: every area it covers, errors as the
service sends them, pagination through real cursors, a real 429 retried after its Retry-After,
sign-in and token refresh, the async client, and webhooks verified with the library's helper."""

from __future__ import annotations

import asyncio
import time

import pytest

from svc_client import (
    AccountDisabled,
    AsyncClient,
    Client,
    Conflict,
    Forbidden,
    IdempotencyKeyReused,
    InvalidCredentials,
    NotFound,
    ProjectEvent,
    RateLimited,
    RetryPolicy,
    Unauthorized,
    ValidationError,
    WebhookTestEvent,
    verify_webhook,
)
from tests.support.usage import day_of, metered
from tests.support.webhook_receiver import Receiver, new_secret

MISSING_PROJECT = "proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA"


@pytest.fixture
def svc(account):
    with Client(account["baseUrl"], api_key=account["key"]) as client:
        yield client


def test_projects_create_read_update_delete(svc):
    made = svc.projects.create("Apollo", description="Moon shot", language="python")
    assert made.id.startswith("proj_") and made.created_at.endswith("Z")
    assert svc.projects.get(made.id) == made
    changed = svc.projects.update(made.id, description="Mars")
    assert changed.description == "Mars" and changed.name == "Apollo"
    assert svc.projects.delete(made.id).deleted is True
    with pytest.raises(NotFound):
        svc.projects.get(made.id)


def test_iter_walks_every_page_of_a_real_list(svc):
    names = [f"P{i}" for i in range(5)]
    for name in names:
        svc.projects.create(name)
    first = svc.projects.list(limit=2)
    assert len(first.items) == 2 and first.next_cursor
    assert [p.name for p in svc.projects.iter(limit=2)] == list(reversed(names))  # newest first


def test_errors_carry_the_code_details_status_and_request_id(svc, account):
    with pytest.raises(NotFound) as missing:
        svc.projects.get(MISSING_PROJECT)
    assert missing.value.status == 404 and missing.value.details["id"] == MISSING_PROJECT
    assert missing.value.request_id and missing.value.request_id == missing.value.headers["x-request-id"]
    with pytest.raises(ValidationError) as invalid:
        svc.projects.create("x" * 201)
    assert [f["field"] for f in invalid.value.fields] == ["name"]
    with Client(account["baseUrl"], api_key="") as anonymous, pytest.raises(Unauthorized):
        anonymous.projects.list()


def test_another_tenants_project_is_not_found(svc, local_stack):
    mine = svc.projects.create("Mine")
    with Client(local_stack.base_url, api_key=local_stack.credentials["apiKey"]) as other:
        with pytest.raises(NotFound):
            other.projects.get(mine.id)


def test_a_real_429_is_retried_after_its_retry_after(account, monkeypatch):
    """Two requests per 3-second window: of six quick requests some must be refused (at most one
    window boundary falls among them), and the patient client waits out each Retry-After."""
    from svc_core.platform import config
    monkeypatch.setenv("RATE_LIMIT_PER_WINDOW", "2")
    monkeypatch.setenv("RATE_LIMIT_WINDOW_SECONDS", "3")
    config.settings.cache_clear()
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        time.sleep(seconds)

    try:
        with Client(account["baseUrl"], api_key=account["key"], retry=RetryPolicy(max_retries=0)) as impatient:
            with pytest.raises(RateLimited) as refused:
                for _ in range(6):
                    impatient.projects.list()
            assert 1 <= refused.value.retry_after <= 3 and refused.value.details["limit"] == 2
        with Client(account["baseUrl"], api_key=account["key"], sleep=sleep,
                    retry=RetryPolicy(max_retries=5)) as patient:
            for _ in range(6):
                assert patient.projects.list().items == []
        assert slept and all(1 <= s <= 3 for s in slept)
    finally:
        monkeypatch.undo()
        config.settings.cache_clear()


def test_sign_in_refresh_and_logout_with_the_token_in_memory(account):
    from svc_core.data import users_table
    from svc_core.domain.accounts import set_user_status

    clock = [time.time()]
    with Client(account["baseUrl"], api_key=None, clock=lambda: clock[0]) as svc:
        grant = svc.auth.login(account["email"], account["password"])
        assert grant.expires_in == 900 and grant.user.email == account["email"]
        assert svc.auth.me().user.email == account["email"]
        first = svc.credentials.access_token
        clock[0] += 841  # within 60 s of the end: the client refreshes before the next call
        assert svc.projects.list().items == []
        assert svc.credentials.access_token != first
        assert svc.auth.logout().logged_out is True
        assert svc.credentials.access_token is None
        with pytest.raises(Unauthorized):
            svc.projects.list()
        with pytest.raises(InvalidCredentials):
            svc.auth.login(account["email"], "not the password at all")
        set_user_status(users_table.id_for_email(account["email"]), "disabled")
        with pytest.raises(AccountDisabled):
            svc.auth.login(account["email"], account["password"])


def test_agents_and_runs(svc):
    project = svc.projects.create("Docs")
    agent = svc.agents.create("Notes", "You keep the project's notes.", "autonomous", step_limit=4)
    assert agent.config.autonomy_level == "autonomous" and agent.config.step_limit == 4
    run = svc.agents.execute(agent.id, "List the files of the project.", project.id)
    assert run.status in ("completed", "failed") and run.agent_id == agent.id
    assert run.usage.input_tokens > 0 and run.model == "offline"
    assert svc.agents.get_run(agent.id, run.id).id == run.id
    assert [r.id for r in svc.agents.iter_runs(agent.id)] == [run.id]
    with pytest.raises(Conflict) as missing:  # a well-formed id in the body naming nothing: 409 naming the field
        svc.agents.execute(agent.id, "Go.", MISSING_PROJECT)
    assert missing.value.details["resource"] == "project"


def test_api_keys_created_listed_and_revoked(svc, account):
    made = svc.api_keys.create("ci", "ci", "Staging", scopes=["projects:read"])
    assert made.key.startswith("svc_ci_") and made.scopes == ["projects:read"]
    assert made.id in [k.id for k in svc.api_keys.iter()]
    with Client(account["baseUrl"], api_key=made.key) as limited:
        assert limited.projects.list().items == []
        with pytest.raises(Forbidden) as refused:
            limited.projects.create("no")
        assert refused.value.details["requiredScope"] == "projects:write"
        assert svc.api_keys.revoke(made.id).status == "revoked"
        with pytest.raises(Unauthorized):
            limited.projects.list()


def test_tenant_settings_and_regional_preferences(svc, account):
    tenant_id = account["tenantId"]
    assert svc.tenants.get(tenant_id).plan == "free"
    assert svc.tenants.update_settings(tenant_id, timezone="Europe/Berlin").settings.timezone == "Europe/Berlin"
    assert [t.id for t in svc.tenants.list().items] == [tenant_id]
    regions = svc.regions.list()
    assert "eu-west-1" in [r.id for r in regions.items]
    assert svc.regions.preferences(tenant_id).is_default is True
    changed = svc.regions.update_preferences(tenant_id, primaryRegion="eu-west-1")
    assert changed.primary_region == "eu-west-1" and changed.is_default is False
    with pytest.raises(Forbidden) as plan:
        svc.regions.update_preferences(tenant_id, secondaryRegion="eu-central-1")
    assert plan.value.details["feature"] == "secondary_region"
    assert svc.regions.storage(tenant_id).storage_mode == "platform"
    assert svc.regions.routing_info().tenant_id == tenant_id
    with pytest.raises(NotFound):
        svc.regions.preferences("ten_01JD2Q7ZB6V8S3K4X9W2M5N7PA")


def test_secrets_metadata_only(svc):
    made = svc.secrets.create("OPENAI_KEY", "not-a-real-value", description="for tests")
    assert made.version == 1 and "value" not in made.raw()
    assert svc.secrets.update(made.id, value="another").version == 2
    with pytest.raises(Conflict):
        svc.secrets.create("openai_key", "x")  # the name is taken whatever its case


def test_webhook_deliveries_verify_with_the_helper_and_parse_as_typed_events(svc):
    receiver = Receiver(new_secret())
    try:
        webhook = svc.webhooks.create(receiver.url, ["project.created"], receiver.secret)
        project = svc.projects.create("Hooked")
        queued = svc.webhooks.test(webhook.id)
        deliveries = receiver.wait_for(2, timeout=15)
        assert len(deliveries) == 2
        events = [verify_webhook(d.body, d.headers, receiver.secret) for d in deliveries]
        by_type = {type(e): e for e in events}
        assert by_type[ProjectEvent].data.id == project.id and by_type[ProjectEvent].data.name == "Hooked"
        assert by_type[WebhookTestEvent].id == queued.id and by_type[WebhookTestEvent].data.webhook_id == webhook.id
        # The attempt is logged after the receiver has answered: the log may lag its arrival a little.
        deadline = time.monotonic() + 10
        while len(attempts := list(svc.webhooks.iter_deliveries(webhook.id))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert {a.outcome for a in attempts} == {"delivered"} and len(attempts) == 2
        with pytest.raises(Conflict):
            for _ in range(21):
                svc.webhooks.create(receiver.url, ["*"], receiver.secret)
    finally:
        receiver.stop()


def test_the_async_client_against_the_stack(account):
    async def main():
        async with AsyncClient(account["baseUrl"], api_key=account["key"]) as svc:
            made = await asyncio.gather(*(svc.projects.create(f"A{i}") for i in range(3)))
            listed = [p.id async for p in svc.projects.iter(limit=1)]
            with pytest.raises(NotFound):
                await svc.projects.get(MISSING_PROJECT)
            me = await svc.auth.me()
            return made, listed, me

    made, listed, me = asyncio.run(main())
    assert sorted(p.id for p in made) == sorted(listed)
    assert me.tenant.id == account["tenantId"]


def test_billing_summary_purchase_with_idempotency_and_the_ledger(svc):
    summary = svc.billing.summary()
    assert summary.plan == "free" and summary.packs
    pack = summary.packs[0]
    bought = svc.billing.purchase_credits(pack=pack.id, idempotency_key="client-test-purchase-1")
    again = svc.billing.purchase_credits(pack=pack.id, idempotency_key="client-test-purchase-1")
    assert again.id == bought.id                   # the same key answers the first answer again
    other = svc.billing.purchase_credits(pack=pack.id)   # a generated key: a new purchase
    assert other.id != bought.id
    purchases = [e for e in svc.billing.iter_ledger(limit=1) if e.kind == "purchase"]
    assert sorted(e.reference for e in purchases) == sorted([bought.id, other.id])
    assert bought.status == "succeeded" and bought.test_mode   # the local stack's test payments settle at once
    assert svc.billing.summary().balance.micro_credits >= summary.balance.micro_credits + 2 * bought.micro_credits
    assert bought.invoice_id in [i.id for i in svc.billing.iter_invoices()]
    with pytest.raises(IdempotencyKeyReused):
        svc.billing.purchase_credits(credits=pack.credits + 1, idempotency_key="client-test-purchase-1")


def test_billing_usage_is_typed_per_day_and_model_and_a_bad_day_is_a_validation_error(svc, account):
    first = metered(account["tenantId"], "offline", "2026-11-02T09:00:00.000Z", 500, 50)
    second = metered(account["tenantId"], "offline", "2026-11-03T09:00:00.000Z", 700, 70)
    series = svc.billing.usage(from_="2026-11-01", to="2026-11-03")
    assert (series.from_, series.to, series.models) == ("2026-11-01", "2026-11-03", ["offline"])
    assert [d.raw() for d in series.days] == [day_of("2026-11-02", "offline", first),
                                              day_of("2026-11-03", "offline", second)]
    assert series.days[1].micro_credits == second["microCredits"]
    empty = svc.billing.usage(from_="2026-11-04", to="2026-11-03")   # from after to: an empty range
    assert (empty.from_, empty.to, empty.days) == ("2026-11-04", "2026-11-03", [])
    with pytest.raises(ValidationError) as refused:
        svc.billing.usage(from_="2026-11-31")                              # a day the calendar lacks
    assert refused.value.status == 400


def test_a_supervised_run_waits_for_approval_and_is_approved_rejected_or_cancelled(svc):
    project = svc.projects.create("Reviewed")
    agent = svc.agents.create("Writer", "You write files.", "supervised")
    goals = "Write a file notes.md saying hello."
    waiting = [svc.agents.execute(agent.id, goals, project.id) for _ in range(3)]
    assert [r.status for r in waiting] == ["awaiting_approval"] * 3
    approved = svc.agents.approve_run(agent.id, waiting[0].id, reason="fine")
    rejected = svc.agents.reject_run(agent.id, waiting[1].id, reason="not now")
    cancelled = svc.agents.cancel_run(agent.id, waiting[2].id)
    assert (approved.status, rejected.status) == ("completed", "completed")   # the offline model goes on
    assert "wrote notes.md" in approved.output
    assert any(s.get("approval", {}).get("decision") == "approved" for s in approved.steps)
    assert any(s.get("approval", {}).get("decision") == "rejected" for s in rejected.steps)
    assert cancelled.status == "cancelled" and cancelled.error.code == "CANCELLED"
    with pytest.raises(Conflict):
        svc.agents.approve_run(agent.id, waiting[2].id)
