"""Agent runs: an agent working on a goal in one project, through the model's tool loop; a run can
pause for approval, go on in the background, and be cancelled.

The loop (Converse shapes, svc_core/adapters/models): the agent's system prompt (plus what the service tells
the model about the run) and the goal as the first user message; the agent's allowed tools offered
as toolSpecs; each answer that asks for tools (stop reason tool_use) has its toolUse blocks run and
their toolResults sent back, until the model ends its turn or the agent's stepLimit (the most model
calls of one run) is reached. Every model call is metered (svc_core/domain/metering.py, source "run").

Autonomy (config.autonomyLevel), for tools that change something (agent_tools: write_file):
- suggest: never run; the model is told the change was not applied, and the change is recorded as
  proposed (a step with status "proposed", and a list at the end of the output);
- supervised: the run stops at the first one, in status awaiting_approval (the step says which call
  waits); approve runs it, reject answers the model "rejected by the user: <reason>" as an error
  toolResult, and the loop goes on (the other tool calls of that answer too, each changing one held
  again);
- autonomous: run.
Tools that only read always run.

Statuses and who moves a run between them (each move one write conditional on the run's version,
svc_core/data/runs_table.py, so of two concurrent moves exactly one wins):
    queued            -> running (the worker claims it)                      | cancelled (cancel)
    running           -> completed | failed | awaiting_approval (the loop)
                       | running with nobody holding it (a budget reached: handed to the worker)
                       | cancelled (cancel asked: the loop stops before its next model call or tool;
                         or at once when nobody holds it)
    awaiting_approval -> running (approve/reject of a synchronous run) | queued (of a background
                         run) | cancelled (cancel)
completed, failed and cancelled are final. A holder (the request or the worker invocation running
the loop) has a lease (leaseUntil); a queue message for a run that is neither queued nor running
with an expired lease does nothing.

What continues a run (the Converse messages so far, the tool calls of the last answer not yet
settled, the results already made for them, the proposals, the secrets read) is stored with the
run when it starts, before each model call but a segment's first (a checkpoint) and whenever it
waits, sealed with KMS under the context {tenantId, runId} (svc_core/adapters/sealing.py): the messages
hold what tools gave the model, secret values included. It is never answered, and dropped when
the run ends. A request holding a run also queues a watchdog message due after its lease: if the
request dies (API Gateway's 29 s), the worker goes on from the last checkpoint.

Outcomes:
- the model ends its turn: completed, output = its last text (+ the proposals in suggest mode);
- the step limit is reached while the model still asks for tools: failed, error STEP_LIMIT_REACHED
  (the goal was not reached; the output keeps the model's last text and the steps show the work);
- the model fails (ModelThrottled / ModelUnavailable): failed, error {code, message}; the calls
  made so far stay metered;
- cancelled: error CANCELLED;
- a tool call with input that does not fit its schema, or that fails (no such file, no such
  secret, a path not allowed, the tenant's storage failing): the model gets an error toolResult
  and the loop goes on.

Secrets: read_secret gives the value to the model only. The run keeps "[secret <name> read]" as the
step's result, and every value read in the run is replaced by "[secret <name>]" wherever it would
be stored or answered (model text, tool inputs, output, error).

The start is stored with agent.started, the end with agent.completed or agent.failed (a cancelled
run: agent.failed with error CANCELLED), one transaction each with the outbox; pausing and handing
off emit nothing.
"""

from __future__ import annotations

import json
import re
import time
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from svc_core.adapters import project_files, sealing
from svc_core.adapters.models import registry
from svc_core.adapters.models.base import billable
from svc_core.auth.context import TenantContext
from svc_core.contracts import cursors, events
from svc_core.data import agent_run_queue, agents_table, projects_table, runs_table
from svc_core.data.common import ConditionFailed
from svc_core.domain import agent_tools, agents, metering, projects, storage, tenant_secrets
from svc_core.domain.fields import agents as agent_fields
from svc_core.domain.paging import id_page
from svc_core.domain.references import referenced
from svc_core.platform import deadline, ids, timeutil
from svc_core.platform.config import settings
from svc_core.platform.errors import Conflict, ModelThrottled, ModelUnavailable, NotFound

if TYPE_CHECKING:
    from svc_core.domain.models.agents import RunCreate, RunDecision

