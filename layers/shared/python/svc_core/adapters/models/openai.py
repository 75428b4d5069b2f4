"""Chat Completions, as OpenAI-compatible servers speak it: OpenAI, Azure OpenAI (the v1 API),
Ollama, vLLM, llama.cpp's server, LiteLLM. POST {base_url}/chat/completions.

Converse to Chat Completions:
- system blocks: one `system` message (their texts joined by a blank line);
- text blocks: the message's `content`; an assistant's toolUse blocks: its `tool_calls`
  ({id, type: function, function: {name, arguments: the input as JSON text}});
- a user message's toolResult blocks: one `role: tool` message each (tool_call_id, the result's
  text; JSON results as their JSON text; a result with status error starts with "Error: "), sent
  before the message's text, as Chat Completions wants them right after the assistant's calls;
- toolConfig: `tools` of type function (name, description, parameters = inputSchema.json);
  toolChoice auto / any / tool -> "auto" / "required" / {"type": "function", "function": {name}};
- inferenceConfig: maxTokens -> max_tokens (or max_completion_tokens, which OpenAI's reasoning
  models require: the max_tokens_field argument), temperature, topP -> top_p, stopSequences -> stop.

Back to Converse:
- finish_reason: stop -> end_turn, length -> max_tokens, tool_calls (and the older function_call)
  -> tool_use, content_filter -> content_filtered; an answer with tool calls is tool_use whatever
  its finish_reason says (Ollama has answered "stop" with tool calls);
- tool call arguments that are not a JSON object (a model can write broken JSON) reach the tool as
  {"_raw": "<the text>"} (base.tool_input): the tool refuses the input, the model reads why in the
  tool's result and can call again. Sent back to the model, {"_raw": text} is its text again;
- usage: prompt_tokens less the cached ones -> inputTokens, prompt_tokens_details.cached_tokens ->
  cacheReadInputTokens (Converse counts them apart; OpenAI includes them in prompt_tokens),
  completion_tokens -> outputTokens. A server that reports no usage gets an estimate (estimated).

Streams ask for `stream_options: {include_usage: true}` (the usage comes in a last chunk with no
choices). Text deltas become contentBlockDelta text; tool call fragments, keyed by their `index`,
become a contentBlockStart (id, name: the first fragment of that index) and contentBlockDelta
input fragments; each block ends (contentBlockStop) when the next one starts or the answer ends.
The time budget and the errors are http_api's.
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
    estimated_usage,
    tool_input,
    usage_of,
)
from svc_core.adapters.models.http_api import JsonOverHttp
from svc_core.platform.errors import ModelThrottled, ModelUnavailable

_STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "function_call": "tool_use",
                 "content_filter": "content_filtered"}


def _result_text(result: dict[str, Any]) -> str:
    parts = [item["text"] if "text" in item else json.dumps(item.get("json"), separators=(",", ":"))
             for item in result.get("content", [])]
    text = "\n".join(parts)
    return f"Error: {text}" if result.get("status") == "error" else text


def _arguments(value: dict[str, Any]) -> str:
    """A toolUse input as the arguments text it came as ({"_raw": text} is that text)."""
    if set(value) == {"_raw"} and isinstance(value["_raw"], str):
        return value["_raw"]
    return json.dumps(value, separators=(",", ":"))


def chat_messages(request: ConverseRequest) -> list[dict[str, Any]]:
    """Converse's system and messages as Chat Completions messages."""
    messages: list[dict[str, Any]] = []
    system = "\n\n".join(block["text"] for block in request.get("system") or [] if block.get("text"))
    if system:
        messages.append({"role": "system", "content": system})
    for message in request.get("messages") or []:
        text = "".join(block["text"] for block in message["content"] if "text" in block)
        if message["role"] == "assistant":
            calls = [{"id": block["toolUse"]["toolUseId"], "type": "function",
                      "function": {"name": block["toolUse"]["name"], "arguments": _arguments(block["toolUse"]["input"])}}
                     for block in message["content"] if "toolUse" in block]
            answer: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                answer["tool_calls"] = calls
            messages.append(answer)
            continue
        for block in message["content"]:
            if "toolResult" in block:
                messages.append({"role": "tool", "tool_call_id": block["toolResult"]["toolUseId"],
                                 "content": _result_text(block["toolResult"])})
        if text:
            messages.append({"role": "user", "content": text})
    return messages


