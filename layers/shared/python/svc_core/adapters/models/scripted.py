"""A provider for tests: given answers, returned in order, with every request recorded.

Each step is a ConverseResult, a Converse response dict ({"output": {"message"}, "stopReason",
"usage"}) or an exception to raise at that step (e.g. ModelThrottled at step 2). Streams are the
same answers cut into chunks, as the offline model streams.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from svc_core.adapters.models.base import ConverseRequest, ConverseResult, StreamEvent, events_of, usage_of


class ScriptExhausted(AssertionError):
    """The code under test asked the model more often than the script expected."""


class ScriptedProvider:
    name = "scripted"

    def __init__(self, responses: list[Any], model_id: str = "scripted", chunk_size: int = 8) -> None:
        self.model_id = model_id
        self.chunk_size = chunk_size
        self._steps = list(responses)
        self.requests: list[ConverseRequest] = []

    @property
    def remaining(self) -> int:
        return len(self._steps)

    def _next(self, request: ConverseRequest) -> ConverseResult:
        self.requests.append(copy.deepcopy(request))
        if not self._steps:
            raise ScriptExhausted(f"the script has no answer for call {len(self.requests)}")
        step = self._steps.pop(0)
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, ConverseResult):
            return step
        return ConverseResult(message=step["output"]["message"], stop_reason=step["stopReason"],
                              usage=usage_of(step.get("usage"), bool((step.get("usage") or {}).get("estimated"))),
                              model_id=self.model_id, provider=self.name, metrics=dict(step.get("metrics") or {}))

    def converse(self, request: ConverseRequest) -> ConverseResult:
        return self._next(request)

    def converse_stream(self, request: ConverseRequest) -> Iterator[StreamEvent]:
        return events_of(self._next(request), self.chunk_size)


def text_answer(text: str, input_tokens: int = 10, output_tokens: int = 5, stop_reason: str = "end_turn"
                ) -> dict[str, Any]:
    """A Converse response with one text block."""
    return {"output": {"message": {"role": "assistant", "content": [{"text": text}]}}, "stopReason": stop_reason,
            "usage": {"inputTokens": input_tokens, "outputTokens": output_tokens}}


def tool_answer(name: str, arguments: dict[str, Any], tool_use_id: str = "tooluse_1", input_tokens: int = 10,
                output_tokens: int = 5) -> dict[str, Any]:
    """A Converse response asking for one tool."""
    return {"output": {"message": {"role": "assistant", "content": [
        {"toolUse": {"toolUseId": tool_use_id, "name": name, "input": arguments}}]}},
        "stopReason": "tool_use", "usage": {"inputTokens": input_tokens, "outputTokens": output_tokens}}
