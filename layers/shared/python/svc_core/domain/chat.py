"""Chat sessions: a tenant's conversations with the model (optionally as one of its agents, on one of
its projects), their messages, and the start of each assistant turn.

A turn: POST messages stores the user message and a pending assistant message and makes that turn
the session's activeTurn and latestTurn ({messageId, firstEventId = lastEventId + 1}), in one
transaction that holds only while no turn is active (else 409 CONFLICT); then it queues the turn
(one SQS message {tenantId, sessionId, messageId}) for the chat turn worker (domain/chat_turns.py),
which calls the model and stores the turn's events (data/chat_events_table.py) for the stream. If
the turn cannot be queued, the transaction is taken back (both messages removed, the session as it
was) and the request fails: nothing half-written, no session stuck with an active turn. A tenant
whose credit balance is used up is refused (402) before anything is stored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svc_core.auth.context import TenantContext
from svc_core.data import (
    agents_table,
    chat_events_table,
    chat_messages_table,
    chat_sessions_table,
    chat_turn_queue,
    projects_table,
)
from svc_core.data.common import ConditionFailed
from svc_core.domain import projects
from svc_core.domain.fields.chat import MESSAGES_SHOWN
from svc_core.domain.paging import tenant_list_page
from svc_core.domain.references import referenced
from svc_core.platform import ids, log, timeutil
from svc_core.platform.errors import Conflict, InternalError, NotFound

if TYPE_CHECKING:
    from svc_core.domain.models.chat import ChatMessageCreate, ChatSessionCreate

PREFIX = "chs"
MESSAGE_PREFIX = "msg"


# ---- views -------------------------------------------------------------------------------------

SESSION_FIELDS = ("id", "title", "projectId", "agentId", "lastEventId", "activeTurn", "latestTurn",
                  "created_at", "updated_at")
MESSAGE_FIELDS = ("id", "role", "content", "status", "projectId", "userMessageId", "model", "usage", "error",
                  "firstEventId", "lastEventId", "created_at", "completed_at")


def session_view(record: dict[str, Any]) -> dict[str, Any]:
    return {name: record.get(name) for name in SESSION_FIELDS}


def message_view(record: dict[str, Any]) -> dict[str, Any]:
    return {name: record.get(name) for name in MESSAGE_FIELDS}


def stream_path(session_id: str) -> str:
    return f"/api/v1/chat/sessions/{session_id}/stream"


def empty_usage(estimated: bool = False) -> dict[str, Any]:
    return {"inputTokens": 0, "outputTokens": 0, "cacheReadTokens": 0, "cacheWriteTokens": 0, "microCredits": 0,
            "estimated": estimated}


# ---- sessions ----------------------------------------------------------------------------------

def _not_found(session_id: str) -> NotFound:
    return NotFound("The chat session does not exist.", {"id": session_id, "resource": "chat_session"})


def get_session(ctx: TenantContext, session_id: str, store=chat_sessions_table) -> dict[str, Any]:
    """The stored session (lastEventId int, activeTurn/latestTurn dict or None), or NotFound when it
    is absent, the id is malformed, or it is another tenant's."""
    record = store.get(ctx.tenant_id, session_id) if ids.is_id(session_id, PREFIX) else None
    if record is None:
        raise _not_found(session_id)
    return record


def create_session(ctx: TenantContext, body: ChatSessionCreate, store=chat_sessions_table,
                   project_store=projects_table, agent_store=agents_table) -> dict[str, Any]:
    if body.projectId is not None:
        referenced(projects.get_project, ctx, body.projectId, "projectId", "project", project_store)
    if body.agentId is not None:
        # On use: a session's reads (its list, its stream) need neither the agents' model registry nor
        # the credit ledger, whose imports are a tenth of the chat stream's start-up.
        from svc_core.domain import agents
        referenced(agents.get_agent, ctx, body.agentId, "agentId", "agent", agent_store)
    stamp = timeutil.iso(timeutil.now())
    record = {"id": ids.new_id(PREFIX), "title": body.title, "projectId": body.projectId, "agentId": body.agentId,
              "lastEventId": 0, "activeTurn": None, "latestTurn": None, "created_at": stamp, "updated_at": stamp}
    view = session_view(record)
    store.create(ctx.tenant_id, record, answer=view)
    return view


