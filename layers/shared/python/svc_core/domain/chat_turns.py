"""The chat turn worker's rules: answer one assistant turn of a chat session.

A turn (queued by domain/chat.py as {tenantId, sessionId, messageId}) is taken by marking its
pending assistant message `streaming`; then the model is called with the session's conversation
(the last HISTORY_MESSAGES completed messages, up to this turn's user message) through
`converse_stream`, and every event of the turn is stored in the chat events table, ids
firstEventId, firstEventId + 1, ..., BEFORE anything else can see it (the stream endpoint only
reads the table). Text deltas are coalesced (a write at most every FLUSH_SECONDS or FLUSH_CHARS).
The end is one transaction: the message's final state (content = the concatenated content_delta
texts, usage = the sum of its metered calls), the session's lastEventId, activeTurn removed.

Events, in order (every data has messageId): message_start {role, model, userMessageId, offline},
content_delta {text}, tool_use {toolUseId, name, input} / tool_result {toolUseId, name, status,
result} (agent sessions), usage {...counts, microCredits, estimated}, message_stop {stopReason}
(not after a failure), error {code, message} (after a failure), and done {status} last.

Agent sessions: the agent's system prompt and model; its tools act on the turn's project (none
are offered when the turn has no project) through agent_runs.Toolbox / _run_tools. Tools that
read always run; tools that change something run only for autonomous agents, and are proposed
(not run, the model is told so) for suggest AND supervised agents: a chat turn cannot pause for an
approval, so supervised is treated as suggest. The agent's stepLimit bounds the model calls of a
turn; reaching it while the model still asks for tools ends the turn completed with stopReason
"step_limit" (those last tool requests are not run). Plain sessions make one model call, no tools.

Every model call is metered (svc_core/domain/metering.py, source "message", the assistant message's id).
A model failure (ModelThrottled / ModelUnavailable) ends the turn failed: usage so far, error, done.
The worker knows nothing of clients: the model call runs to its end whoever listens.

Idempotency: a redelivered turn whose message is completed or failed does nothing; one still
pending runs; one `streaming` (taken by a worker) within TURN_LEASE_SECONDS is left alone (the
record is reported failed, so SQS retries it later); one streaming for longer was abandoned by a
crashed worker and is finished from its stored events: as they end if its `done` was stored,
else failed (INTERNAL_ERROR) with the usage its metered calls recorded. It is not continued.
A turn still pending on the queue's last delivery (MAX_RECEIVES: every earlier one failed before
the model was called) is finished failed the same way, so its session is never left stuck.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from svc_core.adapters.models import registry
from svc_core.adapters.models.base import StreamAssembler, billable
from svc_core.data import (
    agents_table,
    chat_events_table,
    chat_messages_table,
    chat_sessions_table,
    projects_table,
    usage_table,
)
from svc_core.data.common import ConditionFailed
from svc_core.domain import agent_runs, agent_tools, metering
from svc_core.domain.chat import empty_usage
from svc_core.domain.fields import agents as agent_fields
from svc_core.platform import log, timeutil
from svc_core.platform.config import settings
from svc_core.platform.errors import ModelThrottled, ModelUnavailable

TURN_LEASE_SECONDS = 300        # = ChatTurnFunction's Timeout: a worker cannot hold a turn longer
MAX_RECEIVES = 3                # = ChatTurnQueue's maxReceiveCount
MAX_STORED_INPUT = 1_000        # characters of one string of a tool's input kept in a tool_use event
HISTORY_MESSAGES = 40           # the most earlier messages sent to the model as the conversation
FLUSH_SECONDS = 0.04
FLUSH_CHARS = 200
STEP_LIMIT = "step_limit"
INTERNAL = {"code": "INTERNAL_ERROR", "message": "The answer failed inside the service."}


class TurnBusy(Exception):
    """Another worker holds this turn now; the queue should bring the message back later."""


# ---- the entry point ---------------------------------------------------------------------------

def process(body: str, receive_count: int = 1) -> str:
    """Answer the turn a queue message names; what was done: answered, skipped, recovered.
    On the queue's last delivery (MAX_RECEIVES) a turn still pending is finished failed rather than
    tried again, so a turn that keeps failing before the model is called never leaves its session stuck."""
    turn = json.loads(body)
    tenant_id, session_id, message_id = turn["tenantId"], turn["sessionId"], turn["messageId"]
    session = chat_sessions_table.get(tenant_id, session_id)
    message = chat_messages_table.get(tenant_id, session_id, message_id) if session else None
    if message is None or message.get("role") != "assistant" or message["status"] in ("completed", "failed"):
        return "skipped"
    if message["status"] == "streaming":
        started = message.get("started_at") or ""
        if started > timeutil.iso(timeutil.now() - TURN_LEASE_SECONDS):
            raise TurnBusy(message_id)
        _recover(tenant_id, session_id, message)
        return "recovered"
    if receive_count >= MAX_RECEIVES:
        _recover(tenant_id, session_id, message)
        return "recovered"
    _Turn(tenant_id, session, message).run()
    return "answered"


# ---- the events of one turn --------------------------------------------------------------------

class _Events:
    """Stores a turn's events with consecutive ids, text deltas coalesced (and secrets redacted)."""

    def __init__(self, tenant_id: str, session_id: str, message_id: str, first_id: int,
                 redact: Callable[[Any], Any], secrets: Callable[[], dict[str, str]]) -> None:
        self.tenant_id, self.session_id, self.message_id = tenant_id, session_id, message_id
        self.next_id = first_id
        self.redact, self.secrets = redact, secrets
        self.pending = ""
        self.flushed_at = 0.0
        self.content = ""            # the text of every content_delta stored, in order

    @property
    def last_id(self) -> int:
        return self.next_id - 1

    def emit(self, event: str, data: dict[str, Any]) -> None:
        self.flush(final=True)
        self._store(event, data)

    def _store(self, event: str, data: dict[str, Any]) -> None:
        chat_events_table.append(self.tenant_id, self.session_id, [
            {"id": self.next_id, "event": event, "data": {"messageId": self.message_id, **data}}])
        self.next_id += 1

    def text(self, piece: str) -> None:
        self.pending += piece
        if len(self.pending) >= FLUSH_CHARS or time.monotonic() - self.flushed_at >= FLUSH_SECONDS:
            self.flush()

    def flush(self, final: bool = False) -> None:
        """Store the pending text as one content_delta. Once a secret was read in the turn, the text is
        redacted first and (unless final) a tail as long as the longest secret waits, so a secret cut
        between two deltas is still caught."""
        if not self.pending:
            return
        text, keep = self.pending, ""
        if self.secrets():
            text = self.redact(text)
            hold = max(len(s) for s in self.secrets()) - 1
            if not final and hold > 0:
                text, keep = text[:-hold], text[-hold:]
        self.pending = keep
        if text:
            self.content += text
            self._store("content_delta", {"text": text})
            self.flushed_at = time.monotonic()


