"""Usage records on the moto server: one item per model call, totals per run and per message,
a tenant's calls by time, and nothing seen across tenants."""

from __future__ import annotations

import pytest

from svc_core.adapters.models.offline import OfflineProvider
from svc_core.adapters.models.scripted import ScriptedProvider, text_answer, tool_answer
from svc_core.domain import metering
from svc_core.platform import ids
from tests.support.stack import provisioned_stack

HAIKU = "us.anthropic.claude-haiku-4-5-20251001-v1:0"


@pytest.fixture(scope="module")
def stack(emulator):
    yield from provisioned_stack(emulator)


def test_the_stack_uses_the_offline_model_and_has_the_usage_table(stack):
    from svc_core.adapters.models.registry import provider_for
    from svc_core.platform.config import settings
    assert stack.environment["MODEL_PROVIDER"] == "offline" and stack.environment["USAGE_TABLE"] == "UsageTable"
    assert settings().usage_table == "UsageTable" and provider_for(settings()).name == "offline"


def test_every_call_of_a_run_is_recorded_and_totalled(stack):
    from svc_core.data import usage_table
    tenant, run = stack.new_tenant(), ids.new_id("run")
    script = ScriptedProvider([tool_answer("list_files", {}, input_tokens=1200, output_tokens=40),
                               {**text_answer("Two files.", 1300, 60),
                                "usage": {"inputTokens": 1300, "outputTokens": 60, "cacheReadInputTokens": 1000}}],
                              model_id=HAIKU)
    records = [metering.record_call(tenant, "run", run, script.converse({"messages": []})) for _ in range(2)]
    assert [r["microCredits"] for r in records] == [1400, 1700]          # 1200 + 200; 1300 + 300 + 100
    total = usage_table.total_for(tenant, run)
    assert total == {"inputTokens": 2500, "outputTokens": 100, "cacheReadTokens": 1000, "cacheWriteTokens": 0,
                     "microCredits": 3100, "calls": 2, "estimated": False}
    stored = usage_table.records_for(tenant, run)
    assert [r["microCredits"] for r in stored] == [1400, 1700]              # oldest first
    assert set(stored[0]) == {"tenantId", "source", "sourceId", "model", "inputTokens", "outputTokens",
                              "cacheReadTokens", "cacheWriteTokens", "estimated", "priceVersion", "microCredits",
                              "created_at", "failed"}
    assert stored[0]["failed"] is False
    assert stored[0]["model"] == HAIKU and stored[0]["priceVersion"] == metering.CURRENT


def test_a_message_answered_offline_is_recorded_as_estimated(stack):
    from svc_core.data import usage_table
    tenant, message = stack.new_tenant(), ids.new_id("msg")
    result = OfflineProvider().converse({"messages": [{"role": "user", "content": [{"text": "hello"}]}]})
    metering.record_call(tenant, "message", message, result)
    total = usage_table.total_for(tenant, message)
    assert total["calls"] == 1 and total["estimated"] is True
    assert total["microCredits"] == metering.cost(result.usage, "offline") > 0
    assert total["inputTokens"] == result.usage["inputTokens"]


def test_totals_are_per_tenant_and_per_source(stack):
    from svc_core.data import usage_table
    tenant, other = stack.new_tenant(), stack.new_tenant("Other")
    run, another_run = ids.new_id("run"), ids.new_id("run")
    usage = {"inputTokens": 10, "outputTokens": 1}
    usage_table.record(metering.usage_record(tenant, "run", run, HAIKU, usage))
    usage_table.record(metering.usage_record(tenant, "run", another_run, HAIKU, usage))
    assert usage_table.total_for(tenant, run)["calls"] == 1
    assert usage_table.total_for(other, run) == {"inputTokens": 0, "outputTokens": 0, "cacheReadTokens": 0,
                                                 "cacheWriteTokens": 0, "microCredits": 0, "calls": 0,
                                                 "estimated": False}
    assert usage_table.total_for(tenant, ids.new_id("run"))["calls"] == 0


def test_a_tenants_calls_read_by_period(stack):
    from svc_core.data import usage_table
    tenant, run = stack.new_tenant(), ids.new_id("run")
    usage = {"inputTokens": 1000, "outputTokens": 0}
    for moment in (1_790_000_000, 1_790_000_060, 1_790_003_600):       # 2026-09-21T14:13:20Z, +1 min, +1 h
        usage_table.record(metering.usage_record(tenant, "run", run, HAIKU, usage, now=moment))
    start, end = "2026-09-21T14:13:20.000Z", "2026-09-21T15:13:20.000Z"   # the hour, end excluded
    found = usage_table.records_between(tenant, start, end)
    assert [r["created_at"] for r in found] == ["2026-09-21T14:13:20.000Z", "2026-09-21T14:14:20.000Z"]
    assert usage_table.summed(found)["microCredits"] == 2000
    assert usage_table.records_between(stack.new_tenant(), start, end) == []