def _tool_choice(choice: dict[str, Any]) -> Any:
    if "any" in choice:
        return "required"
    if "tool" in choice:
        return {"type": "function", "function": {"name": choice["tool"]["name"]}}
    return "auto"


def usage_from(raw: dict[str, Any] | None) -> dict[str, Any] | None:
    """Converse usage from Chat Completions usage (None when the server sent none)."""
    if not raw:
        return None
    cached = int((raw.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
    usage = {"inputTokens": int(raw.get("prompt_tokens") or 0) - cached,
             "outputTokens": int(raw.get("completion_tokens") or 0), "cacheReadInputTokens": cached}
    if raw.get("total_tokens"):
        usage["totalTokens"] = int(raw["total_tokens"])
    return usage


class OpenAIProvider:
    name = "openai"

    def __init__(self, model_id: str, base_url: str, api_key: str | None = None, *,
                 budget_seconds: float = DEFAULT_BUDGET_SECONDS, api_key_header: str = "authorization",
                 max_tokens_field: str = "max_tokens", client: httpx.Client | None = None,
                 shown_as: str | None = None) -> None:
        """base_url: up to and with the version (https://api.openai.com/v1, http://127.0.0.1:11434/v1,
        https://NAME.openai.azure.com/openai/v1). api_key_header: "authorization" (sent as a Bearer
        token) or the header that carries the key itself (Azure's "api-key"); no key: no header
        (Ollama, a local vLLM). shown_as: the id results and errors name (the registry's
        `openai:model`), the model's own name going in the body."""
        headers: dict[str, str] = {}
        if api_key:
            bearer = api_key_header.lower() == "authorization"
            headers[api_key_header] = f"Bearer {api_key}" if bearer else api_key
        self.model, self.model_id = model_id, shown_as or model_id
        self.max_tokens_field = max_tokens_field
        self._http = JsonOverHttp(self.name, self.model_id, base_url.rstrip("/") + "/chat/completions", headers,
                                  budget_seconds, client)

    def body(self, request: ConverseRequest, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": chat_messages(request)}
        tool_config = request.get("toolConfig") or {}
        tools = [{"type": "function", "function": {
            "name": tool["toolSpec"]["name"], "description": tool["toolSpec"].get("description", ""),
            "parameters": (tool["toolSpec"].get("inputSchema") or {}).get("json") or {"type": "object"}}}
            for tool in tool_config.get("tools", []) if "toolSpec" in tool]
        if tools:
            body["tools"] = tools
            if tool_config.get("toolChoice"):
                body["tool_choice"] = _tool_choice(tool_config["toolChoice"])
        inference = request.get("inferenceConfig") or {}
        for ours, theirs in (("maxTokens", self.max_tokens_field), ("temperature", "temperature"),
                             ("topP", "top_p"), ("stopSequences", "stop")):
            if inference.get(ours) is not None:
                body[theirs] = inference[ours]
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def converse(self, request: ConverseRequest) -> ConverseResult:
        started = time.monotonic()
        answer = self._http.call(self.body(request, stream=False))
        choices = answer.get("choices") or []
        if not choices or not isinstance(choices[0].get("message"), dict):   # counted, if it says so: billed
            received = Received(self.model_id, self.name)
            received.report(usage_from(answer.get("usage") if isinstance(answer.get("usage"), dict) else None))
            raise received.attach(self._http.failure("model_error", error="no choice"), request)
        message, finish = choices[0]["message"], choices[0].get("finish_reason")
        content: list[dict[str, Any]] = []
        if message.get("content"):
            content.append({"text": message["content"]})
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            content.append({"toolUse": {"toolUseId": call.get("id") or "", "name": function.get("name") or "",
                                        "input": tool_input(function.get("arguments") or "")}})
        stop_reason = "tool_use" if message.get("tool_calls") else _STOP_REASONS.get(finish or "stop", "end_turn")
        usage = usage_from(answer.get("usage"))
        output = (message.get("content") or "") + "".join(
            (call.get("function") or {}).get("arguments") or "" for call in message.get("tool_calls") or [])
        return ConverseResult(
            message={"role": "assistant", "content": content}, stop_reason=stop_reason,
            usage=usage_of(usage, False) if usage else usage_of(estimated_usage(request, output), True),
            model_id=self.model_id, provider=self.name,
            metrics={"latencyMs": int((time.monotonic() - started) * 1000)})

    def converse_stream(self, request: ConverseRequest) -> Iterator[StreamEvent]:
        started = time.monotonic()
        events = self._http.events(self.body(request, stream=True))
        return self._converse_events(events, request, started)

    def _converse_events(self, events: Iterator[tuple[str, str]], request: ConverseRequest, started: float
                         ) -> Iterator[StreamEvent]:
        received = Received(self.model_id, self.name)
        try:
            yield from self._stream(events, request, started, received)
        except (ModelThrottled, ModelUnavailable) as exc:   # what was received before is billed
            raise received.attach(exc, request) from None

    def _stream(self, events: Iterator[tuple[str, str]], request: ConverseRequest, started: float,
                received: Received) -> Iterator[StreamEvent]:
        yield {"messageStart": {"role": "assistant"}}
        blocks: dict[Any, int] = {}       # "text" or ("tool", index) -> the Converse block index
        open_block: int | None = None
        finish: str | None = None
        saw_tool_calls = False
        usage: dict[str, Any] | None = None
        output: list[str] = []
        for _, data in events:
            if data.strip() == "[DONE]":
                break
            try:
                chunk = json.loads(data)
            except ValueError:
                raise self._http.failure("bad_stream", error="chunk not JSON") from None
            if chunk.get("error"):
                raise self._http.failure("model_error", error="error in stream",
                                         providerCode=str(chunk["error"].get("code") or chunk["error"].get("type")))
            if chunk.get("usage"):
                usage = usage_from(chunk["usage"])
                received.report(usage)
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    if "text" not in blocks:
                        if open_block is not None:
                            yield {"contentBlockStop": {"contentBlockIndex": open_block}}
                        blocks["text"] = open_block = len(blocks)
                    output.append(delta["content"])
                    received.streamed(delta["content"])
                    yield {"contentBlockDelta": {"contentBlockIndex": blocks["text"],
                                                 "delta": {"text": delta["content"]}}}
                for fragment in delta.get("tool_calls") or []:
                    saw_tool_calls = True
                    key = ("tool", fragment.get("index", 0))
                    function = fragment.get("function") or {}
                    if key not in blocks:
                        if open_block is not None:
                            yield {"contentBlockStop": {"contentBlockIndex": open_block}}
                        blocks[key] = open_block = len(blocks)
                        yield {"contentBlockStart": {"contentBlockIndex": blocks[key], "start": {"toolUse": {
                            "toolUseId": fragment.get("id") or "", "name": function.get("name") or ""}}}}
                    if function.get("arguments"):
                        output.append(function["arguments"])
                        received.streamed(function["arguments"])
                        yield {"contentBlockDelta": {"contentBlockIndex": blocks[key],
                                                     "delta": {"toolUse": {"input": function["arguments"]}}}}
                if choice.get("finish_reason"):
                    finish = choice["finish_reason"]
        if finish is None:  # the connection ended cleanly, but before the answer did
            raise self._http.failure("bad_stream", error="no finish_reason")
        if open_block is not None:
            yield {"contentBlockStop": {"contentBlockIndex": open_block}}
        stop_reason = "tool_use" if saw_tool_calls else _STOP_REASONS.get(finish or "stop", "end_turn")
        yield {"messageStop": {"stopReason": stop_reason}}
        measured = usage_of(usage, False) if usage else usage_of(estimated_usage(request, "".join(output)), True)
        yield {"metadata": {"usage": measured, "metrics": {"latencyMs": int((time.monotonic() - started) * 1000)}}}