# ---- a turn ------------------------------------------------------------------------------------

def _conversation(tenant_id: str, session_id: str, message: dict[str, Any]) -> list[dict[str, Any]]:
    """The Converse messages of the turn: earlier completed messages up to its user message, same-role
    neighbours merged (a failed answer leaves two user messages in a row), starting with a user one."""
    earlier, _ = chat_messages_table.newest(tenant_id, session_id, HISTORY_MESSAGES + 1, before=message["id"])
    conversation: list[dict[str, Any]] = []
    for record in earlier:
        if record["status"] != "completed" or not record.get("content"):
            continue
        if not conversation and record["role"] != "user":
            continue
        if conversation and conversation[-1]["role"] == record["role"]:
            conversation[-1]["content"].append({"text": record["content"]})
        else:
            conversation.append({"role": record["role"], "content": [{"text": record["content"]}]})
        if record["id"] == message.get("userMessageId"):
            break
    return conversation


def _system_prompt(agent: dict[str, Any], project: dict[str, Any] | None, level: str) -> str:
    where = (f"You are working in the project {project['name']!r} ({project['id']}); use the tools offered "
             "when they help." if project else "No project is attached to this conversation, so no tools are offered.")
    rule = ("Tools that change something run." if level == "autonomous" else
            "Tools that change something are not run here: they are recorded as proposals for the user.")
    return f"{agent['systemPrompt']}\n\nThis is a chat conversation. {where} {rule}"


def _config(agent: dict[str, Any] | None) -> dict[str, Any] | None:
    """The agent's config with its defaults filled in (None for a plain session)."""
    if agent is None:
        return None
    config = agent["config"]
    return {"autonomyLevel": config["autonomyLevel"], "model": config.get("model"),
            "stepLimit": config.get("stepLimit", agent_fields.DEFAULT_STEP_LIMIT),
            "tools": list(config.get("tools", agent_tools.DEFAULT_TOOLS))}


def _clipped(value: Any) -> Any:
    """A tool input as an event shows it: long strings cut (a file's whole content is not repeated)."""
    if isinstance(value, str) and len(value) > MAX_STORED_INPUT:
        return value[:MAX_STORED_INPUT] + f"… [{len(value) - MAX_STORED_INPUT} more characters]"
    if isinstance(value, list):
        return [_clipped(v) for v in value]
    if isinstance(value, dict):
        return {k: _clipped(v) for k, v in value.items()}
    return value


