"""Agents without AWS: the tool catalogue, the config rules (defaults, merge, null resets, the
model rule of the deployment) and the lost-update guard, on an in-memory table."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from pydantic import ValidationError

from svc_core.auth.context import TenantContext
from svc_core.auth.principal import Principal
from svc_core.data.common import ConditionFailed
from svc_core.domain import agent_tools, agents
from svc_core.domain.fields import agents as agent_fields
from svc_core.domain.models.agents import AgentCreate, AgentUpdate
from svc_core.platform.errors import Conflict, NotFound, ValidationFailed

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "agents-and-runs.md"
SONNET = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"


class MemoryAgents:
    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], dict] = {}

    def create(self, tenant_id, agent, answer=None):
        self.rows[(tenant_id, agent["id"])] = copy.deepcopy(agent)

    def get(self, tenant_id, agent_id):
        row = self.rows.get((tenant_id, agent_id))
        return copy.deepcopy(row) if row else None

    def replace(self, tenant_id, agent, seen):
        current = self.rows.get((tenant_id, agent["id"]))
        if not current or current["updated_at"] != seen:
            raise ConditionFailed()
        self.rows[(tenant_id, agent["id"])] = copy.deepcopy(agent)

    def delete(self, tenant_id, agent_id, seen):
        current = self.rows.get((tenant_id, agent_id))
        if not current or current["updated_at"] != seen:
            raise ConditionFailed()
        del self.rows[(tenant_id, agent_id)]


def ctx(tenant_id: str = "ten_A") -> TenantContext:
    principal = Principal(subject="usr_1", tenant_id=tenant_id, scopes=frozenset({"agents:write"}),
                          credential="api_key", token_id="jti")
    return TenantContext(tenant_id=tenant_id, principal=principal, request_id="req")


def new(store, **config) -> dict:
    body = AgentCreate.model_validate({"name": "Writer", "systemPrompt": "Write.",
                                       "config": {"autonomyLevel": "suggest", **config}})
    return agents.create_agent(ctx(), body, store)


def test_the_catalogue_names_each_tool_once_and_only_write_file_changes_something():
    assert agent_tools.TOOL_NAMES == ("read_project", "list_files", "read_file", "write_file", "read_secret")
    assert [t.name for t in agent_tools.CATALOGUE if t.changes] == ["write_file"]
    assert all(t.description and "\n" not in t.description for t in agent_tools.CATALOGUE)
    assert agent_tools.changes_something("write_file") and not agent_tools.changes_something("read_secret")
    assert agent_tools.in_catalogue_order(["read_secret", "read_project", "read_secret"]) == [
        "read_project", "read_secret"]


def test_create_fills_in_the_defaults_and_stores_only_what_is_set():
    store = MemoryAgents()
    agent = new(store)
    assert agent["config"] == {"autonomyLevel": "suggest", "model": None, "stepLimit": agent_fields.DEFAULT_STEP_LIMIT,
                               "tools": list(agent_tools.TOOL_NAMES)}
    [stored] = store.rows.values()
    assert "model" not in stored["config"]


def test_the_model_must_be_one_the_deployment_allows(monkeypatch):
    from svc_core.platform.config import settings
    store = MemoryAgents()
    with pytest.raises(ValidationFailed) as refused:
        new(store, model=SONNET)  # the defaults allow only the default model
    assert [f["field"] for f in refused.value.details["fields"]] == ["config.model"]
    assert store.rows == {}
    assert new(store, model=settings().model_id)["config"]["model"] == settings().model_id
    monkeypatch.setenv("MODEL_ALLOWED_IDS", SONNET)
    settings.cache_clear()
    agent = new(store, model=SONNET)
    assert agent["config"]["model"] == SONNET
    monkeypatch.setenv("MODEL_ALLOWED_IDS", "")
    settings.cache_clear()
    with pytest.raises(ValidationFailed):
        agents.update_agent(ctx(), agent["id"], AgentUpdate.model_validate({"config": {"model": SONNET}}), store)
    # a change that does not touch the model keeps it (it is checked again when a run starts)
    kept = agents.update_agent(ctx(), agent["id"], AgentUpdate.model_validate({"name": "Kept"}), store)
    assert kept["config"]["model"] == SONNET


def test_patch_merges_config_and_null_resets_a_field_to_its_default():
    store = MemoryAgents()
    agent = new(store, stepLimit=3, tools=["read_file"])
    changed = agents.update_agent(ctx(), agent["id"], AgentUpdate.model_validate(
        {"config": {"autonomyLevel": "supervised"}}), store)
    assert changed["config"] == {**agent["config"], "autonomyLevel": "supervised"}
    reset = agents.update_agent(ctx(), agent["id"], AgentUpdate.model_validate(
        {"config": {"stepLimit": None, "tools": None}}), store)
    assert reset["config"] == {"autonomyLevel": "supervised", "model": None, "stepLimit": 8,
                               "tools": list(agent_tools.TOOL_NAMES)}
    assert agents.get_agent(ctx(), agent["id"], store) == reset
    cautious = agents.update_agent(ctx(), agent["id"], AgentUpdate.model_validate(
        {"config": {"autonomyLevel": None}}), store)
    assert cautious["config"]["autonomyLevel"] == "suggest"  # null resets it to its default too


@pytest.mark.parametrize("body", [
    {"name": "Writer", "systemPrompt": "Write."},                                    # no config at all
    {"name": "Writer", "systemPrompt": "Write.", "config": {}},
    {"name": "Writer", "systemPrompt": "Write.", "config": {"autonomyLevel": None, "stepLimit": None, "tools": None}},
], ids=["no-config", "empty-config", "nulls"])
def test_a_create_that_leaves_config_fields_out_gets_the_documented_defaults(body):
    # The spec lists config.autonomyLevel without saying whether it is required: left out it is
    # suggest, the most cautious level (a change is proposed, never made).
    agent = agents.create_agent(ctx(), AgentCreate.model_validate(body), MemoryAgents())
    assert agent["config"] == {"autonomyLevel": "suggest", "model": None, "stepLimit": 8,
                               "tools": list(agent_tools.TOOL_NAMES)}


def test_an_agent_stored_without_an_autonomy_level_reads_as_the_default():
    store = MemoryAgents()
    agent = new(store)
    [stored] = store.rows.values()
    del stored["config"]["autonomyLevel"]
    assert agents.get_agent(ctx(), agent["id"], store)["config"]["autonomyLevel"] == "suggest"


def test_the_openapi_document_shows_each_config_default():
    import json

    from devstack import openapi
    schemas = json.loads(openapi.DOCUMENT.read_text())["components"]["schemas"]
    config = schemas["AgentConfigBody"]["properties"]
    assert config["autonomyLevel"]["default"] == "suggest" and "suggest" in config["autonomyLevel"]["description"]
    assert config["stepLimit"]["default"] == 8 and config["tools"]["default"] == list(agent_tools.TOOL_NAMES)
    assert "left out" in config["model"]["description"]
    assert "required" not in schemas["AgentConfigBody"] and "config" not in schemas["AgentCreate"]["required"]
    assert schemas["AgentCreate"]["properties"]["config"]["default"] == {}


@pytest.mark.parametrize("body", [{}, {"config": {}}, {"name": None}, {"config": None},
                                  {"config": {"autonomyLevel": "manual"}}, {"config": {"tools": ["write_file"] * 2}},
                                  {"config": {"stepLimit": 0}}, {"systemPrompt": " "}])
def test_invalid_updates_are_refused_by_the_model(body):
    with pytest.raises(ValidationError):
        AgentUpdate.model_validate(body)


def test_a_lost_update_is_a_conflict_and_another_tenant_sees_nothing():
    store = MemoryAgents()
    agent = new(store)
    with pytest.raises(NotFound):
        agents.get_agent(ctx("ten_B"), agent["id"], store)
    real_replace = store.replace

    def racing(tenant_id, updated, seen):
        store.rows[(tenant_id, agent["id"])]["updated_at"] = "2999-01-01T00:00:00.000Z"
        return real_replace(tenant_id, updated, seen)

    store.replace = racing  # type: ignore[method-assign]
    with pytest.raises(Conflict):
        agents.update_agent(ctx(), agent["id"], AgentUpdate.model_validate({"name": "Mine"}), store)
    assert store.get("ten_A", agent["id"])["name"] == "Writer"


def test_the_agents_guide_documents_every_autonomy_level_and_tool():
    text = GUIDE.read_text()
    section = text[text.index("\n## Agents\n"):]
    section = section[:section.index("\n## ", 1)]
    for name in (*agent_fields.AUTONOMY_LEVELS, *agent_tools.TOOL_NAMES):
        assert f"`{name}`" in section, name


# ---- runs: the tool step, project files' place (no AWS) ------------------------------------------

class FakeTenants:
    def __init__(self, storage: dict | None) -> None:
        self.storage = storage

    def get_consistent(self, tenant_id):
        return {"id": tenant_id, **({"storage": self.storage} if self.storage else {})}

    get = get_consistent


def test_a_tool_runs_only_after_the_cancel_check_and_the_check_can_stop_it():
    from svc_core.domain import agent_runs

    class Files:
        written: list = []

        def put(self, *args):
            self.written.append(args)

    class Stop(Exception):
        pass

    def stop():
        raise Stop()

    files = Files()
    toolbox = agent_runs.Toolbox("ten_A", {"id": "proj_1"}, files)
    run: dict = {"steps": []}
    uses = [{"toolUseId": "t1", "name": "list_files", "input": {}},
            {"toolUseId": "t2", "name": "write_file", "input": {"path": "a.md", "content": "x"}}]
    with pytest.raises(Stop):
        agent_runs._run_tools(uses[1:], ["write_file"], "autonomous", toolbox, run, [], before_tool=stop)
    assert files.written == [] and run["steps"] == []
    # without the hook (chat's use): the same call as before, the write made
    results, paused = agent_runs._run_tools(uses[1:], ["write_file"], "autonomous", toolbox, run, [])
    assert not paused and results[0]["toolResult"]["status"] == "success" and len(files.written) == 1


def test_project_files_are_the_platform_bucket_unless_the_tenant_chose_byos(monkeypatch):
    from svc_core.adapters import project_files, project_files_bucket
    from svc_core.domain.storage import files_for
    assert files_for("ten_A", FakeTenants(None)) is project_files_bucket
    assert files_for("ten_A", FakeTenants({"storageMode": "platform"})) is project_files_bucket
    # a stored endpoint the SSRF rules refuse now (the metadata service) is refused before any key opens
    byos = {"storageMode": "byos", "byosProvider": "r2", "byosEndpoint": "https://169.254.169.254",
            "byosBucket": "b-1", "byosCredentials": {"alg": "none"}}
    with pytest.raises(project_files.StorageUnavailable, match="metadata service"):
        files_for("ten_A", FakeTenants(byos))


def test_a_storage_failure_is_the_tools_error_for_the_model():
    from svc_core.adapters import project_files
    from svc_core.domain import agent_runs

    class Broken:
        def get(self, *args):
            raise project_files.StorageUnavailable("The tenant's storage failed (AccessDenied): no.")

    toolbox = agent_runs.Toolbox("ten_A", {"id": "proj_1"}, Broken())
    model_text, status, result = agent_runs._call_tool(toolbox, "read_file", {"path": "a.md"})
    assert status == "error" and model_text == result == "The tool failed: The tenant's storage failed (AccessDenied): no."
