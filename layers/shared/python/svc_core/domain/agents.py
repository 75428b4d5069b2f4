"""Agents: a tenant's configured assistants (a name, a system prompt and a config), which runs
will execute. This module keeps their configuration; it runs nothing.

config (the spec lists only autonomyLevel; every field has a default, and so has config itself):
    autonomyLevel  suggest | supervised | autonomous (AUTONOMY_LEVELS says what each means for runs);
                   default suggest, the most cautious
    model          one of the deployment's allowed model ids (svc_core/adapters/models/registry.py), or null
                   for the deployment's default model
    stepLimit      the most model calls a run may make, 1 to 25 (default 8)
    tools          names from the tool catalogue (svc_core/domain/agent_tools.py), each once, answered in
                   the catalogue's order; default: every tool

A PATCH changes only the fields sent; config is merged field by field, and in config a null
resets the field to its default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from svc_core.adapters.models.registry import choose_model
from svc_core.auth.context import TenantContext
from svc_core.data import agents_table
from svc_core.data.common import ConditionFailed
from svc_core.domain import agent_tools
from svc_core.domain.paging import tenant_page
from svc_core.platform import ids, timeutil
from svc_core.platform.config import settings
from svc_core.platform.errors import Conflict, NotFound

if TYPE_CHECKING:
    from svc_core.domain.models.agents import AgentCreate, AgentUpdate

PREFIX = "agt"
MAX_NAME = 200
MAX_SYSTEM_PROMPT = 20_000
MAX_MODEL_ID = 256
MIN_STEPS, MAX_STEPS, DEFAULT_STEP_LIMIT = 1, 25, 8
DEFAULT_AUTONOMY_LEVEL = "suggest"

AUTONOMY_LEVELS: dict[str, str] = {
    "suggest": "only tools that read run; a change is proposed in the run's output, never made",
    "supervised": "a tool that changes something pauses the run (awaiting_approval) until the caller "
                  "approves or rejects that call; tools that read run",
    "autonomous": "every allowed tool runs",
}

NAME_HELP = f"1 to {MAX_NAME} characters, at least one visible; leading and trailing spaces are trimmed"
PROMPT_HELP = f"1 to {MAX_SYSTEM_PROMPT:,} characters, at least one visible; kept exactly as sent"
AUTONOMY_HELP = ("; ".join(f"{level}: {meaning}" for level, meaning in AUTONOMY_LEVELS.items())
                 + f"; null or left out: {DEFAULT_AUTONOMY_LEVEL}")
MODEL_HELP = "one of the deployment's allowed model ids; null or left out: the deployment's default model"
STEPS_HELP = (f"the most model calls one run may make, {MIN_STEPS} to {MAX_STEPS}; "
              f"null or left out: {DEFAULT_STEP_LIMIT}")
TOOLS_HELP = ("the tools the agent may use, each at most once: "
              + "; ".join(f"{t.name} ({'changes' if t.changes else 'reads'}): {t.description.rstrip('.')}"
                          for t in agent_tools.CATALOGUE)
              + "; null or left out: every tool; [] for none")

AutonomyLevel = Literal[tuple(AUTONOMY_LEVELS)]  # type: ignore[valid-type]
ToolName = Literal[agent_tools.TOOL_NAMES]  # type: ignore[valid-type]

_DEFAULTS: dict[str, Any] = {"autonomyLevel": DEFAULT_AUTONOMY_LEVEL, "model": None, "stepLimit": DEFAULT_STEP_LIMIT,
                             "tools": list(agent_tools.DEFAULT_TOOLS)}


def _config_view(config: dict[str, Any]) -> dict[str, Any]:
    return {"autonomyLevel": config.get("autonomyLevel", DEFAULT_AUTONOMY_LEVEL), "model": config.get("model"),
            "stepLimit": config.get("stepLimit", DEFAULT_STEP_LIMIT),
            "tools": list(config.get("tools", agent_tools.DEFAULT_TOOLS))}


def _view(record: dict[str, Any]) -> dict[str, Any]:
    return {"id": record["id"], "name": record["name"], "systemPrompt": record["systemPrompt"],
            "config": _config_view(record["config"]), "created_at": record["created_at"],
            "updated_at": record["updated_at"]}


def _stored_config(config: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in config.items() if v is not None}


def _check_model(model: str | None) -> None:
    """The rule of which models may be chosen lives in the model registry."""
    if model is not None:
        choose_model(settings(), model, field="config.model")


def _not_found(agent_id: str) -> NotFound:
    return NotFound("The agent does not exist.", {"id": agent_id, "resource": "agent"})


def _read(tenant_id: str, agent_id: str, store) -> dict[str, Any]:
    record = store.get(tenant_id, agent_id) if ids.is_id(agent_id, PREFIX) else None
    if record is None:
        raise _not_found(agent_id)
    return record


def create_agent(ctx: TenantContext, body: AgentCreate, store=agents_table) -> dict[str, Any]:
    config = {field: (_DEFAULTS[field] if getattr(body.config, field) is None else getattr(body.config, field))
              for field in _DEFAULTS}
    _check_model(config["model"])
    stamp = timeutil.iso(timeutil.now())
    record = {"id": ids.new_id(PREFIX), "name": body.name, "systemPrompt": body.systemPrompt,
              "config": _stored_config(config), "created_at": stamp, "updated_at": stamp}
    view = _view(record)
    store.create(ctx.tenant_id, record, answer=view)
    return view


def get_agent(ctx: TenantContext, agent_id: str, store=agents_table) -> dict[str, Any]:
    return _view(_read(ctx.tenant_id, agent_id, store))


def list_agents(ctx: TenantContext, limit: int, cursor: str | None, store=agents_table) -> dict[str, Any]:
    return tenant_page(store, ctx.tenant_id, limit, cursor, id_prefix=PREFIX, view=_view)


def update_agent(ctx: TenantContext, agent_id: str, body: AgentUpdate, store=agents_table) -> dict[str, Any]:
    current = _view(_read(ctx.tenant_id, agent_id, store))
    updated = {**current, **{f: getattr(body, f) for f in body.model_fields_set & {"name", "systemPrompt"}}}
    if "config" in body.model_fields_set:
        config = dict(current["config"])
        for field in body.config.model_fields_set:
            value = getattr(body.config, field)
            config[field] = _DEFAULTS[field] if value is None else value
        if "model" in body.config.model_fields_set:
            _check_model(config["model"])
        updated["config"] = config
    updated["updated_at"] = timeutil.iso_after(timeutil.now(), current["updated_at"])
    try:
        store.replace(ctx.tenant_id, {**updated, "config": _stored_config(updated["config"])},
                      current["updated_at"])
    except ConditionFailed:
        raise Conflict("The agent changed or was deleted while it was being updated; read it again.",
                       {"id": agent_id}) from None
    return updated


def delete_agent(ctx: TenantContext, agent_id: str, store=agents_table) -> dict[str, Any]:
    current = _read(ctx.tenant_id, agent_id, store)
    try:
        store.delete(ctx.tenant_id, agent_id, current["updated_at"])
    except ConditionFailed:
        raise Conflict("The agent changed while it was being deleted; try again.", {"id": agent_id}) from None
    return {"id": agent_id, "deleted": True}

