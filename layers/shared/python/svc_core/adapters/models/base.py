"""The model interface, in Amazon Bedrock Converse shapes.

A request is what Converse takes without the model id (the provider holds that): `messages`
(role user/assistant, content blocks text / toolUse / toolResult), `system`, `toolConfig`
(tools with toolSpec {name, description, inputSchema {json}}) and `inferenceConfig`.
A result is the assistant's message, the stop reason (end_turn, tool_use, max_tokens, ...), and
the usage, which says whether its token counts are measured (Bedrock) or estimated (offline).

A stream is the sequence of Converse stream events, each a one-key dict:
messageStart, contentBlockStart (a toolUse block's id and name), contentBlockDelta (text, or a
fragment of a toolUse block's input JSON), contentBlockStop, messageStop (the stop reason) and
metadata (the usage). StreamAssembler turns the events back into the result, so a caller can
both forward a stream and store its message.

A tool call whose input is not a JSON object (a model can write arguments that do not parse) keeps
its text as {"_raw": text} (tool_input): the tool then refuses it like any invalid input, and the
model reads that refusal in the tool's result and can call again; nothing in the loop raises.

Failures are ModelThrottled (429) and ModelUnavailable (502) with details.reason: invalid_request,
model_error, timeout, not_enabled, not_found, service_error, unreachable, bad_stream, and
credentials: the provider refused the deployment's key or token (HTTP 401), which an operator
fixes, unlike a model that failed.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypedDict

from svc_core.platform import deadline as request_deadline

StopReason = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "guardrail_intervened",
                     "content_filtered"]


# ---- requests --------------------------------------------------------------------------------

class ToolUse(TypedDict):
    toolUseId: str
    name: str
    input: dict[str, Any]


class ToolResult(TypedDict, total=False):
    toolUseId: str
    content: list[dict[str, Any]]      # [{"text": ...}] or [{"json": {...}}]
    status: Literal["success", "error"]


class ContentBlock(TypedDict, total=False):
    text: str
    toolUse: ToolUse
    toolResult: ToolResult


class Message(TypedDict):
    role: Literal["user", "assistant"]
    content: list[ContentBlock]


class ToolSpec(TypedDict):
    name: str
    description: str
    inputSchema: dict[str, Any]        # {"json": <JSON Schema of the input>}


class ToolConfig(TypedDict, total=False):
    tools: list[dict[str, ToolSpec]]   # [{"toolSpec": {...}}]
    toolChoice: dict[str, Any]


class ConverseRequest(TypedDict, total=False):
    messages: list[Message]
    system: list[dict[str, str]]       # [{"text": ...}]
    toolConfig: ToolConfig
    inferenceConfig: dict[str, Any]    # maxTokens, temperature, topP, stopSequences


class Usage(TypedDict, total=False):
    inputTokens: int
    outputTokens: int
    totalTokens: int
    cacheReadInputTokens: int
    cacheWriteInputTokens: int
    estimated: bool                    # True: counted by an estimate, not by the model


# One call's whole time (connecting, waiting, the retries and their waits) for every provider that
# calls a model: the registry passes MODEL_TIMEOUT_SECONDS; retries are at most MAX_ATTEMPTS, backing off.
DEFAULT_BUDGET_SECONDS = 30.0
MAX_ATTEMPTS = 3
FIRST_BACKOFF_SECONDS = 0.25
# A provider's Retry-After reaches the caller (MODEL_THROTTLED's retryAfterSeconds) at most this long:
# a wait of hours (a daily quota) is no wait a caller should be told to sit through in one go.
MAX_RETRY_AFTER_SECONDS = 60
DEFAULT_RETRY_AFTER_SECONDS = 10   # a provider that says nothing


def retry_after(wait: float | None) -> int:
    """The whole seconds a caller is told to wait: the provider's (at least 1, at most the cap), else 10."""
    if wait is None:
        return DEFAULT_RETRY_AFTER_SECONDS
    return min(MAX_RETRY_AFTER_SECONDS, max(1, math.ceil(wait)))


