"""The OpenAI-compatible provider against a real HTTP server on loopback answering in Chat
Completions' recorded shapes: requests translated from Converse, answers and streams translated
back (a stream assembles to the same result as the answer), usage as the server reported it, and
each failure mapped within one time budget."""

from __future__ import annotations

import pytest

from svc_core.adapters.models.base import assemble, billable, estimated_usage
from svc_core.adapters.models.openai import OpenAIProvider
from svc_core.platform.errors import ModelThrottled, ModelUnavailable
from tests.support import model_api_payloads as recorded
from tests.support.model_api_server import Reply, json_reply, serving, sse_reply
from tests.support.webhook_receiver import closed_port

KEY = "sk-proj-test-4f1c2a9e7b3d"
READ_FILE = {"toolSpec": {"name": "read_file", "description": "Read a file", "inputSchema": {
    "json": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}}
LIST_FILES = {"toolSpec": {"name": "list_files", "description": "List files", "inputSchema": {
    "json": {"type": "object", "properties": {"prefix": {"type": "string"}, "limit": {"type": "integer"}}}}}}
WRITE_FILE = {"toolSpec": {"name": "write_file", "description": "Write a file", "inputSchema": {
    "json": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
             "required": ["path", "content"]}}}}


def ask(text: str = "When is low water in Brest?", **extra) -> dict:
    return {"system": [{"text": "You answer about tides."}], "messages": [{"role": "user", "content": [{"text": text}]}],
            **extra}


def provider(server, budget_seconds: float = 5.0, **options) -> OpenAIProvider:
    return OpenAIProvider("gpt-4o-2024-08-06", server.url + "/v1", KEY, budget_seconds=budget_seconds, **options)


def test_a_plain_answer_is_translated_both_ways_with_the_usage_the_server_reported():
    with serving([json_reply(recorded.OPENAI_TEXT_ANSWER)]) as server:
        result = provider(server).converse(ask(inferenceConfig={"maxTokens": 300, "temperature": 0.2, "topP": 0.9,
                                                                "stopSequences": ["\n\n"]}))
    sent = server.received[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.body == {"model": "gpt-4o-2024-08-06", "messages": [
        {"role": "system", "content": "You answer about tides."},
        {"role": "user", "content": "When is low water in Brest?"}],
        "max_tokens": 300, "temperature": 0.2, "top_p": 0.9, "stop": ["\n\n"]}
    assert result.message == {"role": "assistant", "content": [{"text": recorded.OPENAI_TEXT}]}
    assert result.stop_reason == "end_turn"
    # prompt_tokens 1117 of which 1024 cached: Converse counts the cached ones apart
    assert result.usage == {"inputTokens": 93, "cacheReadInputTokens": 1024, "outputTokens": 46,
                            "totalTokens": 1163, "estimated": False}
    assert (result.provider, result.model_id) == ("openai", "gpt-4o-2024-08-06")


def test_tool_calls_and_their_results_go_back_as_tool_calls_and_tool_messages():
    tools = {"tools": [READ_FILE, LIST_FILES], "toolChoice": {"any": {}}}
    with serving([json_reply(recorded.OPENAI_TOOL_ANSWER), json_reply(recorded.OPENAI_TEXT_ANSWER)]) as server:
        model = provider(server)
        request = ask(toolConfig=tools)
        first = model.converse(request)
        assert first.stop_reason == "tool_use"
        assert first.tool_uses == [
            {"toolUseId": "call_DdmO9pD3xa9XTPNJ32zg2hcA", "name": "read_file", "input": {"path": "notes/tides.txt"}},
            {"toolUseId": "call_ABwkV2mTRHnTqZxTFIG1pNGw", "name": "list_files",
             "input": {"prefix": "notes/", "limit": 20}}]
        request["messages"] += [first.message, {"role": "user", "content": [
            {"toolResult": {"toolUseId": "call_DdmO9pD3xa9XTPNJ32zg2hcA", "content": [{"text": "LW 20:17"}],
                            "status": "success"}},
            {"toolResult": {"toolUseId": "call_ABwkV2mTRHnTqZxTFIG1pNGw", "content": [{"json": {"denied": True}}],
                            "status": "error"}}]}]
        second = model.converse(request)
    assert server.received[0].body["tools"] == [
        {"type": "function", "function": {"name": "read_file", "description": "Read a file",
                                          "parameters": READ_FILE["toolSpec"]["inputSchema"]["json"]}},
        {"type": "function", "function": {"name": "list_files", "description": "List files",
                                          "parameters": LIST_FILES["toolSpec"]["inputSchema"]["json"]}}]
    assert server.received[0].body["tool_choice"] == "required"
    assert server.received[1].body["messages"][2:] == [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_DdmO9pD3xa9XTPNJ32zg2hcA", "type": "function",
             "function": {"name": "read_file", "arguments": '{"path":"notes/tides.txt"}'}},
            {"id": "call_ABwkV2mTRHnTqZxTFIG1pNGw", "type": "function",
             "function": {"name": "list_files", "arguments": '{"prefix":"notes/","limit":20}'}}]},
        {"role": "tool", "tool_call_id": "call_DdmO9pD3xa9XTPNJ32zg2hcA", "content": "LW 20:17"},
        {"role": "tool", "tool_call_id": "call_ABwkV2mTRHnTqZxTFIG1pNGw", "content": 'Error: {"denied":true}'}]
    assert second.text == recorded.OPENAI_TEXT