PREFIX = "run"
MAX_STORED_TEXT = 4_000        # characters of one step's model text kept in the run
MAX_STORED_INPUT = 1_000       # characters of one tool input string kept in the run
MAX_TOOL_TEXT = 2_000          # characters of a tool's result kept in the run (the model gets all)
ENDED = ("completed", "failed", "cancelled")
STEP_LIMIT_REACHED = "STEP_LIMIT_REACHED"
CANCELLED = "CANCELLED"
CONVERSATION_TOO_LARGE = "CONVERSATION_TOO_LARGE"
LEASE_MARGIN_SECONDS = 180     # a holder's lease: its budget plus the longest model call and tool after it
SYNC_LEASE_SECONDS = 35        # a request's lease: API Gateway ends it at 29 s, whatever its budget says
LATER_CALL_MIN_SECONDS = 5.0   # a later model call of a synchronous run needs at least this much of the request left
MAX_SEALED_CHARACTERS = 300_000  # of the sealed conversation: the run's item stays under DynamoDB's 400 KB
_PATH_SEGMENT = re.compile(r"^[^\x00-\x1f\x7f\\]+$")

# ---- views and storage -----------------------------------------------------------------------

def _view(record: dict[str, Any]) -> dict[str, Any]:
    view = {name: record.get(name) for name in
            ("id", "agentId", "projectId", "goal", "status", "output", "steps", "usage", "model",
             "created_at", "completed_at", "error")}
    return {**view, "background": bool(record.get("background")),
            "cancelRequested": bool(record.get("cancelRequested"))}


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


def _own_run(ctx: TenantContext, agent_id: str, run_id: str, agent_store, store) -> dict[str, Any]:
    """The stored run, 404 unless it is a run of this agent of the caller's tenant."""
    agents.get_agent(ctx, agent_id, agent_store)
    record = store.get(ctx.tenant_id, run_id) if ids.is_id(run_id, PREFIX) else None
    if record is None or record.get("agentId") != agent_id:
        raise _run_not_found(run_id)
    return record


def get_run(ctx: TenantContext, agent_id: str, run_id: str, agent_store=agents_table,
            store=runs_table) -> dict[str, Any]:
    return _view(_own_run(ctx, agent_id, run_id, agent_store, store))


def list_runs(ctx: TenantContext, agent_id: str, limit: int, cursor: str | None, agent_store=agents_table,
              store=runs_table) -> dict[str, Any]:
    agents.get_agent(ctx, agent_id, agent_store)
    items, last_id = store.list_for_agent(ctx.tenant_id, agent_id, limit, cursors.id_after(cursor, PREFIX))
    return id_page(items, last_id, _view)


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
        self.tenant_id, self.project, self._files, self.reveal = tenant_id, project, files, reveal
        self.secrets_read: dict[str, str] = {}   # value -> name, for redaction

    @property
    def files(self) -> project_files.ProjectFiles:
        """Where the tenant keeps project files (platform or BYOS), found at the first file tool."""
        if self._files is None:
            self._files = storage.files_for(self.tenant_id)
        return self._files

    def run(self, name: str, arguments: dict[str, Any]) -> tuple[str, str]:
        """(text for the model, text for the run record)."""
        try:
            return getattr(self, f"_{name}")(**arguments)
        except project_files.StorageUnavailable as exc:
            raise ToolFailed(str(exc)) from None

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


# ---- the conversation a run continues from ----------------------------------------------------

def _seal_context(tenant_id: str, run_id: str) -> dict[str, str]:
    return {"tenantId": tenant_id, "runId": run_id}


def _sealed(tenant_id: str, run_id: str, state: dict[str, Any]) -> dict[str, str]:
    # Compressed first: tool results (a file read) repeat a lot, and the item has 400 KB.
    data = zlib.compress(json.dumps(state, separators=(",", ":")).encode(), 6)
    return sealing.seal(data, _seal_context(tenant_id, run_id))


def _opened(tenant_id: str, run: dict[str, Any]) -> dict[str, Any]:
    return json.loads(zlib.decompress(sealing.unseal(run["conversation"], _seal_context(tenant_id, run["id"]))))