class Budget:
    """The time left of one call: its own budget, within what is left of the request's
    (svc_core/platform/deadline.py: a synchronous request's model calls, fallback included, end in time
    for the request to answer before API Gateway's 29 s)."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + request_deadline.clamp(seconds)

    def left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def spent(self) -> bool:
        return self.left() <= 0.01   # a timer set for the deadline may wake a hair before it


# A stream event: exactly one of these keys, as Converse sends them.
StreamEvent = dict[str, Any]


@dataclass
class ConverseResult:
    message: Message
    stop_reason: str
    usage: Usage
    model_id: str
    provider: str
    metrics: dict[str, Any] = field(default_factory=dict)
    failed: bool = False   # what a call that failed had received (Received): billed, marked failed

    @property
    def text(self) -> str:
        """The text blocks of the answer, joined."""
        return "".join(block.get("text", "") for block in self.message["content"])

    @property
    def tool_uses(self) -> list[ToolUse]:
        return [block["toolUse"] for block in self.message["content"] if "toolUse" in block]


class ModelProvider(Protocol):
    name: str        # "bedrock", "offline", "scripted"
    model_id: str

    def converse(self, request: ConverseRequest) -> ConverseResult: ...

    def converse_stream(self, request: ConverseRequest) -> Iterator[StreamEvent]: ...


# ---- helpers shared by the providers ---------------------------------------------------------

def usage_of(raw: dict[str, Any] | None, estimated: bool) -> Usage:
    """A Usage from Converse's usage (missing counts are 0; totalTokens recomputed if absent)."""
    raw = raw or {}
    usage: Usage = {"inputTokens": int(raw.get("inputTokens", 0)), "outputTokens": int(raw.get("outputTokens", 0))}
    for name in ("cacheReadInputTokens", "cacheWriteInputTokens"):
        if raw.get(name):
            usage[name] = int(raw[name])
    usage["totalTokens"] = int(raw.get("totalTokens") or usage["inputTokens"] + usage["outputTokens"]
                               + usage.get("cacheReadInputTokens", 0) + usage.get("cacheWriteInputTokens", 0))
    usage["estimated"] = estimated
    return usage


def estimated_usage(request: Any, output: str) -> dict[str, Any]:
    """Usage when a server reports none (some OpenAI-compatible servers): characters / 4 of the
    request and of the answer, marked estimated, so the call is still billed."""
    input_tokens = math.ceil(len(json.dumps(request, default=str)) / 4)
    output_tokens = math.ceil(len(output) / 4)
    return {"inputTokens": input_tokens, "outputTokens": output_tokens, "estimated": True}


class Received:
    """What one call received before it failed, so that it is billed (the provider bills the tokens it
    counted whether or not the service could read the rest): the counts the provider reported last
    (`report`), and the text and tool input it streamed after them (`streamed`).

    Billed (`usage`): the reported counts as they are when nothing was streamed after them (measured);
    with text after them (or no counts at all), the output is the reported count plus ⌈characters / 4⌉ of
    that text, the input the reported count or ⌈characters / 4⌉ of the request, marked estimated.
    Nothing reported and nothing streamed: nothing is billed (the answer never started)."""

    def __init__(self, model_id: str, provider: str) -> None:
        self.model_id, self.provider = model_id, provider
        self.reported: dict[str, Any] | None = None
        self._after: list[str] = []

    def report(self, usage: dict[str, Any] | None) -> None:
        if usage:
            self.reported, self._after = dict(usage), []

    def streamed(self, text: str | None) -> None:
        if text:
            self._after.append(text)

    def usage(self, request: Any) -> Usage | None:
        text = "".join(self._after)
        if self.reported is None and not text:
            return None
        reported = {k: v for k, v in (self.reported or {}).items() if k != "totalTokens"}
        if not text:
            return usage_of(reported, bool(reported.get("estimated", False)))
        estimate = estimated_usage(request, text)
        counts = {**reported, "inputTokens": reported.get("inputTokens", estimate["inputTokens"]),
                  "outputTokens": int(reported.get("outputTokens") or 0) + estimate["outputTokens"]}
        return usage_of(counts, True)

    def attach(self, exc: Exception, request: Any) -> Exception:
        """The failure, holding what is billed of it (`billable(exc)`), if anything was received."""
        usage = self.usage(request)
        if usage is not None:
            exc.received = ConverseResult(  # type: ignore[attr-defined]
                message={"role": "assistant", "content": []}, stop_reason="failed", usage=usage,
                model_id=self.model_id, provider=self.provider, failed=True)
        return exc


def billable(exc: Exception) -> ConverseResult | None:
    """What a failed call received and is billed for (a result marked failed), or None."""
    return getattr(exc, "received", None)