def test_arguments_that_are_not_json_reach_the_tool_as_raw_text_and_go_back_unchanged():
    with serving([json_reply(recorded.OPENAI_BROKEN_TOOL_ANSWER), json_reply(recorded.OPENAI_TEXT_ANSWER)]) as server:
        model = provider(server)
        request = ask("Save the low water time", toolConfig={"tools": [WRITE_FILE]})
        result = model.converse(request)
        assert result.stop_reason == "tool_use"
        assert result.tool_uses == [{"toolUseId": "call_k3Q8sV0eYwZ1uM4bTnR7pA2c", "name": "write_file",
                                     "input": {"_raw": recorded.OPENAI_BROKEN_ARGUMENTS}}]
        request["messages"] += [result.message, {"role": "user", "content": [{"toolResult": {
            "toolUseId": "call_k3Q8sV0eYwZ1uM4bTnR7pA2c", "content": [{"text": "Invalid input: content is required."}],
            "status": "error"}}]}]
        model.converse(request)
    call = server.received[1].body["messages"][2]["tool_calls"][0]
    assert call["function"]["arguments"] == recorded.OPENAI_BROKEN_ARGUMENTS


@pytest.mark.parametrize("answer, stream", [
    (recorded.OPENAI_TEXT_ANSWER, recorded.OPENAI_TEXT_STREAM),
    (recorded.OPENAI_TOOL_ANSWER, recorded.OPENAI_TOOL_STREAM),
    (recorded.OPENAI_BROKEN_TOOL_ANSWER, recorded.OPENAI_BROKEN_TOOL_STREAM),
], ids=["text", "two-tool-calls", "tool-call-not-json"])
def test_a_stream_assembles_to_the_same_result_as_the_answer(answer, stream):
    request = ask(toolConfig={"tools": [READ_FILE, LIST_FILES, WRITE_FILE]})
    with serving([json_reply(answer), sse_reply(stream)]) as server:
        model = provider(server)
        whole = model.converse(request)
        events = list(model.converse_stream(request))
    assert server.received[1].body["stream"] is True
    assert server.received[1].body["stream_options"] == {"include_usage": True}
    assert server.received[1].headers["accept"] == "text/event-stream"
    streamed = assemble(events, model.model_id, model.name)
    assert (streamed.message, streamed.stop_reason, streamed.usage) == (whole.message, whole.stop_reason, whole.usage)
    assert not streamed.usage["estimated"]
    # Converse's order: each block started (a tool's id and name), filled in pieces, stopped before the next
    kinds = [next(iter(event)) for event in events]
    assert kinds[0] == "messageStart" and kinds[-2:] == ["messageStop", "metadata"]
    starts = [e["contentBlockStart"]["start"]["toolUse"] for e in events if "contentBlockStart" in e]
    assert starts == [{"toolUseId": t["toolUseId"], "name": t["name"]} for t in whole.tool_uses]
    assert kinds.count("contentBlockDelta") > len(whole.message["content"])   # in fragments, not whole
    stopped = [e["contentBlockStop"]["contentBlockIndex"] for e in events if "contentBlockStop" in e]
    assert stopped == list(range(len(whole.message["content"])))


def test_a_tool_call_sent_whole_in_one_fragment_and_finished_as_stop_is_a_tool_use():
    """As Ollama has streamed them: the whole call in one fragment, and finish_reason "stop"."""
    whole_call = recorded.OPENAI_TOOL_STREAM[0:1] + [
        event.replace('"arguments":""', '"arguments":"{\\"path\\":\\"notes/tides.txt\\"}"')
        for event in recorded.OPENAI_TOOL_STREAM if '"id":"call_DdmO9pD3xa9XTPNJ32zg2hcA"' in event] + [
        event.replace('"finish_reason":"tool_calls"', '"finish_reason":"stop"')
        for event in recorded.OPENAI_TOOL_STREAM[-3:]]
    with serving([sse_reply(whole_call)]) as server:
        model = provider(server)
        result = assemble(model.converse_stream(ask(toolConfig={"tools": [READ_FILE]})), model.model_id, model.name)
    assert result.stop_reason == "tool_use"
    assert result.tool_uses == [{"toolUseId": "call_DdmO9pD3xa9XTPNJ32zg2hcA", "name": "read_file",
                                 "input": {"path": "notes/tides.txt"}}]