def list_sessions(ctx: TenantContext, limit: int, cursor: str | None, store=chat_sessions_table) -> dict[str, Any]:
    return tenant_list_page(store, ctx.tenant_id, limit, cursor, id_prefix=PREFIX, view=session_view)


def read_session(ctx: TenantContext, session_id: str, store=chat_sessions_table,
                 message_store=chat_messages_table) -> dict[str, Any]:
    session = get_session(ctx, session_id, store)
    messages, more = message_store.newest(ctx.tenant_id, session["id"], MESSAGES_SHOWN)
    return {**session_view(session), "messages": [message_view(m) for m in messages], "messagesTruncated": more}


def delete_session(ctx: TenantContext, session_id: str, store=chat_sessions_table) -> dict[str, Any]:
    session = get_session(ctx, session_id, store)
    try:
        store.delete(ctx.tenant_id, session["id"])
    except ConditionFailed:
        raise Conflict("The session has a turn in progress; delete it once the turn has ended.",
                       {"id": session_id, "resource": "chat_session"}) from None
    return {"id": session["id"], "deleted": True}


def forget_session(tenant_id: str, session_id: str, messages=chat_messages_table, events=chat_events_table
                   ) -> dict[str, int]:
    """After a session's deletion (its table's stream says so): delete its messages and stream events.
    Deleting is idempotent, so a record handed over again does no harm."""
    return {"messages": messages.delete_all(tenant_id, session_id), "events": events.delete_all(tenant_id, session_id)}


# ---- turns -------------------------------------------------------------------------------------

def _turn_conflict(session_id: str) -> Conflict:
    return Conflict("The session already has a turn in progress; send the next message once it has ended.",
                    {"id": session_id, "resource": "chat_session"})


def send_message(ctx: TenantContext, session_id: str, body: ChatMessageCreate, *, store=chat_sessions_table,
                 project_store=projects_table, queue=chat_turn_queue) -> dict[str, Any]:
    session = get_session(ctx, session_id, store)
    project_id = session.get("projectId")
    if body.projectId is not None:
        project_id = referenced(projects.get_project, ctx, body.projectId, "projectId", "project",
                                     project_store)["id"]
    if session.get("activeTurn"):
        raise _turn_conflict(session_id)
    from svc_core.domain import metering  # on use (create_session says why)
    metering.require_credit(ctx.tenant_id)   # 402 before anything is stored: the turn would call the model
    now = timeutil.now()
    stamp = timeutil.iso(now)
    user_id = ids.new_id(MESSAGE_PREFIX)
    assistant_id = ids.new_id(MESSAGE_PREFIX)
    if assistant_id <= user_id:   # same millisecond: the random part decides; the answer must sort after
        assistant_id = ids.new_id(MESSAGE_PREFIX)
        while assistant_id <= user_id:
            assistant_id = ids.new_id(MESSAGE_PREFIX)
    turn = {"messageId": assistant_id, "firstEventId": session["lastEventId"] + 1}
    user_message = {"id": user_id, "role": "user", "content": body.content, "status": "completed",
                    "projectId": project_id, "created_at": stamp, "completed_at": stamp}
    assistant_message = {"id": assistant_id, "role": "assistant", "content": "", "status": "pending",
                         "projectId": project_id, "userMessageId": user_id, "usage": empty_usage(),
                         "firstEventId": turn["firstEventId"], "created_at": stamp}
    try:
        store.start_turn(ctx.tenant_id, session["id"], user_message, assistant_message, turn,
                         session["lastEventId"], stamp)
    except ConditionFailed:
        raise _turn_conflict(session_id) from None
    try:
        queue.send(ctx.tenant_id, session["id"], assistant_id)
    except Exception:
        log.logger.exception("chat turn not queued; taking the turn back")
        store.undo_turn(ctx.tenant_id, session["id"], user_id, assistant_id, session)
        raise InternalError("The answer could not be started; nothing was stored. Send the message again.") from None
    return {"userMessage": message_view(user_message), "assistantMessage": message_view(assistant_message),
            "streamUrl": stream_path(session["id"])}


__all__ = ["create_session", "delete_session", "get_session", "list_sessions", "read_session", "send_message"]
