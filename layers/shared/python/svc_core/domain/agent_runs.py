"""Agent runs: an agent working on a goal in one project, synchronously, through the model's tool loop.

The loop (Converse shapes, svc_core/models): the agent's system prompt (plus what the service tells
the model about the run) and the goal as the first user message; the agent's allowed tools offered
as toolSpecs; each answer that asks for tools (stop reason tool_use) has its toolUse blocks run and
their toolResults sent back, until the model ends its turn or the agent's stepLimit (the most model
calls of one run) is reached. Every model call is metered (svc_core/metering.py, source "run").

Autonomy (config.autonomyLevel), for tools that change something (agent_tools: write_file):
- suggest: never run; the model is told the change was not applied, and the change is recorded as
  proposed (a step with status "proposed", and a list at the end of the output);
- supervised: the run stops at the first one, in status awaiting_approval (the step says which call
  waits); approving or rejecting that call is not served yet;
- autonomous: run.
Tools that only read always run.

Outcomes:
- the model ends its turn: completed, output = its last text (+ the proposals in suggest mode);
- the step limit is reached while the model still asks for tools: failed, error STEP_LIMIT_REACHED
  (the goal was not reached; the output keeps the model's last text and the steps show the work);
- the model fails (ModelThrottled / ModelUnavailable): failed, error {code, message}; the calls
  made so far stay metered;
- a tool call with input that does not fit its schema, or that fails (no such file, no such
  secret, a path not allowed): the model gets an error toolResult and the loop goes on.

Secrets: read_secret gives the value to the model only. The run keeps "[secret <name> read]" as the
step's result, and every value read in the run is replaced by "[secret <name>]" wherever it would
be stored or answered (model text, tool inputs, output, error).

The start is stored with agent.started, the end with agent.completed or agent.failed (one
transaction each, with the outbox); a run that stops awaiting approval emits no event yet.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Callable, Literal

from pydantic import AfterValidator, BaseModel, Field, StringConstraints

from svc_core import agent_tools, events, ids, metering, sealing, timeutil
from svc_core.config import settings
from svc_core.context import TenantContext
from svc_core.data import agents_table, projects_table, runs_table
from svc_core.domain import agents, projects, tenant_secrets
from svc_core.schemas import unicode_text
from svc_core.domain.paging import check_cursor, page
from svc_core.errors import ModelThrottled, ModelUnavailable, NotFound, ValidationFailed
from svc_core.models import registry
from svc_core.schemas import VISIBLE, RequestBody

PREFIX = "run"
MAX_GOAL = 20_000
MAX_STORED_TEXT = 4_000        # characters of one step's model text kept in the run
MAX_STORED_INPUT = 1_000       # characters of one tool input string kept in the run
MAX_TOOL_TEXT = 2_000          # characters of a tool's result kept in the run (the model gets all)
STATUSES = ("running", "awaiting_approval", "completed", "failed")
STEP_LIMIT_REACHED = "STEP_LIMIT_REACHED"
_PATH_SEGMENT = re.compile(r"^[^\x00-\x1f\x7f\\]+$")

Goal = Annotated[str, StringConstraints(min_length=1, max_length=MAX_GOAL, pattern=VISIBLE),
                 AfterValidator(unicode_text)]


class RunCreate(RequestBody):
    goal: Goal = Field(description=f"what the agent should do, 1 to {MAX_GOAL:,} characters, at least one visible")
    projectId: Annotated[str, StringConstraints(min_length=1, max_length=64)] = Field(
        description="the tenant's project the run works in (its files are the tools' files)",
        examples=["proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])


class RunUsage(BaseModel):
    inputTokens: int
    outputTokens: int
    microCredits: int = Field(description="the sum of the run's metered model calls")


class RunError(BaseModel):
    code: str = Field(description="MODEL_THROTTLED, MODEL_UNAVAILABLE, STEP_LIMIT_REACHED or INTERNAL_ERROR")
    message: str


class Run(BaseModel):
    id: str = Field(examples=["run_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
    agentId: str
    projectId: str
    goal: str
    status: Literal[STATUSES]  # type: ignore[valid-type]
    output: str | None = Field(description="the model's final text (suggest mode: with the proposed changes)")
    steps: list[dict[str, Any]] = Field(description=(
        "in order: {type: model, text, toolUses [{toolUseId, name, input}], stopReason, usage, at} and "
        "{type: tool, toolUseId, name, input, status (success, error, proposed, awaiting_approval), "
        "result, at}; a secret's value never appears"))
    usage: RunUsage
    model: str
    created_at: str = Field(description="ISO 8601 UTC")
    completed_at: str | None = Field(description="ISO 8601 UTC; null while running or awaiting approval")
    error: RunError | None


class RunPage(BaseModel):
    items: list[Run]
    nextCursor: str | None


# ---- views and storage -----------------------------------------------------------------------

def _view(record: dict[str, Any]) -> dict[str, Any]:
    return {name: record.get(name) for name in
            ("id", "agentId", "projectId", "goal", "status", "output", "steps", "usage", "model",
             "created_at", "completed_at", "error")}


def _event_data(run: dict[str, Any]) -> dict[str, Any]:
    data = {"runId": run["id"], "agentId": run["agentId"], "projectId": run["projectId"],
            "status": run["status"], "model": run["model"], "usage": run["usage"],
            "created_at": run["created_at"], "completed_at": run.get("completed_at")}
    if run["status"] == "completed":
        data["output"] = (run.get("output") or "")[:MAX_STORED_TEXT]
    if run.get("error"):
        data["error"] = run["error"]
    return data


def _run_not_found(run_id: str) -> NotFound:
    return NotFound("The run does not exist.", {"id": run_id, "resource": "run"})


def get_run(ctx: TenantContext, agent_id: str, run_id: str, agent_store=agents_table,
            store=runs_table) -> dict[str, Any]:
    agents.get_agent(ctx, agent_id, agent_store)
    record = store.get(ctx.tenant_id, run_id) if ids.is_id(run_id, PREFIX) else None
    if record is None or record.get("agentId") != agent_id:
        raise _run_not_found(run_id)
    return _view(record)


def list_runs(ctx: TenantContext, agent_id: str, limit: int, cursor: str | None, agent_store=agents_table,
              store=runs_table) -> dict[str, Any]:
    agents.get_agent(ctx, agent_id, agent_store)
    check_cursor(cursor, lambda after: ids.is_id(after, PREFIX))
    items, next_cursor = store.list_for_agent(ctx.tenant_id, agent_id, limit, cursor)
    return page([_view(i) for i in items], next_cursor)


# ---- the tools ---------------------------------------------------------------------------------

class ToolFailed(Exception):
    """The tool could not do what was asked (the model gets the message as an error result)."""


def check_path(path: str) -> str:
    """A project file's path: relative, '/' between segments, no '.' or '..' segment, ≤ 256 characters."""
    if not path or len(path) > agent_tools.MAX_PATH:
        raise ToolFailed(f"the path must be 1 to {agent_tools.MAX_PATH} characters")
    if path.startswith("/"):
        raise ToolFailed("the path must be relative (no leading '/')")
    for segment in path.split("/"):
        if segment in ("", ".", ".."):
            raise ToolFailed("the path may not have an empty, '.' or '..' segment")
        if not _PATH_SEGMENT.match(segment):
            raise ToolFailed("the path may not hold control characters or '\\'")
    return path


