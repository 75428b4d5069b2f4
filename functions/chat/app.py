"""Chat: sessions, their messages, and the start of each assistant turn (answered by the chat turn
worker, functions/chat_turns, and streamed by the session's stream endpoint)."""

from __future__ import annotations  # the models are named lazily (svc_core/domain/models)

from typing import Annotated

from svc_core.domain import chat, chat_stream
from svc_core.domain.fields import chat as chat_fields
from svc_core.domain.paging import DEFAULT_LIMIT, MAX_LIMIT
from svc_core.http import idempotency
from svc_core.http.api import Api
from svc_core.http.params import IdCursor, Query
from svc_core.platform.lazy import lazy_module

models = lazy_module("svc_core.domain.models.chat")
api = Api()
TAGS = ["Chat"]


@api.get("/api/v1/chat/sessions", scope="chat:read", response_model="models.ChatSessionPage", tags=TAGS,
         summary="List the tenant's chat sessions, newest first")
def list_chat_sessions(limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
                       cursor: IdCursor = None):
    return chat.list_sessions(api.tenant_context(), limit, cursor)


@api.post("/api/v1/chat/sessions", scope="chat:write", status=201, response_model="models.ChatSession", tags=TAGS,
          errors=idempotency.ERRORS, description=idempotency.DESCRIPTION.strip(),
          summary="Start a chat session (optionally with one of the tenant's agents, on one of its projects)")
def create_chat_session(body: models.ChatSessionCreate, idempotency_key: idempotency.IdempotencyKey = None):
    return idempotency.run(api, "chat_session.create", idempotency_key, body.model_dump(mode="json"),
                           lambda: chat.create_session(api.tenant_context(), body))


@api.get("/api/v1/chat/sessions/{id}", scope="chat:read", response_model="models.ChatSessionDetail", tags=TAGS,
         summary=f"Read one chat session with its newest {chat_fields.MESSAGES_SHOWN} messages")
def get_chat_session(id: str):
    return chat.read_session(api.tenant_context(), id)


@api.delete("/api/v1/chat/sessions/{id}", scope="chat:write", response_model="models.ChatSessionDeleted", tags=TAGS,
            errors=(409,), summary="Delete a chat session (not while a turn is in progress)")
def delete_chat_session(id: str):
    return chat.delete_session(api.tenant_context(), id)


@api.post("/api/v1/chat/sessions/{id}/messages", scope="chat:write", status=202, response_model="models.ChatTurnStarted",
          tags=TAGS, errors=(402, 409),
          summary="Send a message: stores it and starts the assistant's answer (follow it on streamUrl)")
def send_chat_message(id: str, body: models.ChatMessageCreate):
    return chat.send_message(api.tenant_context(), id, body)


@api.post("/api/v1/chat/sessions/{id}/stream-token", scope=chat_stream.STREAM_SCOPE, status=201,
          response_model="models.ChatStreamToken", tags=TAGS,
          summary="A short-lived token for this session's stream URL (EventSource cannot send Authorization)",
          description="The token goes in the stream URL's query string (?token=), so it lives 5 minutes at most, "
                      "is good for this session's stream only and for nothing else; reusable within its life "
                      "(EventSource reconnects reuse the URL).")
def issue_stream_token(id: str):
    return chat_stream.issue_stream_token(api.tenant_context(), id, api.public_base_url())


api.snapstart()  # SnapStart's hooks (svc_core/platform/snapshot.py); a no-op outside Lambda
lambda_handler = api.handler