def _new_state(agent: dict[str, Any], project: dict[str, Any], goal: str) -> dict[str, Any]:
    config = agent["config"]
    allowed = list(config["tools"])
    return {"system": [{"text": _system_prompt(agent, project)}],
            "toolConfig": {"tools": [agent_tools.tool_spec(name) for name in allowed]} if allowed else None,
            "messages": [{"role": "user", "content": [{"text": goal}]}],
            "pending": [], "results": [], "proposals": [], "lastText": "", "calls": 0,
            "level": config["autonomyLevel"], "allowed": allowed, "stepLimit": config["stepLimit"],
            "modelChoice": config.get("model"), "secrets": {},
            "project": {k: project.get(k) for k in ("id", "name", "description", "language")}}


# ---- the loop ----------------------------------------------------------------------------------

def _system_prompt(agent: dict[str, Any], project: dict[str, Any]) -> str:
    level = agent["config"]["autonomyLevel"]
    return (f"{agent['systemPrompt']}\n\n"
            f"You are working in the project {project['name']!r} ({project['id']}). "
            f"Autonomy level: {level} ({agent_fields.AUTONOMY_LEVELS[level]}). "
            "Use the tools offered when they help; answer with the result when the goal is reached.")


def _model_step(result, usage: dict[str, int], at: str) -> dict[str, Any]:
    return {"type": "model", "text": _storable(result.text, MAX_STORED_TEXT),
            "toolUses": [{"toolUseId": u["toolUseId"], "name": u["name"], "input": _storable(u.get("input"))}
                         for u in result.tool_uses],
            "stopReason": result.stop_reason, "usage": usage, "at": at}


class _Deps:
    """What a run segment acts through (the data modules by default; tests pass fakes)."""

    def __init__(self, store=runs_table, files=None, reveal: Callable[[str, str], str] = tenant_secrets.reveal,
                 meter: Callable[..., dict[str, Any]] = metering.record_call, queue=agent_run_queue) -> None:
        self.store, self.files, self.reveal, self.meter, self.queue = store, files, reveal, meter, queue


class _Interrupted(Exception):
    """Someone else changed the run while this holder ran it: a cancel, or (never expected) a
    lost lease."""

    def __init__(self, version: int, cancel: bool) -> None:
        self.version, self.cancel = version, cancel
        super().__init__("the run changed meanwhile")


def _lease(budget: float) -> int:
    return int(timeutil.now() + budget + LEASE_MARGIN_SECONDS)


def _watch(tenant_id: str, run: dict[str, Any], queue) -> None:
    """A request holds the run: a message shows after its lease, so that if the request dies
    (API Gateway's 29 s, a crash) the worker goes on from the last checkpoint; if the run has
    ended or is held meanwhile, the message does nothing."""
    queue.send(tenant_id, run["id"], delay_seconds=SYNC_LEASE_SECONDS + 1)


def _started_run(agent: dict[str, Any], project: dict[str, Any], goal: str, model_id: str, status: str,
                 background: bool) -> dict[str, Any]:
    return {"id": ids.new_id(PREFIX), "agentId": agent["id"], "projectId": project["id"], "goal": goal,
            "status": status, "output": None, "steps": [],
            "usage": {"inputTokens": 0, "outputTokens": 0, "microCredits": 0}, "model": model_id,
            "created_at": timeutil.iso(timeutil.now()), "completed_at": None, "error": None,
            "version": 1, "background": background}


def execute(ctx: TenantContext, agent_id: str, body: RunCreate, *, agent_store=agents_table,
            project_store=projects_table, store=runs_table, files=None, reveal: Callable[[str, str], str] = tenant_secrets.reveal,
            meter: Callable[..., dict[str, Any]] = metering.record_call, queue=agent_run_queue) -> dict[str, Any]:
    """Start a run: synchronously (the loop runs here until it ends, pauses, or reaches the time
    budget and is handed to the worker) or, with async, queued for the worker."""
    metering.require_credit(ctx.tenant_id)  # 402 PAYMENT_REQUIRED before anything is stored or run
    agent = agents.get_agent(ctx, agent_id, agent_store)
    project = referenced(projects.get_project, ctx, body.projectId, "projectId", "project", project_store)
    metering.require_priced_models(settings())
    provider = registry.provider_for(settings(), agent["config"].get("model"))
    tenant_id = ctx.tenant_id
    deps = _Deps(store, files, reveal, meter, queue)
    state = _new_state(agent, project, body.goal)
    now = timeutil.now()
    if body.run_async:
        run = _started_run(agent, project, body.goal, provider.model_id, "queued", True)
        run["conversation"] = _sealed(tenant_id, run["id"], state)
        store.start(tenant_id, run, events.new_event("agent.started", tenant_id, _event_data(run)), now)
        queue.send(tenant_id, run["id"])
        return _view(run)
    budget = settings().agent_run_sync_budget_seconds
    run = _started_run(agent, project, body.goal, provider.model_id, "running", False)
    run.update(leaseUntil=int(now) + SYNC_LEASE_SECONDS, conversation=_sealed(tenant_id, run["id"], state))
    store.start(tenant_id, run, events.new_event("agent.started", tenant_id, _event_data(run)), now)
    _watch(tenant_id, run, queue)
    return _advance(tenant_id, run, state, deps, budget, provider)