class Toolbox:
    """What the tools act on: one project of one tenant. The stores are the data modules by default."""

    def __init__(self, tenant_id: str, project: dict[str, Any], files=None,
                 reveal: Callable[[str, str], str] = tenant_secrets.reveal) -> None:
        if files is None:
            from svc_core.data import project_files_bucket as files
        self.tenant_id, self.project, self.files, self.reveal = tenant_id, project, files, reveal
        self.secrets_read: dict[str, str] = {}   # value -> name, for redaction

    def run(self, name: str, arguments: dict[str, Any]) -> tuple[str, str]:
        """(text for the model, text for the run record)."""
        return getattr(self, f"_{name}")(**arguments)

    def _read_project(self) -> tuple[str, str]:
        text = json.dumps({k: self.project.get(k) for k in ("id", "name", "description", "language")})
        return text, text

    def _list_files(self, prefix: str = "") -> tuple[str, str]:
        files, cut = self.files.list_files(self.tenant_id, self.project["id"], prefix)
        text = json.dumps({"files": files, "truncated": cut})
        return text, text

    def _read_file(self, path: str) -> tuple[str, str]:
        content = self.files.get(self.tenant_id, self.project["id"], check_path(path))
        if content is None:
            raise ToolFailed(f"the project has no file {path!r}")
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolFailed(f"{path!r} is not UTF-8 text") from None
        return text, f"read {path} ({len(content)} bytes)"

    def _write_file(self, path: str, content: str) -> tuple[str, str]:
        data = _encoded(content)
        self.files.put(self.tenant_id, self.project["id"], check_path(path), data)
        return f"wrote {path} ({len(data)} bytes)", f"wrote {path} ({len(data)} bytes)"

    def _read_secret(self, name: str) -> tuple[str, str]:
        try:
            value = self.reveal(self.tenant_id, name)
        except NotFound:
            raise ToolFailed(f"the tenant has no secret named {name!r}") from None
        except sealing.Unsealable:
            raise ToolFailed(f"the secret {name!r} could not be opened") from None
        self.secrets_read[value] = name
        return value, f"[secret {name} read]"

    def redact(self, value: Any) -> Any:
        """The value with every secret read in this run replaced by "[secret <name>]"."""
        if not self.secrets_read:
            return value
        if isinstance(value, str):
            for secret, name in sorted(self.secrets_read.items(), key=lambda kv: -len(kv[0])):
                value = value.replace(secret, f"[secret {name}]")
            return value
        if isinstance(value, list):
            return [self.redact(v) for v in value]
        if isinstance(value, dict):
            return {k: self.redact(v) for k, v in value.items()}
        return value


