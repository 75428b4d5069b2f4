"""Answers of the OpenAI Chat Completions and Anthropic Messages APIs, in the shapes those APIs
send (field for field as their documentation and recorded answers show them: ids, the fields a
client ignores, usage with its details, nulls where they send nulls), for model_api_server.

Each streamed answer is the same answer as its non-streamed twin (same text, tool calls and
usage), cut into the fragments the API sends, so a test can check a stream assembles to it.
"""

from __future__ import annotations

import json
from typing import Any

# ---- OpenAI Chat Completions ------------------------------------------------------------------

_OPENAI_USAGE = {"prompt_tokens": 1117, "completion_tokens": 46, "total_tokens": 1163,
                 "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
                 "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                               "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}
_OPENAI_TOOL_USAGE = {"prompt_tokens": 312, "completion_tokens": 58, "total_tokens": 370,
                      "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                      "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                                    "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}
OPENAI_TEXT = "The tide in Brest turns at 14:05 today; the next low water is at 20:17."


def _completion(message: dict[str, Any], finish: str, usage: dict[str, Any]) -> dict[str, Any]:
    return {"id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", "object": "chat.completion", "created": 1741570283,
            "model": "gpt-4o-2024-08-06",
            "choices": [{"index": 0, "message": {"role": "assistant", "refusal": None, "annotations": [], **message},
                         "logprobs": None, "finish_reason": finish}],
            "usage": usage, "service_tier": "default", "system_fingerprint": "fp_fc9f1d7035"}


OPENAI_TEXT_ANSWER = _completion({"content": OPENAI_TEXT}, "stop", _OPENAI_USAGE)

# Two calls in one answer (parallel tool calls), as OpenAI answers them: content null.
OPENAI_TOOL_CALLS = [("call_DdmO9pD3xa9XTPNJ32zg2hcA", "read_file", '{"path":"notes/tides.txt"}'),
                     ("call_ABwkV2mTRHnTqZxTFIG1pNGw", "list_files", '{"prefix":"notes/","limit":20}')]
OPENAI_TOOL_ANSWER = _completion({"content": None, "tool_calls": [
    {"id": id_, "type": "function", "function": {"name": name, "arguments": arguments}}
    for id_, name, arguments in OPENAI_TOOL_CALLS]}, "tool_calls", _OPENAI_TOOL_USAGE)

OPENAI_BROKEN_ARGUMENTS = '{"path": "notes/today.txt", "content": "Low water at 20:17'   # cut off: not JSON
OPENAI_BROKEN_TOOL_ANSWER = _completion({"content": None, "tool_calls": [
    {"id": "call_k3Q8sV0eYwZ1uM4bTnR7pA2c", "type": "function",
     "function": {"name": "write_file", "arguments": OPENAI_BROKEN_ARGUMENTS}}]}, "tool_calls", _OPENAI_TOOL_USAGE)


def _chunk(choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> str:
    return "data: " + json.dumps({"id": "chatcmpl-B9MHEbT0dNq4xWfB2cGqJSx1uYzRs", "object": "chat.completion.chunk",
                                  "created": 1741570284, "model": "gpt-4o-2024-08-06",
                                  "service_tier": "default", "system_fingerprint": "fp_fc9f1d7035",
                                  "choices": choices, "usage": usage}, separators=(",", ":")) + "\n\n"


def _delta(delta: dict[str, Any], finish: str | None = None) -> str:
    return _chunk([{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}])


def _pieces(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


OPENAI_TEXT_STREAM = [
    _delta({"role": "assistant", "content": "", "refusal": None}),
    *[_delta({"content": piece}) for piece in _pieces(OPENAI_TEXT, 7)],
    _delta({}, "stop"),
    _chunk([], _OPENAI_USAGE),
    "data: [DONE]\n\n",
]


def _tool_stream(calls: list[tuple[str, str, str]]) -> list[str]:
    """Tool calls streamed as OpenAI streams them: the first fragment of each index has its id and
    name and empty arguments, the next ones only the index and a piece of the arguments."""
    events = [_delta({"role": "assistant", "content": None, "refusal": None})]
    for index, (id_, name, arguments) in enumerate(calls):
        events.append(_delta({"tool_calls": [{"index": index, "id": id_, "type": "function",
                                              "function": {"name": name, "arguments": ""}}]}))
        events += [_delta({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                   for piece in _pieces(arguments, 5)]
    return [*events, _delta({}, "tool_calls"), _chunk([], _OPENAI_TOOL_USAGE), "data: [DONE]\n\n"]


OPENAI_TOOL_STREAM = _tool_stream(OPENAI_TOOL_CALLS)
OPENAI_BROKEN_TOOL_STREAM = _tool_stream([("call_k3Q8sV0eYwZ1uM4bTnR7pA2c", "write_file", OPENAI_BROKEN_ARGUMENTS)])

OPENAI_401 = {"error": {"message": "Incorrect API key provided: sk-proj-********************************Xc4A. "
                                   "You can find your API key at https://platform.openai.com/account/api-keys.",
                        "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}}
OPENAI_404 = {"error": {"message": "The model `gpt-4o-2024-13-01` does not exist or you do not have access to it.",
                        "type": "invalid_request_error", "param": None, "code": "model_not_found"}}
OPENAI_429 = {"error": {"message": "Rate limit reached for gpt-4o in organization org-7Kq2 on tokens per min (TPM): "
                                   "Limit 30000, Used 29512, Requested 1163. Please try again in 1.35s.",
                        "type": "tokens", "param": None, "code": "rate_limit_exceeded"}}
OPENAI_QUOTA = {"error": {"message": "You exceeded your current quota, please check your plan and billing details.",
                          "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}}
OPENAI_500 = {"error": {"message": "The server had an error while processing your request. Sorry about that!",
                        "type": "server_error", "param": None, "code": None}}

# ---- Anthropic Messages ------------------------------------------------------------------------

ANTHROPIC_MODEL = "claude-sonnet-4-5-20250929"
ANTHROPIC_TEXT = "Low water in Brest is at 20:17 tonight, with a coefficient of 78."
_ANTHROPIC_USAGE = {"input_tokens": 472, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 2048,
                    "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
                    "output_tokens": 89, "service_tier": "standard"}


def _message(content: list[dict[str, Any]], stop_reason: str | None) -> dict[str, Any]:
    return {"id": "msg_01Aq9w938a90dw8q6Tq9QnQ1", "type": "message", "role": "assistant", "model": ANTHROPIC_MODEL,
            "content": content, "stop_reason": stop_reason, "stop_sequence": None, "usage": _ANTHROPIC_USAGE}


ANTHROPIC_TEXT_ANSWER = _message([{"type": "text", "text": ANTHROPIC_TEXT}], "end_turn")
ANTHROPIC_TOOL_PREAMBLE = "I'll read your notes first."
ANTHROPIC_TOOL_USE = {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "read_file",
                      "input": {"path": "notes/tides.txt"}}
ANTHROPIC_TOOL_ANSWER = _message([{"type": "text", "text": ANTHROPIC_TOOL_PREAMBLE}, ANTHROPIC_TOOL_USE], "tool_use")


def _event(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps({'type': name, **data}, separators=(',', ':'))}\n\n"


def _message_start() -> str:
    start = {**_message([], None), "usage": {**_ANTHROPIC_USAGE, "output_tokens": 1}}
    return _event("message_start", {"message": start})


def _text_block(index: int, text: str) -> list[str]:
    return [_event("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}}),
            *[_event("content_block_delta", {"index": index, "delta": {"type": "text_delta", "text": piece}})
              for piece in _pieces(text, 9)],
            _event("content_block_stop", {"index": index})]


def _end(stop_reason: str) -> list[str]:
    return [_event("message_delta", {"delta": {"stop_reason": stop_reason, "stop_sequence": None},
                                     "usage": {"output_tokens": _ANTHROPIC_USAGE["output_tokens"]}}),
            _event("message_stop", {})]


ANTHROPIC_TEXT_STREAM = [_message_start(), _event("ping", {}), *_text_block(0, ANTHROPIC_TEXT), *_end("end_turn")]
ANTHROPIC_TOOL_STREAM = [
    _message_start(), *_text_block(0, ANTHROPIC_TOOL_PREAMBLE),
    _event("content_block_start", {"index": 1, "content_block": {**ANTHROPIC_TOOL_USE, "input": {}}}),
    _event("content_block_delta", {"index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}}),
    *[_event("content_block_delta", {"index": 1, "delta": {"type": "input_json_delta", "partial_json": piece}})
      for piece in _pieces(json.dumps(ANTHROPIC_TOOL_USE["input"]), 6)],
    _event("content_block_stop", {"index": 1}),
    *_end("tool_use"),
]
ANTHROPIC_OVERLOADED_STREAM = [_message_start(), *_text_block(0, "Low water")[:2],
                               _event("error", {"error": {"type": "overloaded_error", "message": "Overloaded"}})]


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"}


ANTHROPIC_401 = _error("authentication_error", "invalid x-api-key")
ANTHROPIC_404 = _error("not_found_error", "model: claude-sonnet-9")
ANTHROPIC_429 = _error("rate_limit_error", "This request would exceed the rate limit for your organization of "
                                           "50,000 input tokens per minute.")
ANTHROPIC_529 = _error("overloaded_error", "Overloaded")
