"""The model layer without AWS: the offline model, stream assembly, the scripted provider, the
registry and its guard against the real model, and the price arithmetic."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from svc_core.adapters.models.base import StreamAssembler, assemble, chunks, events_of
from svc_core.adapters.models.offline import LABEL, OfflineProvider, estimate_tokens
from svc_core.adapters.models.scripted import ScriptedProvider, ScriptExhausted, text_answer, tool_answer
from svc_core.platform.errors import ModelThrottled, ValidationFailed

WRITE_FILE = {"toolSpec": {"name": "write_file", "description": "Write a file in the workspace", "inputSchema": {
    "json": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"},
                                               "overwrite": {"type": "boolean"}},
             "required": ["path", "content"]}}}}
LIST_FILES = {"toolSpec": {"name": "list_files", "description": "List files", "inputSchema": {
    "json": {"type": "object", "properties": {"prefix": {"type": "string"}, "limit": {"type": "integer",
                                                                                       "minimum": 1}}}}}}
READ_FILE = {"toolSpec": {"name": "read_file", "description": "Read a file", "inputSchema": {
    "json": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}}
TOOLS = {"tools": [READ_FILE, LIST_FILES, WRITE_FILE]}


def user(text: str) -> dict:
    return {"role": "user", "content": [{"text": text}]}


def ask(text: str, **extra) -> dict:
    return {"messages": [user(text)], "system": [{"text": "You are helpful."}], **extra}


# ---- the offline model ---------------------------------------------------------------------

def test_offline_answers_are_labelled_deterministic_and_estimated():
    model = OfflineProvider()
    first, second = model.converse(ask("Tell me about tides")), model.converse(ask("Tell me about tides"))
    assert first == second
    assert (model.name, model.model_id, first.provider, first.model_id) == ("offline",) * 4
    assert first.text.startswith(LABEL) and "offline" in first.text
    assert first.stop_reason == "end_turn"
    assert first.usage["estimated"] is True
    assert model.converse(ask("Tell me about waves")).text != first.text


def test_offline_usage_is_characters_over_four_rounded_up():
    model = OfflineProvider()
    request = {"messages": [user("abcde")]}             # 5 characters -> 2 tokens
    result = model.converse(request)
    assert result.usage["inputTokens"] == 2 == estimate_tokens(5)
    assert result.usage["outputTokens"] == -(-len(result.text) // 4)
    assert result.usage["totalTokens"] == result.usage["inputTokens"] + result.usage["outputTokens"]
    with_system = model.converse({**request, "system": [{"text": "xyz"}]})   # 8 characters -> 2
    assert with_system.usage["inputTokens"] == 2
    assert model.converse({**request, "system": [{"text": "xyzw"}]}).usage["inputTokens"] == 3


def test_offline_streams_in_several_chunks_that_assemble_to_the_same_result():
    model = OfflineProvider()
    request = ask("Explain the offline model in a few words, please")
    events = list(model.converse_stream(request))
    kinds = [next(iter(e)) for e in events]
    assert kinds[0] == "messageStart" and kinds[-2:] == ["messageStop", "metadata"]
    deltas = [e["contentBlockDelta"]["delta"]["text"] for e in events if "contentBlockDelta" in e]
    assert len(deltas) >= 3 and deltas[0].startswith(LABEL[:8])
    assert events[-1]["metadata"]["usage"]["estimated"] is True
    assert assemble(events, "offline", "offline") == model.converse(request)


@pytest.mark.parametrize("text, tool, arguments", [
    ("Please create file notes/today.md with \"buy milk\"", "write_file",
     {"path": "notes/today.md", "content": "buy milk"}),
    ("write report.txt", "write_file", {"path": "report.txt", "content": f"{LABEL} write report.txt"}),
    ("list files", "list_files", {"prefix": ".", "limit": 1}),
    ("read config.yaml for me", "read_file", {"path": "config.yaml"}),
])
def test_offline_asks_for_the_tool_the_message_needs_with_valid_arguments(text, tool, arguments):
    result = OfflineProvider().converse(ask(text, toolConfig=TOOLS))
    assert result.stop_reason == "tool_use"
    (use,) = result.tool_uses
    assert (use["name"], use["input"]) == (tool, arguments)
    assert use["toolUseId"].startswith("tooluse_offline_")
    assert result.text.startswith(LABEL)


def test_offline_tool_loop_ends_with_a_summary_after_the_tool_result():
    model = OfflineProvider()
    request = ask("create file a.txt", toolConfig=TOOLS)
    first = model.converse(request)
    use = first.tool_uses[0]
    request["messages"] += [first.message, {"role": "user", "content": [
        {"toolResult": {"toolUseId": use["toolUseId"], "content": [{"json": {"bytes": 12}}], "status": "success"}}]}]
    second = model.converse(request)
    assert second.stop_reason == "end_turn" and not second.tool_uses
    assert second.text.startswith(LABEL) and "write_file returned" in second.text and '"bytes": 12' in second.text
    # streamed, the tool request carries its input JSON in fragments that assemble back
    events = list(model.converse_stream(ask("create file a.txt", toolConfig=TOOLS)))
    fragments = [e for e in events if "toolUse" in e.get("contentBlockDelta", {}).get("delta", {})]
    assert len(fragments) >= 2
    assert assemble(events, "offline", "offline").tool_uses == [use]


def test_offline_without_tools_or_intent_answers_in_text():
    model = OfflineProvider()
    assert model.converse(ask("create file a.txt")).stop_reason == "end_turn"          # no tools offered
    assert model.converse(ask("what is the weather", toolConfig=TOOLS)).stop_reason == "end_turn"
    assert model.converse({"messages": [], "toolConfig": TOOLS}).text.startswith(LABEL)


def test_offline_max_tokens_cuts_the_answer_but_keeps_the_label():
    result = OfflineProvider().converse(ask("a long question " * 20, inferenceConfig={"maxTokens": 5}))
    assert result.stop_reason == "max_tokens"
    assert result.text.startswith(LABEL) and len(result.text) == 20
    assert OfflineProvider().converse(ask("x", inferenceConfig={"maxTokens": 1})).text == LABEL


# ---- stream assembly -----------------------------------------------------------------------

def test_assembler_rebuilds_text_and_tool_blocks_as_bedrock_streams_them():
    # Bedrock sends no contentBlockStart for a text block, only for a toolUse block.
    events = [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Let me "}}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "look."}}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"contentBlockStart": {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "t1", "name": "read_file"}}}},
        {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"pa'}}}},
        {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"toolUse": {"input": 'th":"a.txt"}'}}}},
        {"contentBlockStop": {"contentBlockIndex": 1}},
        {"messageStop": {"stopReason": "tool_use"}},
        {"metadata": {"usage": {"inputTokens": 7, "outputTokens": 3, "cacheReadInputTokens": 2}, "metrics": {}}},
    ]
    assembler = StreamAssembler("m", "bedrock")
    for event in events:
        assembler.add(event)
    result = assembler.result()
    assert result.message == {"role": "assistant", "content": [
        {"text": "Let me look."}, {"toolUse": {"toolUseId": "t1", "name": "read_file", "input": {"path": "a.txt"}}}]}
    assert result.stop_reason == "tool_use"
    assert result.usage == {"inputTokens": 7, "outputTokens": 3, "cacheReadInputTokens": 2, "totalTokens": 12,
                            "estimated": False}
    with pytest.raises(ValueError):
        assemble(events[:5], "m", "bedrock")   # no messageStop: an interrupted stream is not a result


def test_chunks_cut_at_spaces_and_join_back():
    text = "one two three four five six seven"
    pieces = chunks(text, 8)
    assert "".join(pieces) == text and all(len(p) <= 8 for p in pieces) and len(pieces) >= 4
    assert chunks("x" * 20, 8) == ["x" * 8, "x" * 8, "x" * 4]
    assert chunks("", 8) == []


# ---- the scripted provider -----------------------------------------------------------------

def test_scripted_provider_returns_its_answers_in_order_and_records_requests():
    script = ScriptedProvider([tool_answer("list_files", {"prefix": "."}), text_answer("There are 2 files.")],
                              model_id="anthropic.claude-haiku-4-5-20251001-v1:0")
    request = ask("list files", toolConfig=TOOLS)
    first = script.converse(request)
    assert first.stop_reason == "tool_use" and first.tool_uses[0]["name"] == "list_files"
    request["messages"].append(first.message)       # the recorded request is a copy
    events = list(script.converse_stream(request))
    assert assemble(events, script.model_id, "scripted").text == "There are 2 files."
    assert len(script.requests) == 2 and len(script.requests[0]["messages"]) == 1
    assert script.remaining == 0
    with pytest.raises(ScriptExhausted):
        script.converse(request)


def test_scripted_provider_raises_the_given_error_at_its_step():
    script = ScriptedProvider([text_answer("first"), ModelThrottled(), text_answer("third")])
    assert script.converse(ask("a")).text == "first"
    with pytest.raises(ModelThrottled):
        script.converse(ask("b"))
    assert script.converse(ask("c")).text == "third"
    assert len(script.requests) == 3


# ---- the registry and the guard ------------------------------------------------------------

def settings_with(**values) -> SimpleNamespace:
    base = {"model_provider": "offline", "model_id": "us.anthropic.claude-haiku-4-5-20251001-v1:0",
            "model_allowed_ids": "us.anthropic.claude-sonnet-4-5-20250929-v1:0"}
    return SimpleNamespace(**{**base, **values})


def test_the_test_run_forbids_the_real_model_and_uses_the_offline_one():
    import os

    from svc_core.adapters.models import registry
    from svc_core.adapters.models.bedrock import BedrockProvider, RealModelForbidden
    from svc_core.platform.config import settings
    assert os.environ["SVC_FORBID_REAL_MODEL"] == "1" and os.environ["MODEL_PROVIDER"] == "offline"
    assert registry.provider_for(settings()).name == "offline"
    with pytest.raises(RealModelForbidden):
        registry.provider_for(settings_with(model_provider="bedrock"))
    with pytest.raises(RealModelForbidden):
        BedrockProvider("us.anthropic.claude-haiku-4-5-20251001-v1:0")   # without a stubbed client


def test_registry_chooses_the_provider_from_configuration(monkeypatch):
    from svc_core.adapters.models import registry
    assert isinstance(registry.provider_for(settings_with()), OfflineProvider)
    monkeypatch.delenv("SVC_FORBID_REAL_MODEL")
    made = []
    from svc_core.adapters.models import bedrock
    monkeypatch.setattr(bedrock, "BedrockProvider", lambda model_id, **options: made.append(model_id) or "bedrock!")
    registry.forget_providers()
    assert registry.provider_for(settings_with(model_provider="bedrock")) == "bedrock!"
    assert registry.provider_for(settings_with(model_provider="bedrock"),
                                 "us.anthropic.claude-sonnet-4-5-20250929-v1:0") == "bedrock!"
    assert made == ["us.anthropic.claude-haiku-4-5-20251001-v1:0", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"]
    registry.forget_providers()
    for wrong in ("scripted", "gpt", ""):     # scripted only through the test hook
        with pytest.raises(registry.ModelConfigurationError):
            registry.provider_for(settings_with(model_provider=wrong))


def test_a_tenants_model_must_be_in_the_allowed_list():
    from svc_core.adapters.models import registry
    settings = settings_with()
    assert registry.allowed_models(settings) == ["us.anthropic.claude-haiku-4-5-20251001-v1:0",
                                                 "us.anthropic.claude-sonnet-4-5-20250929-v1:0"]
    assert registry.choose_model(settings) == settings.model_id
    assert registry.choose_model(settings, "us.anthropic.claude-sonnet-4-5-20250929-v1:0").endswith("sonnet-4-5-20250929-v1:0")
    with pytest.raises(ValidationFailed) as refused:
        registry.provider_for(settings, "anthropic.claude-3-opus-20240229-v1:0")   # checked even offline
    assert refused.value.details["fields"][0]["field"] == "model"
    assert "AWS" not in refused.value.message
    assert registry.allowed_models(settings_with(model_allowed_ids=" ,")) == [settings.model_id]


def test_the_scripted_hook_overrides_the_configured_provider_inside_its_block():
    from svc_core.adapters.models import registry
    script = ScriptedProvider([text_answer("hi")])
    with registry.scripted(script):
        assert registry.provider_for(settings_with()) is script
        with pytest.raises(ValidationFailed):    # the tenant's choice is still checked
            registry.provider_for(settings_with(), "not-allowed")
    assert isinstance(registry.provider_for(settings_with()), OfflineProvider)


def test_settings_default_to_the_offline_model():
    from svc_core.platform.config import Settings
    assert Settings.model_provider == "offline"


# ---- prices --------------------------------------------------------------------------------

def test_cost_is_integer_micro_credits_rounded_up_once_per_call():
    from svc_core.domain import metering
    haiku = "anthropic.claude-haiku-4-5-20251001-v1:0"          # 1000 / 5000 / 100 / 1250 per 1,000
    assert metering.cost({"inputTokens": 1000, "outputTokens": 1000}, haiku) == 6000
    assert metering.cost({"inputTokens": 1, "outputTokens": 0}, haiku) == 1       # exactly 1
    assert metering.cost({"inputTokens": 0, "outputTokens": 0}, haiku) == 0
    assert metering.cost({"cacheReadInputTokens": 1}, haiku) == 1                 # 0.1 -> 1
    assert metering.cost({"cacheReadInputTokens": 10}, haiku) == 1                # exactly 1
    assert metering.cost({"cacheReadInputTokens": 11}, haiku) == 2                # 1.1 -> 2
    # summed before rounding: 3 x 0.1 + 1 x 1.25 = 1.55 -> 2 (rounding each part would give 3)
    assert metering.cost({"cacheReadInputTokens": 3, "cacheWriteInputTokens": 1}, haiku) == 2
    usage = {"inputTokens": 1234, "outputTokens": 567, "cacheReadInputTokens": 89, "cacheWriteInputTokens": 10}
    exact = (1234 * 1000 + 567 * 5000 + 89 * 100 + 10 * 1250) / 1000
    assert metering.cost(usage, haiku) == 4091 and 0 <= 4091 - exact < 1      # 4090.4 -> 4091
    assert isinstance(metering.cost(usage, haiku), int)
    with pytest.raises(ValueError):
        metering.cost({"inputTokens": -1}, haiku)


def test_prices_follow_the_model_and_the_version():
    from svc_core.domain import metering
    usage = {"inputTokens": 1000, "outputTokens": 1000}
    assert metering.cost(usage, "us.anthropic.claude-haiku-4-5-20251001-v1:0") == 6000    # a profile: its model
    assert metering.cost(usage, "global.anthropic.claude-haiku-4-5-20251001-v1:0") == 6000
    assert metering.cost(usage, "anthropic.claude-sonnet-4-5-20250929-v1:0") == 18000
    assert metering.cost(usage, "offline") == 480                        # nominal, not zero
    with pytest.raises(metering.UnpricedModel):
        metering.cost(usage, "anthropic.claude-unknown-v1:0")
    with pytest.raises(metering.UnpricedModel):
        metering.cost(usage, "offline", version="1999-01-01")
    # a later version prices anew; records priced with the older one keep their price
    later = {**metering.PRICES, "2027-01-01": {"offline": metering.Price(1, 1, 1, 1)}}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(metering, "PRICES", later)
        assert metering.cost(usage, "offline", version="2027-01-01") == 2
        assert metering.cost(usage, "offline", version="2026-11-01") == 480


def test_every_model_a_deployment_can_use_has_a_price():
    from devstack.template import Resolver
    from svc_core.domain import metering
    from svc_core.platform.config import Settings
    resolver = Resolver({})
    models = {resolver.parameters["ModelId"], Settings.model_id, "offline",
              *resolver.parameters["ModelAllowedIds"].split(",")}
    for model in models:
        metering.price_of(model)
    assert metering.CURRENT in metering.PRICES


def test_a_usage_record_holds_the_call_and_its_price():
    from svc_core.domain import metering
    from svc_core.platform import ids
    run_id = ids.new_id("run")
    result = OfflineProvider().converse(ask("hello"))
    record = metering.usage_record("ten_1", "run", run_id, result.model_id, result.usage, now=1_790_000_000)
    assert record["sk"].startswith("2026-09-21T") and record["sk"].split("#")[0] == record["created_at"]
    assert {k: record[k] for k in ("tenantId", "source", "sourceId", "model", "estimated", "priceVersion")} == \
        {"tenantId": "ten_1", "source": "run", "sourceId": run_id, "model": "offline", "estimated": True,
         "priceVersion": metering.CURRENT}
    assert record["inputTokens"] == result.usage["inputTokens"] and record["cacheWriteTokens"] == 0
    assert record["microCredits"] == metering.cost(result.usage, "offline") > 0
    with pytest.raises(ValueError):
        metering.usage_record("ten_1", "message", run_id, "offline", result.usage)   # a message needs msg_
    with pytest.raises(ValueError):
        metering.usage_record("ten_1", "agent", run_id, "offline", result.usage)


def test_stream_events_of_a_result_keep_usage_json_serialisable():
    result = OfflineProvider().converse(ask("hi"))
    for event in events_of(result):
        json.dumps(event)