class _Turn:
    def __init__(self, tenant_id: str, session: dict[str, Any], message: dict[str, Any]) -> None:
        self.tenant_id, self.session, self.message = tenant_id, session, message
        self.session_id, self.message_id = session["id"], message["id"]
        self.usage = empty_usage()
        self.agent = agents_table.get(tenant_id, session["agentId"]) if session.get("agentId") else None
        project_id = message.get("projectId")
        self.project = projects_table.get(tenant_id, project_id) if project_id else None
        self.toolbox = agent_runs.Toolbox(tenant_id, self.project or {"id": project_id})
        self.events = _Events(tenant_id, self.session_id, self.message_id, message["firstEventId"],
                              self.toolbox.redact, lambda: self.toolbox.secrets_read)

    def run(self) -> None:
        config = _config(self.agent)
        error, stop_reason, provider = None, None, None
        try:
            metering.require_priced_models(settings())
            provider = registry.provider_for(settings(), config.get("model") if config else None)
        except Exception:  # the agent's model is no longer allowed, or the deployment's settings are wrong
            log.logger.exception("no model for the chat turn", extra={"messageId": self.message_id})
            error = {"code": "INTERNAL_ERROR", "message": "The model of this conversation is not available."}
        model = provider.model_id if provider else (config or {}).get("model") or settings().model_id
        try:
            chat_messages_table.start(self.tenant_id, self.session_id, self.message_id,
                                      timeutil.iso(timeutil.now()), model)
        except ConditionFailed:
            return  # another worker took the turn a moment ago
        self.message["model"] = model
        self._provider, self._started = provider, False
        try:
            if self.session.get("agentId") and self.agent is None:
                error = {"code": "INTERNAL_ERROR", "message": "The session's agent no longer exists."}
            elif provider is not None:
                error, stop_reason = self._converse(provider, config)
        except Exception:
            log.logger.exception("chat turn failed", extra={"messageId": self.message_id})
            error = INTERNAL
        self._end(error, stop_reason)

    def _message_start(self, model: str | None = None) -> None:
        """The turn's first event, once: sent when its first model call has started, so that it names
        the model that answers (after a fallback: the fallback, as the usage records do)."""
        if self._started:
            return
        self._started = True
        self.message["model"] = model or self.message["model"]
        provider = self._provider
        self.events.emit("message_start", {"role": "assistant", "model": self.message["model"],
                                           "userMessageId": self.message.get("userMessageId"),
                                           "offline": bool(provider and provider.name == "offline")})

    def _request(self, config: dict[str, Any] | None) -> tuple[dict[str, Any], list[str], str]:
        request: dict[str, Any] = {"messages": _conversation(self.tenant_id, self.session_id, self.message)}
        allowed: list[str] = []
        level = "suggest"
        if config is not None:
            level = "autonomous" if config["autonomyLevel"] == "autonomous" else "suggest"
            request["system"] = [{"text": _system_prompt(self.agent, self.project, level)}]
            if self.project is not None:
                allowed = list(config["tools"])
        if allowed:
            request["toolConfig"] = {"tools": [agent_tools.tool_spec(name) for name in allowed]}
        return request, allowed, level

    def _converse(self, provider, config: dict[str, Any] | None) -> tuple[dict[str, Any] | None, str | None]:
        """The model calls of the turn (and its tools); (error, stop reason)."""
        request, allowed, level = self._request(config)
        step_limit = config["stepLimit"] if config else 1
        for call in range(step_limit):
            # the texts of successive model calls are one answer: a blank line between them
            separator = "\n\n" if self.events.content or self.events.pending else ""
            try:
                try:
                    stream = provider.converse_stream(request)
                finally:
                    self._message_start(provider.model_id)   # after a fallback: the fallback's
                # after the call: a fallback model's stream is metered as that model (registry.WithFallback)
                assembler = StreamAssembler(provider.model_id, provider.name)
                for event in stream:
                    assembler.add(event)
                    text = event.get("contentBlockDelta", {}).get("delta", {}).get("text")
                    if text:
                        self.events.text(separator + text)
                        separator = ""
                result = assembler.result()
            except (ModelThrottled, ModelUnavailable) as exc:
                received = billable(exc)   # what the provider had counted before the failure is billed
                if received is not None:
                    self._meter(received)
                return agent_runs.model_failure(exc), None
            self._meter(result)
            self.message["model"] = result.model_id   # the model that answered (the last call's), as billed
            request["messages"].append(result.message)
            if result.stop_reason != "tool_use" or not result.tool_uses:
                return None, result.stop_reason
            if call == step_limit - 1:
                return None, STEP_LIMIT
            request["messages"].append({"role": "user", "content": self._tools(result.tool_uses, allowed, level)})
        return None, STEP_LIMIT

    def _meter(self, result) -> None:
        record = metering.record_call(self.tenant_id, "message", self.message_id, result)
        for name in ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "microCredits"):
            self.usage[name] += record[name]
        self.usage["estimated"] = self.usage["estimated"] or bool(record.get("estimated"))

    def _tools(self, tool_uses: list[dict[str, Any]], allowed: list[str], level: str) -> list[dict[str, Any]]:
        """Each requested tool run (or proposed, or refused) with agent_runs' rules; the toolResult blocks."""
        results: list[dict[str, Any]] = []
        record: dict[str, Any] = {"steps": []}
        for use in tool_uses:
            self.events.emit("tool_use", {"toolUseId": use["toolUseId"], "name": use["name"],
                                          "input": self.toolbox.redact(_clipped(use.get("input")))})
            blocks, _ = agent_runs._run_tools([use], allowed, level, self.toolbox, record, [])
            step = record["steps"][-1]
            self.events.emit("tool_result", {"toolUseId": use["toolUseId"], "name": use["name"],
                                             "status": step["status"], "result": self.toolbox.redact(step["result"])})
            results.extend(blocks)
        return results

    def _end(self, error: dict[str, Any] | None, stop_reason: str | None) -> None:
        self._message_start()   # a turn that never called a model still starts
        events = self.events
        events.flush(final=True)
        events.emit("usage", dict(self.usage))
        if error is None:
            events.emit("message_stop", {"stopReason": stop_reason})
        else:
            events.emit("error", dict(error))
        status = "failed" if error else "completed"
        events.emit("done", {"status": status})
        final = {**self.message, "content": events.content, "status": status, "usage": self.usage,
                 "error": error, "lastEventId": events.last_id, "completed_at": timeutil.iso(timeutil.now())}
        _finish(self.tenant_id, self.session_id, final)