def test_a_stream_without_usage_is_billed_an_estimate():
    without_usage = [event for event in recorded.OPENAI_TEXT_STREAM if '"choices":[]' not in event]
    with serving([sse_reply(without_usage)]) as server:
        model = provider(server)
        result = assemble(model.converse_stream(ask()), model.model_id, model.name)
    assert result.text == recorded.OPENAI_TEXT
    assert result.usage["estimated"] is True
    assert result.usage["outputTokens"] == -(-len(recorded.OPENAI_TEXT) // 4)


def test_a_server_that_reports_no_usage_is_billed_an_estimate():
    answer = {k: v for k, v in recorded.OPENAI_TEXT_ANSWER.items() if k != "usage"}
    with serving([json_reply(answer)]) as server:
        result = provider(server).converse(ask())
    assert result.usage["estimated"] is True
    assert result.usage["inputTokens"] > 0 and result.usage["outputTokens"] == -(-len(recorded.OPENAI_TEXT) // 4)


def test_azure_style_key_header_and_completion_tokens_field():
    with serving([json_reply(recorded.OPENAI_TEXT_ANSWER)]) as server:
        provider(server, api_key_header="api-key", max_tokens_field="max_completion_tokens").converse(
            ask(inferenceConfig={"maxTokens": 50}))
    sent = server.received[0]
    assert sent.headers["api-key"] == KEY and "authorization" not in sent.headers
    assert sent.body["max_completion_tokens"] == 50 and "max_tokens" not in sent.body


def test_no_key_sends_no_credentials():
    with serving([json_reply(recorded.OPENAI_TEXT_ANSWER)]) as server:
        OpenAIProvider("llama3.1", server.url + "/v1").converse(ask())
    assert "authorization" not in server.received[0].headers


# ---- failures -------------------------------------------------------------------------------

@pytest.mark.parametrize("status, body, reason", [
    (401, recorded.OPENAI_401, "credentials"),
    (404, recorded.OPENAI_404, "not_found"),
    (429, recorded.OPENAI_QUOTA, "not_enabled"),      # no credit left: waiting does not help
    (400, {"error": {"message": "context_length_exceeded", "type": "invalid_request_error", "param": "messages",
                     "code": "context_length_exceeded"}}, "invalid_request"),
], ids=["401", "404", "insufficient-quota", "400"])
def test_a_refusal_is_its_own_reason_without_a_retry_and_without_the_providers_text(status, body, reason, capfd):
    with serving([json_reply(body, status)]) as server:
        with pytest.raises(ModelUnavailable) as failed:
            provider(server).converse(ask())
    assert failed.value.details == {"model": "gpt-4o-2024-08-06", "reason": reason}
    assert len(server.received) == 1
    logged = capfd.readouterr()
    assert body["error"]["message"] not in failed.value.message + logged.out + logged.err
    assert KEY not in logged.out + logged.err


def test_a_429_whose_wait_fits_the_budget_is_retried_after_it():
    with serving([json_reply(recorded.OPENAI_429, 429, {"retry-after-ms": "40", "retry-after": "1"}),
                  json_reply(recorded.OPENAI_TEXT_ANSWER)]) as server:
        result = provider(server).converse(ask())
    assert result.text == recorded.OPENAI_TEXT and len(server.received) == 2


def test_a_429_whose_wait_does_not_fit_is_throttled_with_the_providers_retry_after():
    with serving([json_reply(recorded.OPENAI_429, 429, {"retry-after": "7"})]) as server:
        with pytest.raises(ModelThrottled) as throttled:
            provider(server, budget_seconds=1).converse(ask())
    assert throttled.value.details["retryAfterSeconds"] == 7
    assert throttled.value.headers["Retry-After"] == "7"
    assert len(server.received) == 1


def test_a_failing_server_is_retried_then_reported_as_a_service_error():
    with serving([json_reply(recorded.OPENAI_500, 500)] * 3) as server:
        with pytest.raises(ModelUnavailable) as failed:
            provider(server).converse(ask())
    assert failed.value.details["reason"] == "service_error"
    assert len(server.received) == 3


def test_a_closed_port_is_unreachable():
    model = OpenAIProvider("llama3.1", f"http://127.0.0.1:{closed_port()}/v1", budget_seconds=5)
    with pytest.raises(ModelUnavailable) as failed:
        model.converse(ask())
    assert failed.value.details["reason"] == "unreachable"


@pytest.mark.parametrize("reply", [
    Reply(hang_before=20, body=recorded.OPENAI_TEXT_ANSWER),
    Reply(hang_after_bytes=40, body=recorded.OPENAI_TEXT_ANSWER),
    Reply(trickle_seconds=0.2, body=recorded.OPENAI_TEXT_ANSWER),   # never silent for long: only a deadline stops it
], ids=["silent", "silent-mid-body", "trickling"])
def test_a_hanging_server_is_given_up_within_the_budget(reply):
    with serving([reply]) as server:
        with pytest.raises(ModelUnavailable) as failed:
            provider(server, budget_seconds=1).converse(ask())
        assert not server.hang_over.is_set()   # the server was still at it when the call ended
    assert failed.value.details["reason"] == "timeout"


def test_a_stream_that_goes_silent_is_given_up_within_the_budget():
    with serving([sse_reply(recorded.OPENAI_TEXT_STREAM, hang_after_events=3)]) as server:
        events = provider(server, budget_seconds=1).converse_stream(ask())
        received = []
        with pytest.raises(ModelUnavailable) as failed:
            for event in events:
                received.append(event)
        assert not server.hang_over.is_set()
    assert failed.value.details["reason"] == "timeout"
    assert any("contentBlockDelta" in event for event in received)   # what came before the silence was passed on


def test_a_stream_cut_before_its_end_is_a_damaged_answer():
    with serving([sse_reply(recorded.OPENAI_TEXT_STREAM[:4])]) as server:
        with pytest.raises(ModelUnavailable) as failed:
            list(provider(server).converse_stream(ask()))
    assert failed.value.details["reason"] == "bad_stream"


def test_a_refusal_before_a_stream_raises_when_the_stream_is_asked_for():
    with serving([json_reply(recorded.OPENAI_401, 401)]) as server:
        with pytest.raises(ModelUnavailable) as failed:
            provider(server).converse_stream(ask())
    assert failed.value.details["reason"] == "credentials"


def test_what_a_broken_stream_had_received_is_billed_as_a_failed_call():
    """Cut before its usage: the text streamed is billed as an estimate (with the request's), marked
    failed; cut after it (before [DONE]) or followed by a chunk of another shape: the server's counts."""
    pieces = recorded.OPENAI_TEXT_STREAM
    with serving([sse_reply(pieces[:4]), sse_reply([*pieces[:-1], "data: {not json\n\n"])]) as server:
        with pytest.raises(ModelUnavailable) as early:
            list(provider(server).converse_stream(ask()))
        with pytest.raises(ModelUnavailable) as late:
            list(provider(server).converse_stream(ask()))
    streamed = "".join(piece for piece in recorded._pieces(recorded.OPENAI_TEXT, 7)[:3])   # after the role
    received = billable(early.value)
    assert received.failed and received.model_id == "gpt-4o-2024-08-06" and received.usage["estimated"]
    assert received.usage["outputTokens"] == estimated_usage(ask(), streamed)["outputTokens"] > 0
    assert received.usage["inputTokens"] == estimated_usage(ask(), "")["inputTokens"]
    counted = billable(late.value).usage
    assert (counted["inputTokens"] + counted["cacheReadInputTokens"], counted["outputTokens"]) == (1117, 46)
    assert not counted["estimated"] and late.value.details["reason"] == "bad_stream"


def test_a_refusal_before_any_answer_bills_nothing_and_an_answer_of_another_shape_bills_its_counts():
    with serving([json_reply(recorded.OPENAI_401, 401),
                  json_reply({"id": "x", "object": "chat.completion", "choices": [],
                              "usage": {"prompt_tokens": 30, "completion_tokens": 7}})]) as server:
        with pytest.raises(ModelUnavailable) as refused:
            provider(server).converse(ask())
        with pytest.raises(ModelUnavailable) as odd:
            provider(server).converse(ask())
    assert billable(refused.value) is None
    assert odd.value.details["reason"] == "model_error"
    assert (billable(odd.value).usage["inputTokens"], billable(odd.value).usage["outputTokens"]) == (30, 7)


def test_a_providers_long_retry_after_is_capped_and_a_missing_one_is_10_seconds():
    with serving([json_reply(recorded.OPENAI_429, 429, {"retry-after": "3600"}),
                  json_reply(recorded.OPENAI_429, 429)]) as server:
        with pytest.raises(ModelThrottled) as long_wait:
            provider(server, budget_seconds=0.2).converse(ask())
        with pytest.raises(ModelThrottled) as no_wait:
            provider(server, budget_seconds=0.2).converse(ask())
    assert long_wait.value.details["retryAfterSeconds"] == 60 and long_wait.value.headers["Retry-After"] == "60"
    assert no_wait.value.details["retryAfterSeconds"] == 10