def tool_input(text: str) -> dict[str, Any]:
    """A tool call's input from the JSON text of its arguments: {} for none, {"_raw": text} for text
    that is not a JSON object (the call reaches the tool, which refuses it, and the model sees why)."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {"_raw": text}
    return value if isinstance(value, dict) else {"_raw": text}


def chunks(text: str, size: int) -> list[str]:
    """Text cut into pieces of about `size` characters, at spaces where possible (joined: the text)."""
    pieces: list[str] = []
    while len(text) > size:
        cut = text.rfind(" ", 1, size)
        cut = size if cut <= 0 else cut + 1
        pieces.append(text[:cut])
        text = text[cut:]
    if text:
        pieces.append(text)
    return pieces


def events_of(result: ConverseResult, chunk_size: int = 24) -> Iterator[StreamEvent]:
    """The stream Converse would send for this result: text and tool input in chunks."""
    yield {"messageStart": {"role": "assistant"}}
    for index, block in enumerate(result.message["content"]):
        if "toolUse" in block:
            tool = block["toolUse"]
            yield {"contentBlockStart": {"contentBlockIndex": index,
                                         "start": {"toolUse": {"toolUseId": tool["toolUseId"], "name": tool["name"]}}}}
            for piece in chunks(json.dumps(tool["input"], separators=(",", ":")), chunk_size):
                yield {"contentBlockDelta": {"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}}}
        else:
            for piece in chunks(block.get("text", ""), chunk_size):
                yield {"contentBlockDelta": {"contentBlockIndex": index, "delta": {"text": piece}}}
        yield {"contentBlockStop": {"contentBlockIndex": index}}
    yield {"messageStop": {"stopReason": result.stop_reason}}
    yield {"metadata": {"usage": dict(result.usage), "metrics": dict(result.metrics)}}


class StreamAssembler:
    """Collects stream events (add each as it is forwarded) into the ConverseResult they make."""

    def __init__(self, model_id: str, provider: str) -> None:
        self.model_id, self.provider = model_id, provider
        self._blocks: dict[int, dict[str, Any]] = {}
        self._stop_reason: str | None = None
        self._usage: Usage | None = None
        self._metrics: dict[str, Any] = {}
        self.role = "assistant"

    def add(self, event: StreamEvent) -> None:
        if "messageStart" in event:
            self.role = event["messageStart"].get("role", "assistant")
        elif "contentBlockStart" in event:
            start = event["contentBlockStart"]
            tool = start.get("start", {}).get("toolUse")
            if tool:
                self._blocks[start["contentBlockIndex"]] = {"toolUse": {**tool, "input": ""}}
        elif "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]
            block = self._blocks.setdefault(delta["contentBlockIndex"], {})
            if "text" in delta["delta"]:
                block["text"] = block.get("text", "") + delta["delta"]["text"]
            elif "toolUse" in delta["delta"]:
                block.setdefault("toolUse", {"toolUseId": "", "name": "", "input": ""})
                block["toolUse"]["input"] += delta["delta"]["toolUse"].get("input", "")
        elif "messageStop" in event:
            self._stop_reason = event["messageStop"]["stopReason"]
        elif "metadata" in event:
            self._usage = event["metadata"].get("usage")
            self._metrics = dict(event["metadata"].get("metrics") or {})

    def result(self) -> ConverseResult:
        if self._stop_reason is None:
            raise ValueError("the stream ended before messageStop")
        content: list[ContentBlock] = []
        for index in sorted(self._blocks):
            block = self._blocks[index]
            if "toolUse" in block:
                tool = block["toolUse"]
                content.append({"toolUse": {"toolUseId": tool["toolUseId"], "name": tool["name"],
                                            "input": tool_input(tool["input"])}})
            else:
                content.append({"text": block.get("text", "")})
        usage = self._usage or {}
        return ConverseResult(message={"role": self.role, "content": content}, stop_reason=self._stop_reason,
                              usage=usage_of(usage, bool(usage.get("estimated", False))),
                              model_id=self.model_id, provider=self.provider, metrics=self._metrics)


def assemble(events: Iterable[StreamEvent], model_id: str, provider: str) -> ConverseResult:
    """The ConverseResult a whole stream makes."""
    assembler = StreamAssembler(model_id, provider)
    for event in events:
        assembler.add(event)
    return assembler.result()


def text_of(message: Message) -> str:
    return " ".join(block["text"] for block in message["content"] if "text" in block)
