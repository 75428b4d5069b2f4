"""Chat's request and response models, the session stream's among them (svc_core/domain/models says
why they live apart)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field, StringConstraints

from svc_core.domain import agents, projects
from svc_core.domain.fields.chat import EVENT_ID_PATTERN, MAX_CONTENT, MAX_TITLE, MESSAGE_STATUSES, MESSAGES_SHOWN
from svc_core.domain.models.common import Deleted, Page, named
from svc_core.domain.models.request_body import VISIBLE, RequestBody, id_of, name_text, unicode_text

ProjectId = id_of(projects.PREFIX)
AgentId = id_of(agents.PREFIX)

Title = name_text(MAX_TITLE)
Content = Annotated[str, StringConstraints(min_length=1, max_length=MAX_CONTENT, pattern=VISIBLE),
                    AfterValidator(unicode_text)]


class ChatSessionCreate(RequestBody):
    title: Title | None = Field(None, description=f"1 to {MAX_TITLE} characters, at least one visible; "
                                                   "trimmed; null or left out: no title")
    projectId: ProjectId | None = Field(None, description="the tenant's project the session works on (an agent's "
                                                         "tools act on it); null or left out: none",
                                       examples=["proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
    agentId: AgentId | None = Field(None, description="the tenant's agent that answers (its system prompt and "
                                                       "tools); null or left out: the plain model",
                                     examples=["agt_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])


class ChatMessageCreate(RequestBody):
    content: Content = Field(description=f"the user's message, 1 to {MAX_CONTENT:,} characters, at least one visible")
    projectId: ProjectId | None = Field(None, description="the tenant's project for this turn (overrides the "
                                                         "session's); null or left out: the session's")


class ChatTurnRef(BaseModel):
    messageId: str = Field(description="the assistant message of the turn")
    firstEventId: int = Field(description="the id of the turn's first stream event")


class ChatSession(BaseModel):
    id: str = Field(examples=["chs_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
    title: str | None
    projectId: str | None
    agentId: str | None
    lastEventId: int = Field(description="the id of the session's last stored stream event of a finished turn; 0: none")
    activeTurn: ChatTurnRef | None = Field(description="the assistant turn in progress; null: none")
    latestTurn: ChatTurnRef | None = Field(description="the newest assistant turn; null: none yet")
    created_at: str = Field(description="ISO 8601 UTC")
    updated_at: str = Field(description="ISO 8601 UTC")


class ChatUsage(BaseModel):
    inputTokens: int
    outputTokens: int
    cacheReadTokens: int
    cacheWriteTokens: int
    microCredits: int = Field(description="the sum of the message's metered model calls")
    estimated: bool = Field(description="true: counted by the offline model's estimate")


class ChatError(BaseModel):
    code: str = Field(description="MODEL_THROTTLED, MODEL_UNAVAILABLE or INTERNAL_ERROR")
    message: str
    retryAfterSeconds: int | None = Field(
        default=None, description="MODEL_THROTTLED only: the seconds the model provider asked to wait "
                                  "(its Retry-After, at most 60; 10 when it said none)")


class ChatMessage(BaseModel):
    id: str = Field(examples=["msg_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
    role: Literal["user", "assistant"]
    content: str = Field(description="assistant: the whole answer once completed (its text so far while pending "
                                     "or streaming is only on the stream)")
    status: Literal[MESSAGE_STATUSES]  # type: ignore[valid-type]
    projectId: str | None = Field(description="the project of the turn")
    userMessageId: str | None = Field(description="assistant: the user message it answers; user: null")
    model: str | None = Field(description="assistant: the model that answers")
    usage: ChatUsage | None = Field(description="assistant: the turn's usage (the sum of its model calls); "
                                                "user: null")
    error: ChatError | None
    firstEventId: int | None = Field(description="assistant: the id of the turn's first stream event")
    lastEventId: int | None = Field(description="assistant: the id of its last stream event, once finished")
    created_at: str = Field(description="ISO 8601 UTC")
    completed_at: str | None = Field(description="ISO 8601 UTC; null while pending or streaming")


class ChatSessionDetail(ChatSession):
    messages: list[ChatMessage] = Field(description=f"the newest {MESSAGES_SHOWN} messages, oldest first")
    messagesTruncated: bool = Field(description=f"true: the session has more than {MESSAGES_SHOWN} messages "
                                                "and the older ones are not shown")


ChatSessionPage = named("ChatSessionPage", Page[ChatSession])
ChatMessagePage = named("ChatMessagePage", Page[ChatMessage])
ChatSessionDeleted = named("ChatSessionDeleted", Deleted)


class ChatTurnStarted(BaseModel):
    userMessage: ChatMessage
    assistantMessage: ChatMessage = Field(description="status pending: the worker answers it")
    streamUrl: str = Field(description="the path of the session's stream (Server-Sent Events)")


# ---- the session stream -------------------------------------------------------------------

class ChatStreamEvent(BaseModel):
    """One Server-Sent Event of the stream, as a client's parser reads it (fields id, event, data, retry)."""
    id: str | None = Field(default=None, pattern=EVENT_ID_PATTERN,
                           description="the event's id, increasing per session (absent on a stream failure's error)")
    event: Literal["message_start", "content_delta", "tool_use", "tool_result", "usage", "message_stop",
                   "error", "done"] | None = Field(default=None, description="the event's name")
    data: str = Field(description="the event's data: a JSON object with messageId")
    retry: int | None = Field(default=None, description="milliseconds before a reconnect (sent once, first)")


class ChatStreamToken(BaseModel):
    token: str = Field(description="Pass as ?token= on the stream URL only; it is refused everywhere else")
    expires_at: str = Field(description="ISO 8601 UTC; at most 5 minutes from now")
    streamUrl: str = Field(description="The session's stream URL with this token, ready for new EventSource(url)")
