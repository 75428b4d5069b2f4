"""The offline model: a deterministic stand-in for the local stack and the tests.

It is honest about what it is: its provider name and model id are "offline", every answer starts
with "[offline model]", and its usage is marked estimated. It still exercises the paths a real
model does:

- the same input always gives the same output (tool-use ids included);
- streams send the text (and a tool's input JSON) in several chunks;
- when tools are offered and the last user message asks for something a tool does (write or
  create a file, list files, read a file, ...), it asks for that tool with arguments valid for its
  input schema (stop reason tool_use); after the tool's result it answers, summarising it
  (end_turn) — so an agent's tool loop runs one round and ends;
- inferenceConfig.maxTokens cuts the answer (stop reason max_tokens);
- usage: ceil(characters / 4) of the input (system, messages, tool definitions) and of the output.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterator
from typing import Any

from svc_core.adapters.models.base import ConverseRequest, ConverseResult, Message, StreamEvent, events_of, text_of

NAME = "offline"
MODEL_ID = "offline"
LABEL = "[offline model]"
CHUNK = 16   # characters per streamed chunk (an answer streams in several)

# What a message asks -> words that name a tool doing it. First match wins.
_INTENTS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"\b(write|create|save)\b|\bcreate file\b", re.I), ("write", "create", "save", "put")),
    (re.compile(r"\blist\b", re.I), ("list",)),
    (re.compile(r"\b(read|open|show|cat)\b", re.I), ("read", "get", "open", "fetch")),
    (re.compile(r"\b(delete|remove)\b", re.I), ("delete", "remove")),
    (re.compile(r"\b(search|find)\b", re.I), ("search", "find", "query")),
)
_FILE_NAME = re.compile(r"[\w.-]+(?:/[\w.-]+)*\.[A-Za-z0-9]{1,8}\b")
_QUOTED = re.compile(r"[\"“']([^\"”']+)[\"”']")


def estimate_tokens(characters: int) -> int:
    return math.ceil(characters / 4)


def _request_characters(request: ConverseRequest) -> int:
    parts = [block.get("text", "") for block in request.get("system", [])]
    for message in request.get("messages", []):
        for block in message["content"]:
            parts.append(block["text"] if "text" in block else json.dumps(block, sort_keys=True))
    if request.get("toolConfig"):
        parts.append(json.dumps(request["toolConfig"], sort_keys=True))
    return sum(len(p) for p in parts)


def _digest(request: ConverseRequest) -> str:
    return hashlib.sha256(json.dumps(request, sort_keys=True, default=str).encode()).hexdigest()


def _tools(request: ConverseRequest) -> list[dict[str, Any]]:
    return [t["toolSpec"] for t in (request.get("toolConfig") or {}).get("tools", []) if "toolSpec" in t]


def _tool_for(text: str, tools: list[dict[str, Any]]) -> dict[str, Any] | None:
    for pattern, words in _INTENTS:
        if pattern.search(text):
            for word in words:
                for tool in tools:
                    if word in tool["name"].lower():
                        return tool
    return None


def _value(name: str, schema: dict[str, Any], text: str) -> Any:
    """A value of the property's type, taken from the message where its name suggests what."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    lowered = name.lower()
    if kind == "string":
        if any(w in lowered for w in ("path", "file", "name", "key")):
            found = _FILE_NAME.search(text)
            return found.group(0) if found else "offline-notes.txt"
        if any(w in lowered for w in ("dir", "folder", "prefix")):
            return "."
        quoted = _QUOTED.search(text)
        return quoted.group(1) if quoted else f"{LABEL} {text}"[:200]
    if kind in ("integer", "number"):
        return max(1, int(schema.get("minimum", 1)))
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    if kind == "object":
        return _arguments(schema, text)
    return None


def _arguments(schema: dict[str, Any], text: str) -> dict[str, Any]:
    properties = schema.get("properties", {})
    required = schema.get("required", list(properties))
    return {name: _value(name, properties.get(name, {}), text) for name in properties if name in required}


def _tool_result_text(block: dict[str, Any]) -> str:
    parts = []
    for item in block["toolResult"].get("content", []):
        parts.append(item["text"] if "text" in item else json.dumps(item.get("json"), sort_keys=True))
    return " ".join(parts)


class OfflineProvider:
    name = NAME
    model_id = MODEL_ID

    def __init__(self, chunk_size: int = CHUNK) -> None:
        self.chunk_size = chunk_size

    def converse(self, request: ConverseRequest) -> ConverseResult:
        messages = request.get("messages") or []
        last: Message | None = messages[-1] if messages else None
        stop_reason = "end_turn"
        results = [b for b in (last["content"] if last else []) if "toolResult" in b]
        if results:
            names = {block["toolUse"]["toolUseId"]: block["toolUse"]["name"]
                     for message in messages for block in message["content"] if "toolUse" in block}
            summary = "; ".join(
                f"{names.get(b['toolResult']['toolUseId'], 'the tool')} "
                f"{'failed' if b['toolResult'].get('status') == 'error' else 'returned'}: "
                f"{_tool_result_text(b)[:200]}" for b in results)
            content: list[dict[str, Any]] = [{"text": f"{LABEL} Done. {summary}"}]
        else:
            text = text_of(last) if last else ""
            tool = _tool_for(text, _tools(request))
            if tool is not None:
                schema = (tool.get("inputSchema") or {}).get("json") or {}
                content = [{"text": f"{LABEL} I will use the tool {tool['name']}."},
                           {"toolUse": {"toolUseId": f"tooluse_offline_{_digest(request)[:20]}",
                                        "name": tool["name"], "input": _arguments(schema, text)}}]
                stop_reason = "tool_use"
            else:
                words = len(text.split())
                content = [{"text": f"{LABEL} This answer comes from the offline model, not a real one. "
                                    f"You wrote {words} word{'s' if words != 1 else ''}: \"{text[:500]}\""}]
        output_characters = sum(len(b["text"]) if "text" in b else len(json.dumps(b["toolUse"]["input"]))
                                for b in content)
        limit = (request.get("inferenceConfig") or {}).get("maxTokens")
        if limit and estimate_tokens(output_characters) > limit and stop_reason == "end_turn":
            content = [{"text": content[0]["text"][:max(limit * 4, len(LABEL))]}]  # the label stays
            output_characters, stop_reason = len(content[0]["text"]), "max_tokens"
        input_tokens, output_tokens = estimate_tokens(_request_characters(request)), estimate_tokens(output_characters)
        usage = {"inputTokens": input_tokens, "outputTokens": output_tokens,
                 "totalTokens": input_tokens + output_tokens, "estimated": True}
        return ConverseResult(message={"role": "assistant", "content": content}, stop_reason=stop_reason,
                              usage=usage, model_id=self.model_id, provider=self.name,
                              metrics={"latencyMs": 0})

    def converse_stream(self, request: ConverseRequest) -> Iterator[StreamEvent]:
        return events_of(self.converse(request), self.chunk_size)