def _advance(tenant_id: str, run: dict[str, Any], state: dict[str, Any], deps: _Deps, budget: float,
             provider=None) -> dict[str, Any]:
    """Run the loop from where the state stands, as the run's holder, until the run ends, pauses
    for approval, is cancelled, or this segment's budget is spent (then it goes to the worker).
    Each segment makes at least one model call, so a tiny budget still moves a run forward; before
    each later one the state is checkpointed (stored sealed), so a holder that dies loses at most
    one model call and its tools."""
    if provider is None:
        metering.require_priced_models(settings())
        provider = registry.provider_for(settings(), state["modelChoice"])
    toolbox = Toolbox(tenant_id, state["project"], deps.files, deps.reveal)
    toolbox.secrets_read = dict(state["secrets"])
    request: dict[str, Any] = {"system": state["system"], "messages": state["messages"]}
    if state["toolConfig"]:
        request["toolConfig"] = state["toolConfig"]
    started, called, hand_off = time.monotonic(), False, False

    def check() -> None:
        version, cancel = deps.store.control(tenant_id, run["id"])
        if cancel or version != run["version"]:
            raise _Interrupted(version, cancel)

    try:
        while True:
            if state["pending"]:
                if _settle(run, state, toolbox, check):
                    run["status"] = "awaiting_approval"
                    break
                state["messages"].append({"role": "user", "content": state["results"]})
                state["results"] = []
            if called and (time.monotonic() - started >= budget or _short_of_time()):
                hand_off = True
                break
            if called:
                saved = _save(tenant_id, run, state, toolbox, deps, checkpoint=True)
                if saved["status"] != "running":  # a cancel came just before the checkpoint: it ended the run
                    return saved
            check()
            try:
                result = provider.converse(request)
            except (ModelThrottled, ModelUnavailable) as exc:
                received = billable(exc)   # what the provider had counted before the failure is billed
                if received is not None:
                    record = deps.meter(tenant_id, "run", run["id"], received)
                    for name in ("inputTokens", "outputTokens", "microCredits"):
                        run["usage"][name] += record[name]
                if called and exc.details.get("reason") == "timeout" and _short_of_time():
                    # Cut short by the request's deadline, not the model's budget: the worker asks again.
                    hand_off = True
                    break
                run["error"] = model_failure(exc)
                break
            called = True
            state["calls"] += 1
            run["model"] = result.model_id   # the model that answered (after a fallback: it), as billed
            record = deps.meter(tenant_id, "run", run["id"], result)
            call_usage = {"inputTokens": record["inputTokens"], "outputTokens": record["outputTokens"],
                          "microCredits": record["microCredits"]}
            for name, value in call_usage.items():
                run["usage"][name] += value
            run["steps"].append(_model_step(result, call_usage, timeutil.iso(timeutil.now())))
            state["lastText"] = result.text
            state["messages"].append(result.message)
            if result.stop_reason != "tool_use" or not result.tool_uses:
                break
            if state["calls"] >= state["stepLimit"]:
                run["error"] = {"code": STEP_LIMIT_REACHED, "message": (
                    f"The agent's step limit ({state['stepLimit']} model calls) was reached before the "
                    "model finished; its last tool requests were not run.")}
                break
            state["pending"], state["results"] = list(result.tool_uses), []
    except _Interrupted as stop:
        if not stop.cancel:
            raise Conflict("The run was changed by another request meanwhile.",
                           {"id": run["id"], "resource": "run"}) from None
        run["version"] = stop.version
        return _cancel_now(tenant_id, run, state, toolbox, deps)
    except Exception:
        run["error"] = {"code": "INTERNAL_ERROR", "message": "The run failed inside the service."}
        _save(tenant_id, run, state, toolbox, deps)
        raise
    if hand_off:
        return _hand_off(tenant_id, run, state, toolbox, deps)
    return _save(tenant_id, run, state, toolbox, deps)


