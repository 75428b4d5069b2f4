"""Agents: a tenant's configured assistants (a name, a system prompt and a config), which runs
will execute. This module keeps their configuration; it runs nothing.

config (the spec lists only autonomyLevel; every field has a default, and so has config itself):
    autonomyLevel  suggest | supervised | autonomous (domain/fields/agents.py's AUTONOMY_LEVELS says
                   what each means for runs); default suggest, the most cautious
    model          one of the deployment's allowed model ids (svc_core/adapters/models/registry.py), or null
                   for the deployment's default model
    stepLimit      the most model calls a run may make, 1 to 25 (default 8)
    tools          names from the tool catalogue (svc_core/domain/agent_tools.py), each once, answered in
                   the catalogue's order; default: every tool

A PATCH changes only the fields sent; config is merged field by field, and in config a null
resets the field to its default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svc_core.adapters.models.registry import choose_model
from svc_core.auth.context import TenantContext
from svc_core.data import agents_table
from svc_core.data.common import ConditionFailed
from svc_core.domain import agent_tools
from svc_core.domain.fields.agents import DEFAULT_AUTONOMY_LEVEL, DEFAULT_STEP_LIMIT
from svc_core.domain.paging import tenant_list_page
from svc_core.platform import ids, timeutil
from svc_core.platform.config import settings
from svc_core.platform.errors import Conflict, NotFound

if TYPE_CHECKING:
    from svc_core.domain.models.agents import AgentCreate, AgentUpdate

PREFIX = "agt"

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
    return tenant_list_page(store, ctx.tenant_id, limit, cursor, id_prefix=PREFIX, view=_view)


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

