"""Chat streaming: the typed events of an assistant turn, and the resume rules.

The stream is Server-Sent Events (`GET /chat/sessions/{id}/stream`): each event has an integer
`id` (per session, increasing across turns), a name and a JSON `data` holding `messageId`. A turn
ends with `done`. When the connection breaks before that, the client reconnects with
`Last-Event-ID` = the last id it saw and gets the events after it; a 204 means nothing (more) to
stream.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from svc_client.errors import StreamInterrupted
from svc_client.models import ApiModel


class _Event(ApiModel):
    id: int = 0
    message_id: str | None = None


class MessageStart(_Event):
    event: Literal["message_start"] = "message_start"
    role: str = "assistant"
    model: str | None = None
    user_message_id: str | None = None
    offline: bool = False


class ContentDelta(_Event):
    event: Literal["content_delta"] = "content_delta"
    text: str = ""


class ToolUse(_Event):
    event: Literal["tool_use"] = "tool_use"
    tool_use_id: str | None = None
    name: str | None = None
    input: Any = None


class ToolResult(_Event):
    event: Literal["tool_result"] = "tool_result"
    tool_use_id: str | None = None
    name: str | None = None
    status: str | None = None
    result: Any = None


class Usage(_Event):
    event: Literal["usage"] = "usage"
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    micro_credits: int = 0
    estimated: bool = False


class MessageStop(_Event):
    event: Literal["message_stop"] = "message_stop"
    stop_reason: str | None = None


class StreamError(_Event):
    """The model failed during the turn (the turn still ends with `done`, status failed)."""
    event: Literal["error"] = "error"
    code: str | None = None
    message: str | None = None


class Done(_Event):
    event: Literal["done"] = "done"
    status: str = "completed"


class UnknownEvent(_Event):
    """An event this version of the library does not know; `name` and `data` as sent."""
    event: str = "unknown"
    name: str = ""
    data: dict[str, Any] = Field(default_factory=dict)


ChatEvent = (MessageStart | ContentDelta | ToolUse | ToolResult | Usage | MessageStop | StreamError | Done
             | UnknownEvent)
_TYPES: dict[str, type[_Event]] = {cls.model_fields["event"].default: cls for cls in (
    MessageStart, ContentDelta, ToolUse, ToolResult, Usage, MessageStop, StreamError, Done)}


def to_event(name: str, event_id: str | int | None, data: str) -> ChatEvent:
    try:
        payload = json.loads(data) if data else {}
    except ValueError:
        payload = {"text": data}
    if not isinstance(payload, dict):
        payload = {"value": payload}
    number = int(event_id) if event_id not in (None, "") and str(event_id).isdigit() else 0
    cls = _TYPES.get(name)
    if cls is None:
        return UnknownEvent(id=number, name=name, data=payload, message_id=payload.get("messageId"))
    return cls.model_validate({**payload, "id": number, "event": name})


def is_stream_failure(event: ChatEvent) -> bool:
    """The stream itself failed: an `error` without an id of its own (SSE readers repeat the
    previous id for such an event), not a turn's `error`: resume, do not report it."""
    return isinstance(event, StreamError)


@dataclass
class ResumeState:
    """Where a stream stands: the last event id seen and whether the last event was a `done`.

    A stream that ends right after a `done` is finished; one that ends (or breaks) elsewhere is
    resumed from `last_id`, up to `max_attempts` times in a row without a new event."""

    last_id: int | None = None
    finished: bool = False
    failures: int = 0
    max_attempts: int = 5
    retry_ms: int = 500   # the server's `retry:` field overrides it

    def headers(self) -> dict[str, str]:
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-store"}
        if self.last_id is not None:
            headers["Last-Event-ID"] = str(self.last_id)
        return headers

    def is_new(self, event: ChatEvent) -> bool:
        """Every event of a turn has an id above the last one; anything else was seen already or
        is the stream's own failure notice."""
        return bool(event.id) and (self.last_id is None or event.id > self.last_id)

    def take(self, sse: Any) -> tuple[ChatEvent | None, bool]:
        """An SSE message as (the event to yield or None to skip it, whether the stream failed)."""
        event = to_event(sse.event, sse.id, sse.data)
        if not self.is_new(event):
            return None, is_stream_failure(event)
        self.seen(event, sse.retry)
        return event, False

    def seen(self, event: ChatEvent, retry: int | None) -> None:
        if event.id:
            self.last_id = event.id
        self.finished = isinstance(event, Done)
        self.failures = 0
        if retry:
            self.retry_ms = retry

    def broken(self, cause: BaseException | None) -> float:
        """The stream ended early: seconds to wait before resuming, or raises when out of attempts."""
        self.failures += 1
        if self.failures > self.max_attempts:
            raise StreamInterrupted(f"the stream broke {self.failures} times in a row"
                                    f" (last event id {self.last_id})") from cause
        return self.retry_ms / 1000 * self.failures