def _finish(tenant_id: str, session_id: str, final: dict[str, Any]) -> None:
    try:
        chat_sessions_table.finish_turn(tenant_id, session_id, final, final["lastEventId"],
                                        final["completed_at"])
    except ConditionFailed:  # finished meanwhile by another worker (a recovery): nothing to do
        log.logger.warning("chat turn already finished", extra={"messageId": final["id"]})


# ---- an abandoned turn -------------------------------------------------------------------------

def _stored_events(tenant_id: str, session_id: str, after_id: int) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    while True:
        page = chat_events_table.after(tenant_id, session_id, after_id)
        found.extend(page)
        if len(page) < 200:
            return found
        after_id = page[-1]["id"]


def _recover(tenant_id: str, session_id: str, message: dict[str, Any]) -> None:
    """Finish a turn a crashed worker left `streaming`, from what it stored (it is not continued)."""
    message_id = message["id"]
    stored = [e for e in _stored_events(tenant_id, session_id, message["firstEventId"] - 1)
              if e["data"].get("messageId") == message_id]
    content = "".join(e["data"].get("text", "") for e in stored if e["event"] == "content_delta")
    totals = usage_table.total_for(tenant_id, message_id)
    usage = {**{k: totals[k] for k in ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens",
                                       "microCredits")}, "estimated": totals["estimated"]}
    done = next((e for e in stored if e["event"] == "done"), None)
    last_id = stored[-1]["id"] if stored else message["firstEventId"] - 1
    error = next((e["data"] for e in stored if e["event"] == "error"), None)
    if done is None:
        error = {"code": "INTERNAL_ERROR", "message": "The answer was interrupted inside the service."}
        names = {e["event"] for e in stored}
        tail = [] if names else [("message_start", {
            "role": "assistant", "model": message.get("model") or settings().model_id,
            "userMessageId": message.get("userMessageId"), "offline": settings().model_provider == "offline"})]
        tail += [] if "usage" in names else [("usage", usage)]
        tail += [("error", error), ("done", {"status": "failed"})]
        chat_events_table.append(tenant_id, session_id, [
            {"id": last_id + 1 + i, "event": name, "data": {"messageId": message_id, **data}}
            for i, (name, data) in enumerate(tail)])
        last_id += len(tail)
        status = "failed"
    else:
        status = done["data"]["status"]
    error = {"code": error["code"], "message": error["message"]} if error else None
    final = {**message, "content": content, "status": status, "usage": usage, "error": error,
             "lastEventId": last_id, "completed_at": timeutil.iso(timeutil.now())}
    _finish(tenant_id, session_id, final)
