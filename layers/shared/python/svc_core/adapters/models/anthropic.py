"""Anthropic's Messages API: POST {base_url}/v1/messages with x-api-key and anthropic-version.

Converse and Messages are close relatives:
- system blocks: `system` (their texts joined by a blank line);
- text / toolUse / toolResult blocks: text / tool_use {id, name, input} / tool_result
  {tool_use_id, content: text blocks (JSON results as their JSON text), is_error for status
  error}; empty text blocks are left out (the API refuses them);
- toolConfig: `tools` {name, description, input_schema}; toolChoice auto / any / tool -> type
  auto / any / tool {name};
- inferenceConfig: maxTokens -> max_tokens (the API requires it: default_max_tokens when the
  request sets none), temperature, topP -> top_p, stopSequences -> stop_sequences.

Back to Converse:
- stop_reason: end_turn, max_tokens, stop_sequence, tool_use are Converse's own; refusal ->
  content_filtered; model_context_window_exceeded -> max_tokens; pause_turn -> end_turn;
- thinking blocks are not part of the interface and are left out;
- usage: input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens ->
  inputTokens, outputTokens, cacheReadInputTokens, cacheWriteInputTokens (the API already counts
  cached input apart, as Converse does).

Streams: message_start (the input usage), content_block_start (a tool_use block's id and name ->
contentBlockStart), content_block_delta (text_delta -> text, input_json_delta -> toolUse input
fragments), content_block_stop, message_delta (the stop reason, the output usage, cumulative),
message_stop; ping is skipped; an error event (overloaded_error mid-stream, say) raises as the
same error an HTTP status would. Tool input that is not a JSON object is base.tool_input's
{"_raw": text}, as for every provider. The time budget and the errors are http_api's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx

from svc_core.adapters.models.base import (
    DEFAULT_BUDGET_SECONDS,
    ConverseRequest,
    ConverseResult,
    Received,
    StreamEvent,
    usage_of,
)
from svc_core.adapters.models.http_api import JsonOverHttp
from svc_core.platform.errors import ModelThrottled, ModelUnavailable

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
_STOP_REASONS = {"end_turn": "end_turn", "max_tokens": "max_tokens", "stop_sequence": "stop_sequence",
                 "tool_use": "tool_use", "refusal": "content_filtered",
                 "model_context_window_exceeded": "max_tokens", "pause_turn": "end_turn"}
# An error event in a stream, by its error type: (throttled?, reason)
_STREAM_ERRORS = {"overloaded_error": (True, ""), "rate_limit_error": (True, ""),
                  "api_error": (False, "service_error"), "invalid_request_error": (False, "invalid_request"),
                  "authentication_error": (False, "credentials"), "permission_error": (False, "not_enabled"),
                  "not_found_error": (False, "not_found"), "timeout_error": (False, "timeout")}


def _result_content(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": item["text"] if "text" in item
             else json.dumps(item.get("json"), separators=(",", ":"))}
            for item in result.get("content", []) if item.get("text") or "json" in item]


def _block(block: dict[str, Any]) -> dict[str, Any] | None:
    if block.get("text"):
        return {"type": "text", "text": block["text"]}
    if "toolUse" in block:
        use = block["toolUse"]
        return {"type": "tool_use", "id": use["toolUseId"], "name": use["name"], "input": use.get("input") or {}}
    if "toolResult" in block:
        result = block["toolResult"]
        answer = {"type": "tool_result", "tool_use_id": result["toolUseId"], "content": _result_content(result)}
        if result.get("status") == "error":
            answer["is_error"] = True
        return answer
    return None


_USAGE_NAMES = {"input_tokens": "inputTokens", "output_tokens": "outputTokens",
                "cache_read_input_tokens": "cacheReadInputTokens",
                "cache_creation_input_tokens": "cacheWriteInputTokens"}


def usage_from(raw: dict[str, Any]) -> dict[str, int]:
    """The Converse names of the counts the API gave (a stream's message_delta gives some only)."""
    return {ours: int(raw[theirs]) for theirs, ours in _USAGE_NAMES.items() if raw.get(theirs) is not None}


class AnthropicProvider:
    name = "anthropic"

    def __init__(self, model_id: str, api_key: str, base_url: str = "https://api.anthropic.com", *,
                 budget_seconds: float = DEFAULT_BUDGET_SECONDS, default_max_tokens: int = DEFAULT_MAX_TOKENS,
                 client: httpx.Client | None = None, shown_as: str | None = None) -> None:
        """shown_as: the id results and errors name (the registry's `anthropic:model`)."""
        self.model, self.model_id = model_id, shown_as or model_id
        self.default_max_tokens = default_max_tokens
        self._http = JsonOverHttp(self.name, self.model_id, base_url.rstrip("/") + "/v1/messages",
                                  {"x-api-key": api_key, "anthropic-version": API_VERSION}, budget_seconds, client)

    def body(self, request: ConverseRequest, stream: bool) -> dict[str, Any]:
        inference = request.get("inferenceConfig") or {}
        body: dict[str, Any] = {"model": self.model, "max_tokens": inference.get("maxTokens") or self.default_max_tokens,
                                "messages": [{"role": message["role"],
                                              "content": [b for b in map(_block, message["content"]) if b]}
                                             for message in request.get("messages") or []]}
        system = "\n\n".join(block["text"] for block in request.get("system") or [] if block.get("text"))
        if system:
            body["system"] = system
        tool_config = request.get("toolConfig") or {}
        tools = [{"name": tool["toolSpec"]["name"], "description": tool["toolSpec"].get("description", ""),
                  "input_schema": (tool["toolSpec"].get("inputSchema") or {}).get("json") or {"type": "object"}}
                 for tool in tool_config.get("tools", []) if "toolSpec" in tool]
        if tools:
            body["tools"] = tools
            choice = tool_config.get("toolChoice") or {}
            if "any" in choice:
                body["tool_choice"] = {"type": "any"}
            elif "tool" in choice:
                body["tool_choice"] = {"type": "tool", "name": choice["tool"]["name"]}
        for ours, theirs in (("temperature", "temperature"), ("topP", "top_p"), ("stopSequences", "stop_sequences")):
            if inference.get(ours) is not None:
                body[theirs] = inference[ours]
        if stream:
            body["stream"] = True
        return body

    def converse(self, request: ConverseRequest) -> ConverseResult:
        started = time.monotonic()
        answer = self._http.call(self.body(request, stream=False))
        if not isinstance(answer.get("content"), list) or not answer.get("stop_reason"):   # billed if counted
            received = Received(self.model_id, self.name)
            received.report(usage_from(answer["usage"]) if isinstance(answer.get("usage"), dict) else None)
            raise received.attach(self._http.failure("model_error", error="not a message"), request)
        content: list[dict[str, Any]] = []
        for block in answer["content"]:
            if block.get("type") == "text" and block.get("text"):
                content.append({"text": block["text"]})
            elif block.get("type") == "tool_use":
                content.append({"toolUse": {"toolUseId": block["id"], "name": block["name"],
                                            "input": block.get("input") or {}}})
        return ConverseResult(message={"role": "assistant", "content": content},
                              stop_reason=_STOP_REASONS.get(answer["stop_reason"], "end_turn"),
                              usage=usage_of(usage_from(answer.get("usage") or {}), False), model_id=self.model_id,
                              provider=self.name, metrics={"latencyMs": int((time.monotonic() - started) * 1000)})

    def converse_stream(self, request: ConverseRequest) -> Iterator[StreamEvent]:
        started = time.monotonic()
        events = self._http.events(self.body(request, stream=True))
        return self._billed_events(events, request, started)

    def _billed_events(self, events: Iterator[tuple[str, str]], request: ConverseRequest, started: float
                       ) -> Iterator[StreamEvent]:
        received = Received(self.model_id, self.name)
        try:
            yield from self._converse_events(events, started, received)
        except (ModelThrottled, ModelUnavailable) as exc:   # what was received before is billed
            raise received.attach(exc, request) from None

    def _stream_error(self, error: dict[str, Any]) -> Exception:
        kind = str(error.get("type") or "")
        throttled, reason = _STREAM_ERRORS.get(kind, (False, "model_error"))
        if throttled:
            return self._http.throttled(None, providerCode=kind)
        return self._http.failure(reason, error="error in stream", providerCode=kind)

    def _converse_events(self, events: Iterator[tuple[str, str]], started: float,
                         received: Received) -> Iterator[StreamEvent]:
        usage: dict[str, Any] = {}
        stop_reason: str | None = None
        kept: set[int] = set()   # the indexes of text and tool_use blocks (thinking blocks are left out)
        for _, data in events:
            try:
                event = json.loads(data)
            except ValueError:
                raise self._http.failure("bad_stream", error="event not JSON") from None
            kind = event.get("type")
            if kind == "message_start":
                usage = usage_from((event.get("message") or {}).get("usage") or {})
                received.report(usage)
                yield {"messageStart": {"role": "assistant"}}
            elif kind == "content_block_start":
                block, index = event.get("content_block") or {}, event["index"]
                if block.get("type") == "tool_use":
                    kept.add(index)
                    yield {"contentBlockStart": {"contentBlockIndex": index, "start": {"toolUse": {
                        "toolUseId": block["id"], "name": block["name"]}}}}
                elif block.get("type") == "text":
                    kept.add(index)
            elif kind == "content_block_delta":
                delta, index = event.get("delta") or {}, event["index"]
                received.streamed(delta.get("text") or delta.get("partial_json"))
                if delta.get("type") == "text_delta" and delta.get("text"):
                    yield {"contentBlockDelta": {"contentBlockIndex": index, "delta": {"text": delta["text"]}}}
                elif delta.get("type") == "input_json_delta" and delta.get("partial_json"):
                    yield {"contentBlockDelta": {"contentBlockIndex": index,
                                                 "delta": {"toolUse": {"input": delta["partial_json"]}}}}
            elif kind == "content_block_stop":
                if event["index"] in kept:
                    yield {"contentBlockStop": {"contentBlockIndex": event["index"]}}
            elif kind == "message_delta":
                stop_reason = (event.get("delta") or {}).get("stop_reason") or stop_reason
                usage.update(usage_from(event.get("usage") or {}))  # cumulative: the last counts are the answer's
                received.report(usage)
            elif kind == "message_stop":
                break
            elif kind == "error":
                raise self._stream_error(event.get("error") or {})
        if stop_reason is None:  # the connection ended cleanly, but before the answer did
            raise self._http.failure("bad_stream", error="no stop_reason")
        yield {"messageStop": {"stopReason": _STOP_REASONS.get(stop_reason, "end_turn")}}
        yield {"metadata": {"usage": usage_of(usage, False),
                            "metrics": {"latencyMs": int((time.monotonic() - started) * 1000)}}}
