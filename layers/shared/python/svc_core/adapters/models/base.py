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
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypedDict

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


class Budget:
    """The time left of one call."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

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