def _encoded(content: str) -> bytes:
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolFailed("the content must be Unicode text") from None
    if len(data) > agent_tools.MAX_FILE_BYTES:
        raise ToolFailed(f"a file may hold at most {agent_tools.MAX_FILE_BYTES} bytes (this is {len(data)})")
    return data


def _storable(value: Any, limit: int = MAX_STORED_INPUT) -> Any:
    """A model-given value as the run can store it (no floats in DynamoDB; long strings cut)."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + f"… [{len(value) - limit} more characters]"
    if isinstance(value, bool) or isinstance(value, int) or value is None:
        return value
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return [_storable(v, limit) for v in value]
    if isinstance(value, dict):
        return {str(k): _storable(v, limit) for k, v in value.items()}
    return str(value)


# ---- the loop ----------------------------------------------------------------------------------

def _system_prompt(agent: dict[str, Any], project: dict[str, Any]) -> str:
    level = agent["config"]["autonomyLevel"]
    return (f"{agent['systemPrompt']}\n\n"
            f"You are working in the project {project['name']!r} ({project['id']}). "
            f"Autonomy level: {level} ({agents.AUTONOMY_LEVELS[level]}). "
            "Use the tools offered when they help; answer with the result when the goal is reached.")


def _model_step(result, usage: dict[str, int], at: str) -> dict[str, Any]:
    return {"type": "model", "text": _storable(result.text, MAX_STORED_TEXT),
            "toolUses": [{"toolUseId": u["toolUseId"], "name": u["name"], "input": _storable(u.get("input"))}
                         for u in result.tool_uses],
            "stopReason": result.stop_reason, "usage": usage, "at": at}


def execute(ctx: TenantContext, agent_id: str, body: RunCreate, *, agent_store=agents_table,
            project_store=projects_table, store=runs_table, files=None, reveal: Callable[[str, str], str] = tenant_secrets.reveal,
            meter: Callable[..., dict[str, Any]] = metering.record_call) -> dict[str, Any]:
    agent = agents.get_agent(ctx, agent_id, agent_store)
    try:  # the path names the agent (404); the body's project is an input, refused as one (400)
        project = projects.get_project(ctx, body.projectId, project_store)
    except NotFound:
        raise ValidationFailed("No such project in this tenant.", {"fields": [
            {"field": "projectId", "in": "body", "reason": "no such project"}], "id": body.projectId,
            "resource": "project"}) from None
    config = agent["config"]
    provider = registry.provider_for(settings(), config.get("model"))
    tenant_id = ctx.tenant_id
    now = timeutil.now()
    run: dict[str, Any] = {
        "id": ids.new_id(PREFIX), "agentId": agent["id"], "projectId": project["id"], "goal": body.goal,
        "status": "running", "output": None, "steps": [],
        "usage": {"inputTokens": 0, "outputTokens": 0, "microCredits": 0}, "model": provider.model_id,
        "created_at": timeutil.iso(now), "completed_at": None, "error": None}
    store.start(tenant_id, run, events.new_event("agent.started", tenant_id, _event_data(run)), now)

    toolbox = Toolbox(tenant_id, project, files, reveal)
    allowed = list(config["tools"])
    request: dict[str, Any] = {"system": [{"text": _system_prompt(agent, project)}],
                               "messages": [{"role": "user", "content": [{"text": body.goal}]}]}
    if allowed:
        request["toolConfig"] = {"tools": [agent_tools.tool_spec(name) for name in allowed]}
    level = config["autonomyLevel"]
    proposals: list[str] = []
    last_text = ""
    try:
        for call in range(config["stepLimit"]):
            try:
                result = provider.converse(request)
            except (ModelThrottled, ModelUnavailable) as exc:
                run["error"] = {"code": exc.code, "message": exc.message}
                break
            record = meter(tenant_id, "run", run["id"], result)
            call_usage = {"inputTokens": record["inputTokens"], "outputTokens": record["outputTokens"],
                          "microCredits": record["microCredits"]}
            for name, value in call_usage.items():
                run["usage"][name] += value
            run["steps"].append(_model_step(result, call_usage, timeutil.iso(timeutil.now())))
            last_text = result.text
            request["messages"].append(result.message)
            if result.stop_reason != "tool_use" or not result.tool_uses:
                break
            if call == config["stepLimit"] - 1:
                run["error"] = {"code": STEP_LIMIT_REACHED, "message": (
                    f"The agent's step limit ({config['stepLimit']} model calls) was reached before the "
                    "model finished; its last tool requests were not run.")}
                break
            results, paused = _run_tools(result.tool_uses, allowed, level, toolbox, run, proposals)
            if paused:
                run["status"] = "awaiting_approval"
                break
            request["messages"].append({"role": "user", "content": results})
    except Exception:
        run["error"] = {"code": "INTERNAL_ERROR", "message": "The run failed inside the service."}
        _finish(tenant_id, run, toolbox, last_text, proposals, store)
        raise
    return _finish(tenant_id, run, toolbox, last_text, proposals, store)


def _run_tools(tool_uses: list[dict[str, Any]], allowed: list[str], level: str, toolbox: Toolbox,
               run: dict[str, Any], proposals: list[str]) -> tuple[list[dict[str, Any]], bool]:
    """Run (or propose, or hold) each requested tool; (the toolResult blocks, whether the run pauses)."""
    results: list[dict[str, Any]] = []
    for use in tool_uses:
        name, arguments = use["name"], use.get("input")
        step: dict[str, Any] = {"type": "tool", "toolUseId": use["toolUseId"], "name": name,
                                "input": _storable(arguments)}
        model_text, status = "", "success"
        if name not in allowed:
            model_text, status = f"There is no tool named {name!r} for this agent.", "error"
            step["result"] = model_text
        elif problems := agent_tools.input_errors(name, arguments):
            model_text, status = "Invalid input: " + "; ".join(problems) + ".", "error"
            step["result"] = model_text
        elif agent_tools.changes_something(name) and level == "supervised":
            step.update(status="awaiting_approval", result="not run: waiting for approval",
                        at=timeutil.iso(timeutil.now()))
            run["steps"].append(step)
            return results, True
        elif agent_tools.changes_something(name) and level == "suggest":
            proposal = _proposal(name, arguments)
            proposals.append(proposal)
            model_text = (f"Not applied: this agent only suggests changes. The change ({proposal}) was "
                          "recorded as a proposal for the user to review.")
            status, step["result"] = "proposed", proposal
        else:
            try:
                model_text, step["result"] = toolbox.run(name, arguments)
            except ToolFailed as exc:
                model_text, status = f"The tool failed: {exc}", "error"
                step["result"] = model_text
        step["result"] = _storable(step["result"], MAX_TOOL_TEXT)
        step.update(status=status, at=timeutil.iso(timeutil.now()))
        run["steps"].append(step)
        results.append({"toolResult": {"toolUseId": use["toolUseId"], "content": [{"text": model_text}],
                                       "status": "error" if status == "error" else "success"}})
    return results, False


def _proposal(name: str, arguments: dict[str, Any]) -> str:
    if name == "write_file":
        size = len(str(arguments.get("content", "")).encode("utf-8", "replace"))
        return f"write_file {arguments.get('path')} ({size} bytes)"
    return f"{name} {json.dumps(arguments, sort_keys=True)[:200]}"


def _finish(tenant_id: str, run: dict[str, Any], toolbox: Toolbox, last_text: str,
            proposals: list[str], store) -> dict[str, Any]:
    output = last_text
    if proposals:
        output = (output + "\n\n" if output else "") + "Proposed changes (not applied):\n" + "\n".join(
            f"- {p}" for p in proposals)
    run["output"] = _storable(output, MAX_STORED_TEXT * 4) if output else None
    event_type = None
    if run["status"] != "awaiting_approval":
        run["status"] = "failed" if run["error"] else "completed"
        event_type = "agent.failed" if run["error"] else "agent.completed"
    now = timeutil.now()
    if run["status"] in ("completed", "failed"):
        run["completed_at"] = timeutil.iso(now)
    stored = {**run, "output": toolbox.redact(run["output"]), "steps": toolbox.redact(run["steps"]),
              "error": toolbox.redact(run["error"])}
    event = events.new_event(event_type, tenant_id, _event_data(stored)) if event_type else None
    store.finish(tenant_id, stored, event, now)
    return _view(stored)


__all__ = ["Run", "RunCreate", "RunPage", "execute", "get_run", "list_runs"]
