"""The Anthropic provider against a real HTTP server on loopback answering in the Messages API's
recorded shapes: requests translated from Converse, answers and streams translated back (a stream
assembles to the same result as the answer), usage as the server reported it, and each failure
mapped within one time budget."""

from __future__ import annotations

import pytest

from svc_core.adapters.models.anthropic import API_VERSION, DEFAULT_MAX_TOKENS, AnthropicProvider
from svc_core.adapters.models.base import assemble
from svc_core.platform.errors import ModelThrottled, ModelUnavailable
from tests.support import model_api_payloads as recorded
from tests.support.model_api_server import Reply, json_reply, serving, sse_reply
from tests.support.webhook_receiver import closed_port

KEY = "sk-ant-api03-test-9d2b7c1e"
READ_FILE = {"toolSpec": {"name": "read_file", "description": "Read a file", "inputSchema": {
    "json": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}}


def ask(text: str = "When is low water in Brest?", **extra) -> dict:
    return {"system": [{"text": "You answer about tides."}], "messages": [{"role": "user", "content": [{"text": text}]}],
            **extra}


def provider(server, budget_seconds: float = 5.0) -> AnthropicProvider:
    return AnthropicProvider(recorded.ANTHROPIC_MODEL, KEY, server.url, budget_seconds=budget_seconds)


def test_a_plain_answer_is_translated_both_ways_with_the_usage_the_server_reported():
    with serving([json_reply(recorded.ANTHROPIC_TEXT_ANSWER)]) as server:
        result = provider(server).converse(ask(inferenceConfig={"temperature": 0.2, "stopSequences": ["END"]}))
    sent = server.received[0]
    assert sent.path == "/v1/messages"
    assert (sent.headers["x-api-key"], sent.headers["anthropic-version"]) == (KEY, API_VERSION)
    assert "authorization" not in sent.headers
    assert sent.body == {"model": recorded.ANTHROPIC_MODEL, "max_tokens": DEFAULT_MAX_TOKENS,
                         "system": "You answer about tides.",
                         "messages": [{"role": "user", "content": [{"type": "text",
                                                                    "text": "When is low water in Brest?"}]}],
                         "temperature": 0.2, "stop_sequences": ["END"]}
    assert result.message == {"role": "assistant", "content": [{"text": recorded.ANTHROPIC_TEXT}]}
    assert result.stop_reason == "end_turn"
    assert result.usage == {"inputTokens": 472, "outputTokens": 89, "cacheReadInputTokens": 2048,
                            "totalTokens": 472 + 89 + 2048, "estimated": False}
    assert (result.provider, result.model_id) == ("anthropic", recorded.ANTHROPIC_MODEL)


def test_a_tool_call_and_its_result_go_back_as_tool_use_and_tool_result_blocks():
    with serving([json_reply(recorded.ANTHROPIC_TOOL_ANSWER), json_reply(recorded.ANTHROPIC_TEXT_ANSWER)]) as server:
        model = provider(server)
        request = ask(toolConfig={"tools": [READ_FILE], "toolChoice": {"tool": {"name": "read_file"}}},
                      inferenceConfig={"maxTokens": 700})
        first = model.converse(request)
        assert first.stop_reason == "tool_use"
        assert first.message["content"] == [
            {"text": recorded.ANTHROPIC_TOOL_PREAMBLE},
            {"toolUse": {"toolUseId": "toolu_01A09q90qw90lq917835lq9", "name": "read_file",
                         "input": {"path": "notes/tides.txt"}}}]
        request["messages"] += [first.message, {"role": "user", "content": [
            {"toolResult": {"toolUseId": "toolu_01A09q90qw90lq917835lq9", "content": [{"json": {"error": "no such file"}}],
                            "status": "error"}}]}]
        second = model.converse(request)
    first_sent, second_sent = server.received[0].body, server.received[1].body
    assert first_sent["tools"] == [{"name": "read_file", "description": "Read a file",
                                    "input_schema": READ_FILE["toolSpec"]["inputSchema"]["json"]}]
    assert first_sent["tool_choice"] == {"type": "tool", "name": "read_file"}
    assert first_sent["max_tokens"] == 700
    assert second_sent["messages"][1:] == [
        {"role": "assistant", "content": [
            {"type": "text", "text": recorded.ANTHROPIC_TOOL_PREAMBLE},
            {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "read_file",
             "input": {"path": "notes/tides.txt"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
                                      "content": [{"type": "text", "text": '{"error":"no such file"}'}],
                                      "is_error": True}]}]
    assert second.text == recorded.ANTHROPIC_TEXT


@pytest.mark.parametrize("answer, stream", [
    (recorded.ANTHROPIC_TEXT_ANSWER, recorded.ANTHROPIC_TEXT_STREAM),
    (recorded.ANTHROPIC_TOOL_ANSWER, recorded.ANTHROPIC_TOOL_STREAM),
], ids=["text", "text-and-tool-call"])
def test_a_stream_assembles_to_the_same_result_as_the_answer(answer, stream):
    request = ask(toolConfig={"tools": [READ_FILE]})
    with serving([json_reply(answer), sse_reply(stream)]) as server:
        model = provider(server)
        whole = model.converse(request)
        events = list(model.converse_stream(request))
    assert server.received[1].body["stream"] is True
    streamed = assemble(events, model.model_id, model.name)
    assert (streamed.message, streamed.stop_reason, streamed.usage) == (whole.message, whole.stop_reason, whole.usage)
    kinds = [next(iter(event)) for event in events]
    assert kinds[0] == "messageStart" and kinds[-2:] == ["messageStop", "metadata"]
    assert kinds.count("contentBlockDelta") > len(whole.message["content"])
    starts = [e["contentBlockStart"]["start"]["toolUse"] for e in events if "contentBlockStart" in e]
    assert starts == [{"toolUseId": t["toolUseId"], "name": t["name"]} for t in whole.tool_uses]


def test_tool_input_that_is_not_json_in_a_stream_reaches_the_tool_as_raw_text():
    broken = '{"path": "notes/tides.txt'
    stream = [event for event in recorded.ANTHROPIC_TOOL_STREAM if "input_json_delta" not in event]
    at = next(i for i, e in enumerate(stream) if '"content_block_stop","index":1' in e)
    stream.insert(at, 'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":'
                      '{"type":"input_json_delta","partial_json":"{\\"path\\": \\"notes/tides.txt"}}\n\n')
    with serving([sse_reply(stream)]) as server:
        model = provider(server)
        result = assemble(model.converse_stream(ask(toolConfig={"tools": [READ_FILE]})), model.model_id, model.name)
    assert result.tool_uses == [{"toolUseId": "toolu_01A09q90qw90lq917835lq9", "name": "read_file",
                                 "input": {"_raw": broken}}]


# ---- failures -------------------------------------------------------------------------------

@pytest.mark.parametrize("status, body, reason", [
    (401, recorded.ANTHROPIC_401, "credentials"),
    (404, recorded.ANTHROPIC_404, "not_found"),
    (403, {"type": "error", "error": {"type": "permission_error", "message": "Your API key does not have permission "
                                                                             "to use the specified resource."}},
     "not_enabled"),
], ids=["401", "404", "403"])
def test_a_refusal_is_its_own_reason_without_a_retry_and_without_the_providers_text(status, body, reason, capfd):
    with serving([json_reply(body, status)]) as server:
        with pytest.raises(ModelUnavailable) as failed:
            provider(server).converse(ask())
    assert failed.value.details == {"model": recorded.ANTHROPIC_MODEL, "reason": reason}
    assert len(server.received) == 1
    logged = capfd.readouterr()
    assert body["error"]["message"] not in failed.value.message + logged.out + logged.err
    assert KEY not in logged.out + logged.err


def test_a_429_whose_wait_does_not_fit_is_throttled_with_the_providers_retry_after():
    with serving([json_reply(recorded.ANTHROPIC_429, 429, {"retry-after": "12"})]) as server:
        with pytest.raises(ModelThrottled) as throttled:
            provider(server, budget_seconds=1).converse(ask())
    assert throttled.value.details["retryAfterSeconds"] == 12
    assert len(server.received) == 1


def test_a_429_whose_wait_fits_is_retried_after_it():
    with serving([json_reply(recorded.ANTHROPIC_429, 429, {"retry-after": "0"}),
                  json_reply(recorded.ANTHROPIC_TEXT_ANSWER)]) as server:
        assert provider(server).converse(ask()).text == recorded.ANTHROPIC_TEXT
    assert len(server.received) == 2


def test_an_overloaded_api_is_retried_then_throttled():
    with serving([json_reply(recorded.ANTHROPIC_529, 529)] * 3) as server:
        with pytest.raises(ModelThrottled):
            provider(server).converse(ask())
    assert len(server.received) == 3


def test_an_error_event_in_a_stream_raises_as_its_status_would():
    with serving([sse_reply(recorded.ANTHROPIC_OVERLOADED_STREAM)]) as server:
        events = provider(server).converse_stream(ask())
        received = []
        with pytest.raises(ModelThrottled):
            for event in events:
                received.append(event)
    assert received[-1] == {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Low water"}}}


def test_a_closed_port_is_unreachable():
    model = AnthropicProvider(recorded.ANTHROPIC_MODEL, KEY, f"http://127.0.0.1:{closed_port()}", budget_seconds=5)
    with pytest.raises(ModelUnavailable) as failed:
        model.converse(ask())
    assert failed.value.details["reason"] == "unreachable"


def test_a_hanging_server_is_given_up_within_the_budget():
    with serving([Reply(hang_before=20, body=recorded.ANTHROPIC_TEXT_ANSWER)]) as server:
        with pytest.raises(ModelUnavailable) as failed:
            provider(server, budget_seconds=1).converse(ask())
        assert not server.hang_over.is_set()   # the server was still hanging when the call ended
    assert failed.value.details["reason"] == "timeout"


def test_a_stream_that_goes_silent_is_given_up_within_the_budget():
    with serving([sse_reply(recorded.ANTHROPIC_TEXT_STREAM, hang_after_events=4)]) as server:
        events = provider(server, budget_seconds=1).converse_stream(ask())
        with pytest.raises(ModelUnavailable) as failed:
            list(events)
        assert not server.hang_over.is_set()
    assert failed.value.details["reason"] == "timeout"


def test_a_stream_cut_before_its_end_is_a_damaged_answer():
    with serving([sse_reply(recorded.ANTHROPIC_TEXT_STREAM[:5])]) as server:
        with pytest.raises(ModelUnavailable) as failed:
            list(provider(server).converse_stream(ask()))
    assert failed.value.details["reason"] == "bad_stream"


def test_what_a_stream_had_received_before_it_failed_is_billed_as_a_failed_call():
    """An overloaded_error after some text: the input message_start reported, the output it reported
    plus an estimate of the text after it; cut after message_delta: the counts as reported."""
    from svc_core.adapters.models.base import billable, estimated_usage
    with serving([sse_reply(recorded.ANTHROPIC_OVERLOADED_STREAM),
                  sse_reply(recorded.ANTHROPIC_TEXT_STREAM[:-1] + ["data: {broken\n\n"])]) as server:
        with pytest.raises(ModelThrottled) as overloaded:
            list(provider(server).converse_stream(ask()))
        with pytest.raises(ModelUnavailable) as broken:
            list(provider(server).converse_stream(ask()))
    early = billable(overloaded.value)
    assert early.failed and early.usage["estimated"]
    assert early.usage["inputTokens"] == 472 and early.usage["cacheReadInputTokens"] == 2048
    assert early.usage["outputTokens"] == 1 + estimated_usage(ask(), "Low water")["outputTokens"]
    late = billable(broken.value).usage
    assert (late["inputTokens"], late["outputTokens"], late["estimated"]) == (472, 89, False)