def model_failure(exc: ModelThrottled | ModelUnavailable) -> dict[str, Any]:
    """A model failure as a run's or a chat message's `error`: {code, message}, and for MODEL_THROTTLED
    the provider's wait (`retryAfterSeconds`: its Retry-After, at most 60 s, else 10 s)."""
    error: dict[str, Any] = {"code": exc.code, "message": exc.message}
    if isinstance(exc, ModelThrottled):
        error["retryAfterSeconds"] = int(exc.details["retryAfterSeconds"])
    return error


def _short_of_time() -> bool:
    """Whether a synchronous request has too little left of its deadline (svc_core/platform/deadline.py) for
    another model call: the run goes to the worker instead, which has its own time."""
    left = deadline.left()
    return left is not None and left < LATER_CALL_MIN_SECONDS


def _held_step(run: dict[str, Any], tool_use_id: str) -> dict[str, Any] | None:
    return next((s for s in reversed(run["steps"]) if s["type"] == "tool" and s["toolUseId"] == tool_use_id), None)


def _settle(run: dict[str, Any], state: dict[str, Any], toolbox: Toolbox, check: Callable[[], None]) -> bool:
    """Settle the tool calls of the model's last answer: first the held one with its decision
    (approved: run now; rejected: the model is told), then the others. True when one is held."""
    first = state["pending"][0]
    step = _held_step(run, first["toolUseId"])
    if step is not None and step.get("status") in ("approved", "rejected"):
        if step["status"] == "approved":
            check()
            model_text, status, result = _call_tool(toolbox, first["name"], first.get("input"))
        else:
            reason = (step.get("approval") or {}).get("reason")
            model_text = "rejected by the user" + (f": {reason}" if reason else "")
            status, result = "rejected", model_text
        step.update(status=status, result=_storable(result, MAX_TOOL_TEXT), at=timeutil.iso(timeutil.now()))
        state["results"].append(_tool_result(first["toolUseId"], model_text, status))
        state["pending"] = state["pending"][1:]
    results, paused = _run_tools(state["pending"], state["allowed"], state["level"], toolbox, run,
                                 state["proposals"], before_tool=check)
    state["results"] += results
    state["pending"] = state["pending"][len(results):] if paused else []
    return paused


def _tool_result(tool_use_id: str, model_text: str, status: str) -> dict[str, Any]:
    return {"toolResult": {"toolUseId": tool_use_id, "content": [{"text": model_text}],
                           "status": "success" if status in ("success", "proposed") else "error"}}


def _call_tool(toolbox: Toolbox, name: str, arguments: Any) -> tuple[str, str, str]:
    """(text for the model, step status, text for the run record) of running one tool."""
    try:
        model_text, result = toolbox.run(name, arguments)
        return model_text, "success", result
    except ToolFailed as exc:
        model_text = f"The tool failed: {exc}"
        return model_text, "error", model_text


def _run_tools(tool_uses: list[dict[str, Any]], allowed: list[str], level: str, toolbox: Toolbox,
               run: dict[str, Any], proposals: list[str], *, before_tool: Callable[[], None] | None = None
               ) -> tuple[list[dict[str, Any]], bool]:
    """Run (or propose, or hold) each requested tool; (the toolResult blocks, whether the run pauses).
    before_tool: called before each tool that runs (the loop's cancel check; it raises to stop)."""
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
            if before_tool is not None:
                before_tool()
            model_text, status, step["result"] = _call_tool(toolbox, name, arguments)
        step["result"] = _storable(step["result"], MAX_TOOL_TEXT)
        step.update(status=status, at=timeutil.iso(timeutil.now()))
        run["steps"].append(step)
        results.append(_tool_result(use["toolUseId"], model_text, status))
    return results, False


def _proposal(name: str, arguments: dict[str, Any]) -> str:
    if name == "write_file":
        size = len(str(arguments.get("content", "")).encode("utf-8", "replace"))
        return f"write_file {arguments.get('path')} ({size} bytes)"
    return f"{name} {json.dumps(arguments, sort_keys=True)[:200]}"


# ---- storing a run's state -----------------------------------------------------------------

def _save(tenant_id: str, run: dict[str, Any], state: dict[str, Any], toolbox: Toolbox, deps: _Deps, *,
          checkpoint: bool = False) -> dict[str, Any]:
    """Store the run as the loop left it: ended (completed/failed/cancelled, with its event),
    awaiting approval, running handed off, or (checkpoint) still running here; the conversation
    sealed with it unless it ended."""
    for name in ("output", "error", "completed_at"):  # a stored run has no attribute for a null
        run.setdefault(name, None)
    output = state["lastText"]
    if state["proposals"]:
        output = (output + "\n\n" if output else "") + "Proposed changes (not applied):\n" + "\n".join(
            f"- {p}" for p in state["proposals"])
    run["output"] = _storable(output, MAX_STORED_TEXT * 4) if output else None
    if run["status"] == "running" and run.get("leaseUntil") and not checkpoint:  # the loop ended here
        run["status"] = "failed" if run["error"] else "completed"
    state["secrets"] = toolbox.secrets_read
    now = timeutil.now()
    conversation = None
    if run["status"] not in ENDED:
        conversation = _sealed(tenant_id, run["id"], state)
        if len(json.dumps(conversation)) > MAX_SEALED_CHARACTERS:
            if checkpoint:  # the run can still end in this segment; only its recovery point is older
                return _view(run)
            conversation = None
            run.update(status="failed", error={"code": CONVERSATION_TOO_LARGE, "message": (
                "The run's conversation grew too large to be kept while it waits; it ended here.")})
    event_type = None
    if run["status"] in ENDED:
        run["completed_at"] = timeutil.iso(now)
        event_type = "agent.completed" if run["status"] == "completed" else "agent.failed"
    read_version = run["version"]
    stored = {**run, "output": toolbox.redact(run["output"]), "steps": toolbox.redact(run["steps"]),
              "error": toolbox.redact(run["error"]), "conversation": conversation, "version": read_version + 1}
    if run["status"] != "running":
        stored["leaseUntil"] = None
    event = events.new_event(event_type, tenant_id, _event_data(stored)) if event_type else None
    try:
        deps.store.write(tenant_id, stored, read_version, event, now)
    except ConditionFailed:
        version, cancel = deps.store.control(tenant_id, run["id"])
        if not cancel or run["status"] == "cancelled":
            raise Conflict("The run was changed by another request meanwhile.",
                           {"id": run["id"], "resource": "run"}) from None
        run["version"] = version  # a cancel came between the last check and this write: it wins
        return _cancel_now(tenant_id, run, state, toolbox, deps)
    run.update(version=stored["version"], leaseUntil=stored.get("leaseUntil"))
    if event_type:  # the run ended with this write
        from svc_core.platform import metrics  # on first use: not a start-up import
        metrics.agent_run(run["status"], run["id"])
    return _view(stored)


def _cancel_now(tenant_id: str, run: dict[str, Any], state: dict[str, Any], toolbox: Toolbox,
                deps: _Deps) -> dict[str, Any]:
    run.update(status="cancelled", cancelRequested=True, error={
        "code": CANCELLED, "message": "The run was cancelled; the steps show what it did before."})
    return _save(tenant_id, run, state, toolbox, deps)


def _hand_off(tenant_id: str, run: dict[str, Any], state: dict[str, Any], toolbox: Toolbox,
              deps: _Deps) -> dict[str, Any]:
    """The budget is spent: store the run running with nobody holding it, and queue it."""
    run.update(leaseUntil=0, background=True)
    view = _save(tenant_id, run, state, toolbox, deps)
    if view["status"] == "running":
        deps.queue.send(tenant_id, run["id"])
    return view


# ---- approving, rejecting, cancelling, continuing ------------------------------------------

def _state_conflict(record: dict[str, Any], message: str) -> Conflict:
    return Conflict(message, {"id": record["id"], "resource": "run", "status": record["status"]})


def decide(ctx: TenantContext, agent_id: str, run_id: str, decision: Literal["approved", "rejected"],
           body: RunDecision | None = None, *, agent_store=agents_table, store=runs_table, files=None,
           reveal: Callable[[str, str], str] = tenant_secrets.reveal,
           meter: Callable[..., dict[str, Any]] = metering.record_call, queue=agent_run_queue) -> dict[str, Any]:
    """Approve or reject the tool call a run waits on, and go on: here for a synchronous run,
    in the worker for a background one (then the answer is the queued run)."""
    record = _own_run(ctx, agent_id, run_id, agent_store, store)
    tenant_id = ctx.tenant_id
    if record["status"] != "awaiting_approval":
        raise _state_conflict(record, "Only a run awaiting approval can be approved or rejected.")
    held = next((s for s in reversed(record["steps"]) if s.get("status") == "awaiting_approval"), None)
    if held is None or not record.get("conversation"):  # a run paused before runs could go on
        raise _state_conflict(record, "This run cannot be continued.")
    metering.require_credit(tenant_id)  # going on calls the model: 402 first, and the run keeps waiting
    read_version = record.get("version") or 0
    now = timeutil.now()
    held.update(status=decision, approval={"decision": decision, "by": ctx.principal.subject,
                                           "at": timeutil.iso(now), "reason": body.reason if body else None})
    background = bool(record.get("background"))
    budget = settings().agent_run_sync_budget_seconds
    claimed = {**record, "status": "queued" if background else "running", "version": read_version + 1,
               "leaseUntil": None if background else int(now) + SYNC_LEASE_SECONDS}
    try:
        store.write(tenant_id, claimed, read_version, None, now)
    except ConditionFailed:  # another approval, reject or cancel won
        current = store.get(tenant_id, run_id) or record
        raise _state_conflict(current, "The run was decided on or changed by another request meanwhile.") from None
    if background:
        queue.send(tenant_id, run_id)
        return _view(claimed)
    _watch(tenant_id, claimed, queue)
    state = _opened(tenant_id, claimed)
    return _advance(tenant_id, claimed, state, _Deps(store, files, reveal, meter, queue), budget)


def cancel(ctx: TenantContext, agent_id: str, run_id: str, *, agent_store=agents_table,
           store=runs_table) -> dict[str, Any]:
    """queued, awaiting approval, or running with nobody holding it: cancelled now. Running:
    cancel requested (the holder stops before its next model call or tool). Ended: 409."""
    for _ in range(3):  # a holder's save may move the version between our read and our write
        record = _own_run(ctx, agent_id, run_id, agent_store, store)
        status, now = record["status"], timeutil.now()
        if status in ENDED:
            raise _state_conflict(record, f"The run is already {status}.")
        if status == "running" and record.get("cancelRequested"):
            return _view(record)
        read_version = record.get("version") or 0
        changed = {**record, "cancelRequested": True, "version": read_version + 1}
        event = None
        if status != "running" or (record.get("leaseUntil") or 0) <= now:
            changed.update(status="cancelled", conversation=None, leaseUntil=None, completed_at=timeutil.iso(now),
                           error={"code": CANCELLED, "message": "The run was cancelled before it ended."})
            event = events.new_event("agent.failed", ctx.tenant_id, _event_data(changed))
        try:
            store.write(ctx.tenant_id, changed, read_version, event, now)
        except ConditionFailed:
            continue
        return _view(changed)
    raise Conflict("The run kept changing; try again.", {"id": run_id, "resource": "run"})


def continue_run(tenant_id: str, run_id: str, *, store=runs_table, files=None,
                 reveal: Callable[[str, str], str] = tenant_secrets.reveal,
                 meter: Callable[..., dict[str, Any]] = metering.record_call, queue=agent_run_queue
                 ) -> dict[str, Any] | None:
    """The worker's part: claim a queued run (or a running one nobody holds) and run it on for
    the worker's budget. None when there is nothing to do (a message delivered again, a run
    another holder has, a run that ended or waits for approval)."""
    record = store.get(tenant_id, run_id)
    now = timeutil.now()
    if record is None or not record.get("conversation") or not (record["status"] == "queued" or (
            record["status"] == "running" and (record.get("leaseUntil") or 0) <= now)):
        return None
    budget = settings().agent_run_worker_budget_seconds
    read_version = record.get("version") or 0
    claimed = {**record, "status": "running", "background": True, "leaseUntil": _lease(budget),
               "version": read_version + 1}
    try:
        store.write(tenant_id, claimed, read_version, None, now)
    except ConditionFailed:
        return None
    deps = _Deps(store, files, reveal, meter, queue)
    state = _opened(tenant_id, claimed)
    if claimed.get("cancelRequested"):
        return _cancel_now(tenant_id, claimed, state, Toolbox(tenant_id, state["project"], files, reveal), deps)
    return _advance(tenant_id, claimed, state, deps, budget)


__all__ = ["Toolbox", "cancel", "continue_run", "decide", "execute", "get_run", "list_runs"]
