"""Agent runs end to end: the agents handler fed real API Gateway events, on the moto server,
with a scripted model (the registry's test hook) driving the tool loop, and once with the local
stack's offline model.

Autonomous runs write files to the bucket; suggest runs only propose; supervised runs stop in
awaiting_approval; the step limit; invalid tool input answered as an error; a model failure mid-run;
a secret's value never stored or answered; usage metered per call; events in the outbox; 404s for
unknown and other tenants' agents, projects and runs.
"""

from __future__ import annotations

import json
import re

import pytest

from svc_core.adapters.models.registry import scripted
from svc_core.adapters.models.scripted import ScriptedProvider, text_answer, tool_answer
from svc_core.platform.errors import ModelThrottled, ModelUnavailable
from tests.support import projects as project_api
from tests.support.functions import call
from tests.support.projects import assert_envelope, assert_error, outbox_events
from tests.support.stack import provisioned_stack

RUN_ID = re.compile(r"^run_[0-9A-HJKMNP-TV-Z]{26}$")
HAIKU = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
MISSING_AGENT = "agt_01JD2Q7ZB6V8S3K4X9W2M5N7PA"
MISSING_PROJECT = "proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA"
MISSING_RUN = "run_01JD2Q7ZB6V8S3K4X9W2M5N7PA"
RUN_FIELDS = {"id", "agentId", "projectId", "goal", "status", "output", "steps", "usage", "model", "created_at",
              "completed_at", "error", "background", "cancelRequested"}
PROMPT = "You keep the project's notes."


@pytest.fixture(scope="module")
def stack(emulator):
    yield from provisioned_stack(emulator)


# ---- calling the service -----------------------------------------------------------------

def api(event: str, token: str, **kwargs):
    return call("agents", f"Agents-{event}", token=token, **kwargs)


def new_agent(key: str, level: str = "autonomous", **config) -> dict:
    reply = api("CreateAgent", key, body={"name": "Notes", "systemPrompt": PROMPT,
                                          "config": {"autonomyLevel": level, **config}})
    assert reply.status == 201, reply
    return reply.data


def execute(key: str, agent_id: str, project_id: str, goal: str = "Write the notes."):
    return api("ExecuteAgent", key, path_params={"id": agent_id}, body={"goal": goal, "projectId": project_id})


def run_with(script: list, key: str, agent_id: str, project_id: str, goal: str = "Write the notes."):
    provider = ScriptedProvider(script, model_id=HAIKU)
    with scripted(provider):
        reply = execute(key, agent_id, project_id, goal)
    return reply, provider


def setup(stack, level: str = "autonomous", **config):
    tenant, key = stack.tenant_with_key()
    project = project_api.create(key, name="Docs")
    agent = new_agent(key, level, **config)
    return tenant, key, project["id"], agent["id"]


def file_in_bucket(tenant: str, project_id: str, path: str) -> str | None:
    from svc_core.adapters import aws
    from svc_core.platform.config import settings
    try:
        answer = aws.client("s3").get_object(Bucket=settings().project_files_bucket,
                                             Key=f"tenants/{tenant}/projects/{project_id}/files/{path}")
    except Exception as exc:
        if aws.error_code(exc) in ("NoSuchKey", "404"):
            return None
        raise
    return answer["Body"].read().decode()


def run_events(run_id: str) -> list[str]:
    return [e["type"] for e in outbox_events() if e["data"].get("runId") == run_id]


def stored_runs(tenant: str) -> list[dict]:
    from svc_core.adapters import aws
    from svc_core.platform.config import settings
    return aws.client("dynamodb").query(TableName=settings().runs_table, ConsistentRead=True,
                                        KeyConditionExpression="tenantId = :t",
                                        ExpressionAttributeValues={":t": {"S": tenant}})["Items"]


WRITE = tool_answer("write_file", {"path": "docs/notes.md", "content": "hello"})


# ---- the loop and the autonomy levels ------------------------------------------------------

def test_an_autonomous_run_writes_the_file_and_completes(stack):
    from svc_core.data import usage_table
    tenant, key, project_id, agent_id = setup(stack)
    reply, provider = run_with([WRITE, text_answer("Done.", 20, 7)], key, agent_id, project_id)
    assert reply.status == 201, reply
    assert_envelope(reply)
    run = reply.data
    assert set(run) == RUN_FIELDS and RUN_ID.match(run["id"])
    assert (run["agentId"], run["projectId"], run["goal"]) == (agent_id, project_id, "Write the notes.")
    assert (run["status"], run["output"], run["error"], run["model"]) == ("completed", "Done.", None, HAIKU)
    assert run["completed_at"] >= run["created_at"]
    assert [(s["type"], s.get("status")) for s in run["steps"]] == [("model", None), ("tool", "success"),
                                                                     ("model", None)]
    assert run["steps"][1]["result"] == "wrote docs/notes.md (5 bytes)"
    assert file_in_bucket(tenant, project_id, "docs/notes.md") == "hello"
    # the model was offered the agent's tools with their schemas, and got the tool's result back
    first, second = provider.requests
    assert PROMPT in first["system"][0]["text"]
    assert [t["toolSpec"]["name"] for t in first["toolConfig"]["tools"]] == [
        "read_project", "list_files", "read_file", "write_file", "read_secret"]
    assert first["toolConfig"]["tools"][3]["toolSpec"]["inputSchema"]["json"]["required"] == ["path", "content"]
    assert second["messages"][-1]["content"][0]["toolResult"]["status"] == "success"
    # usage: every call metered, the run's totals their sum
    records = usage_table.records_for(tenant, run["id"])
    assert len(records) == 2 and {r["source"] for r in records} == {"run"}
    assert run["usage"] == {"inputTokens": 30, "outputTokens": 12,
                            "microCredits": sum(r["microCredits"] for r in records)}
    assert run_events(run["id"]) == ["agent.started", "agent.completed"]
    again = api("GetRun", key, path_params={"id": agent_id, "run_id": run["id"]})
    assert again.status == 200 and again.data == run


def test_a_suggest_run_proposes_the_change_and_writes_nothing(stack):
    tenant, key, project_id, agent_id = setup(stack, "suggest")
    reply, provider = run_with([WRITE, text_answer("I proposed the notes.")], key, agent_id, project_id)
    run = reply.data
    assert reply.status == 201 and run["status"] == "completed", reply
    assert file_in_bucket(tenant, project_id, "docs/notes.md") is None
    assert run["steps"][1]["status"] == "proposed"
    assert run["output"] == ("I proposed the notes.\n\nProposed changes (not applied):\n"
                             "- write_file docs/notes.md (5 bytes)")
    told = provider.requests[1]["messages"][-1]["content"][0]["toolResult"]["content"][0]["text"]
    assert told.startswith("Not applied")


def test_a_supervised_run_stops_awaiting_approval_at_the_first_change(stack):
    tenant, key, project_id, agent_id = setup(stack, "supervised")
    reply, provider = run_with([tool_answer("list_files", {}), WRITE], key, agent_id, project_id)
    run = reply.data
    assert reply.status == 201 and run["status"] == "awaiting_approval", reply
    assert (run["completed_at"], run["error"]) == (None, None)
    assert [(s["type"], s.get("status")) for s in run["steps"]] == [
        ("model", None), ("tool", "success"), ("model", None), ("tool", "awaiting_approval")]
    assert json.loads(run["steps"][1]["result"]) == {"files": [], "truncated": False}
    assert file_in_bucket(tenant, project_id, "docs/notes.md") is None and provider.remaining == 0
    assert run_events(run["id"]) == ["agent.started"]


def test_the_step_limit_fails_the_run(stack):
    tenant, key, project_id, agent_id = setup(stack, stepLimit=2)
    script = [tool_answer("list_files", {}), tool_answer("list_files", {}, tool_use_id="tooluse_2")]
    reply, provider = run_with(script, key, agent_id, project_id)
    run = reply.data
    assert reply.status == 201 and run["status"] == "failed", reply
    assert run["error"]["code"] == "STEP_LIMIT_REACHED"
    assert [s["type"] for s in run["steps"]] == ["model", "tool", "model"] and provider.remaining == 0
    assert run_events(run["id"]) == ["agent.started", "agent.failed"]


def test_invalid_tool_input_is_answered_as_an_error_and_the_loop_goes_on(stack):
    tenant, key, project_id, agent_id = setup(stack)
    script = [tool_answer("write_file", {"path": 3.5}),
              tool_answer("write_file", {"path": "../escape.txt", "content": "x"}, tool_use_id="tooluse_2"),
              tool_answer("read_file", {"path": "missing.txt"}, tool_use_id="tooluse_3"),
              text_answer("Gave up.")]
    reply, provider = run_with(script, key, agent_id, project_id)
    run = reply.data
    assert reply.status == 201 and run["status"] == "completed" and run["output"] == "Gave up.", reply
    tools = [s for s in run["steps"] if s["type"] == "tool"]
    assert [t["status"] for t in tools] == ["error"] * 3
    assert tools[0]["result"].startswith("Invalid input") and "'content' is required" in tools[0]["result"]
    assert tools[0]["input"] == {"path": "3.5"}
    assert "'..'" in tools[1]["result"] and "no file 'missing.txt'" in tools[2]["result"]
    results = [r["messages"][-1]["content"][0]["toolResult"] for r in provider.requests[1:]]
    assert [r["status"] for r in results] == ["error"] * 3


def test_a_model_failure_mid_run_fails_it_and_keeps_the_usage(stack):
    from svc_core.data import usage_table
    tenant, key, project_id, agent_id = setup(stack)
    reply, provider = run_with([tool_answer("read_project", {}), ModelThrottled()], key, agent_id, project_id)
    run = reply.data
    assert reply.status == 201 and run["status"] == "failed", reply
    assert run["error"]["code"] == "MODEL_THROTTLED" and run["completed_at"]
    assert run["error"]["retryAfterSeconds"] == 10   # the provider said nothing: the default wait
    assert json.loads(run["steps"][1]["result"])["id"] == project_id
    assert len(usage_table.records_for(tenant, run["id"])) == 1
    assert run["usage"]["inputTokens"] == 10
    failed = [e for e in outbox_events() if e["data"].get("runId") == run["id"] and e["type"] == "agent.failed"]
    assert len(failed) == 1 and failed[0]["data"]["error"]["code"] == "MODEL_THROTTLED"
    assert failed[0]["tenantId"] == tenant


def test_a_call_that_failed_after_the_provider_counted_tokens_is_billed_and_marked_failed(stack):
    from svc_core.adapters.models.base import Received
    from svc_core.data import usage_table
    tenant, key, project_id, agent_id = setup(stack)
    received = Received(HAIKU, "bedrock")
    received.report({"inputTokens": 700, "outputTokens": 30})
    broken = received.attach(ModelUnavailable("The model's answer arrived damaged; try again.",
                                              {"model": HAIKU, "reason": "bad_stream"}), {"messages": []})
    reply, _ = run_with([tool_answer("read_project", {}), broken], key, agent_id, project_id)
    run = reply.data
    assert reply.status == 201 and run["status"] == "failed" and run["error"]["code"] == "MODEL_UNAVAILABLE"
    records = usage_table.records_for(tenant, run["id"])
    assert [(r["inputTokens"], r["outputTokens"], r["failed"]) for r in records] == [(10, 5, False), (700, 30, True)]
    assert run["usage"] == {"inputTokens": 710, "outputTokens": 35,
                            "microCredits": sum(r["microCredits"] for r in records)}


def test_after_a_fallback_the_run_names_the_model_that_answered_as_its_usage_does(stack):
    from svc_core.adapters.models.registry import WithFallback
    from svc_core.data import usage_table
    tenant, key, project_id, agent_id = setup(stack)
    fallback_model = "anthropic.claude-sonnet-4-5-20250929-v1:0"
    provider = WithFallback(ScriptedProvider([ModelThrottled()], model_id=HAIKU),
                            ScriptedProvider([text_answer("Done by the fallback.")], model_id=fallback_model))
    with scripted(provider):
        reply = execute(key, agent_id, project_id, "Say hello.")
    run = reply.data
    assert reply.status == 201 and run["status"] == "completed" and run["model"] == fallback_model, run
    assert [r["model"] for r in usage_table.records_for(tenant, run["id"])] == [fallback_model]


def test_a_run_the_model_provider_throttled_says_how_long_the_provider_asked_to_wait(stack):
    _, key, project_id, agent_id = setup(stack)
    reply, _ = run_with([ModelThrottled(retry_after_seconds=42)], key, agent_id, project_id)
    run = reply.data
    assert reply.status == 201 and run["status"] == "failed"
    assert run["error"] == {"code": "MODEL_THROTTLED", "message": ModelThrottled.default_message,
                            "retryAfterSeconds": 42}
    unavailable, _ = run_with([ModelUnavailable()], key, agent_id, project_id)
    assert "retryAfterSeconds" not in unavailable.data["error"]


def test_a_secret_value_goes_to_the_model_only(stack):
    tenant, key, project_id, agent_id = setup(stack)
    value = "s3cr3t-Value-9f2c"
    made = call("secrets", "Secrets-CreateSecret", token=key, body={"name": "DEPLOY_TOKEN", "value": value})
    assert made.status == 201, made
    script = [tool_answer("read_secret", {"name": "DEPLOY_TOKEN"}),
              tool_answer("write_file", {"path": "token.txt", "content": f"token={value}"}, tool_use_id="t2"),
              text_answer(f"The token is {value}.")]
    reply, provider = run_with(script, key, agent_id, project_id)
    run = reply.data
    assert reply.status == 201 and run["status"] == "completed", reply
    given = provider.requests[1]["messages"][-1]["content"][0]["toolResult"]["content"][0]["text"]
    assert given == value
    assert run["steps"][1]["result"] == "[secret DEPLOY_TOKEN read]"
    assert run["output"] == "The token is [secret DEPLOY_TOKEN]."
    read = api("GetRun", key, path_params={"id": agent_id, "run_id": run["id"]})
    listed = api("ListRuns", key, path_params={"id": agent_id})
    for text in (reply.text, read.text, listed.text, json.dumps(stored_runs(tenant)),
                 json.dumps([e for e in outbox_events() if e["tenantId"] == tenant])):
        assert value not in text


# ---- reading runs, errors, tenants ---------------------------------------------------------

def test_runs_are_listed_newest_first_in_pages(stack):
    tenant, key, project_id, agent_id = setup(stack)
    made = [run_with([text_answer(f"answer {n}")], key, agent_id, project_id)[0].data["id"] for n in range(3)]
    first = api("ListRuns", key, path_params={"id": agent_id}, query={"limit": "2"})
    assert first.status == 200, first
    assert [r["id"] for r in first.data["items"]] == made[::-1][:2] and first.data["nextCursor"]
    second = api("ListRuns", key, path_params={"id": agent_id},
                 query={"limit": "2", "cursor": first.data["nextCursor"]})
    assert [r["id"] for r in second.data["items"]] == made[:1] and second.data["nextCursor"] is None
    other = new_agent(key)
    assert api("ListRuns", key, path_params={"id": other["id"]}).data == {"items": [], "nextCursor": None}


def test_an_unknown_agent_or_run_is_404_an_unknown_project_409_a_malformed_one_400_and_nothing_is_stored(stack):
    tenant, key, project_id, agent_id = setup(stack)
    details = assert_error(execute(key, MISSING_AGENT, project_id), 404, "RESOURCE_NOT_FOUND")
    assert details == {"id": MISSING_AGENT, "resource": "agent"}
    details = assert_error(execute(key, agent_id, MISSING_PROJECT), 409, "CONFLICT")
    assert details["fields"][0]["field"] == "projectId" and (details["id"], details["resource"]) == (
        MISSING_PROJECT, "project")
    assert assert_error(execute(key, agent_id, "not-a-project"), 400, "VALIDATION_ERROR")["fields"][0]["field"] \
        == "projectId"
    details = assert_error(api("GetRun", key, path_params={"id": agent_id, "run_id": MISSING_RUN}), 404, "RESOURCE_NOT_FOUND")
    assert details == {"id": MISSING_RUN, "resource": "run"}
    assert stored_runs(tenant) == []


def test_another_tenants_agent_and_run_are_404_and_its_project_409(stack):
    tenant_a, key_a, project_a, agent_a = setup(stack)
    tenant_b, key_b, project_b, agent_b = setup(stack)
    run_a = run_with([text_answer("ok")], key_a, agent_a, project_a)[0].data["id"]
    assert assert_error(execute(key_b, agent_a, project_b), 404, "RESOURCE_NOT_FOUND")["resource"] == "agent"
    assert assert_error(execute(key_b, agent_b, project_a), 409, "CONFLICT")["resource"] == "project"
    assert assert_error(api("GetRun", key_b, path_params={"id": agent_a, "run_id": run_a}), 404,
                        "RESOURCE_NOT_FOUND")["resource"] == "agent"
    assert assert_error(api("GetRun", key_b, path_params={"id": agent_b, "run_id": run_a}), 404,
                        "RESOURCE_NOT_FOUND")["resource"] == "run"
    assert assert_error(api("ListRuns", key_b, path_params={"id": agent_a}), 404, "RESOURCE_NOT_FOUND")["resource"] == "agent"
    other_a = new_agent(key_a)  # a run is read only under its own agent
    assert assert_error(api("GetRun", key_a, path_params={"id": other_a["id"], "run_id": run_a}), 404,
                        "RESOURCE_NOT_FOUND")["resource"] == "run"
    assert stored_runs(tenant_b) == []


def test_bad_goals_scopes_and_methods(stack):
    tenant, key, project_id, agent_id = setup(stack)
    for goal in ("", "   ", "x" * 20_001):
        reply = execute(key, agent_id, project_id, goal)
        assert [f["field"] for f in assert_error(reply, 400, "VALIDATION_ERROR")["fields"]] == ["goal"], goal
    reader = stack.new_key(tenant, ["agents:read"])["key"]
    assert assert_error(execute(reader, agent_id, project_id), 403, "FORBIDDEN")["requiredScope"] == "agents:write"
    reply = api("ExecuteAgent", key, path_params={"id": agent_id}, method="GET")
    assert assert_error(reply, 405, "METHOD_NOT_ALLOWED")["allowed"] == ["POST"]
    reply = api("GetRun", key, path_params={"id": agent_id, "run_id": MISSING_RUN}, method="DELETE")
    assert assert_error(reply, 405, "METHOD_NOT_ALLOWED")["allowed"] == ["GET"]
    assert stored_runs(tenant) == []


def test_the_offline_model_runs_an_autonomous_agent_end_to_end(stack):
    from svc_core.data import usage_table
    tenant, key, project_id, agent_id = setup(stack)
    reply = execute(key, agent_id, project_id, "Write the file notes.md with 'hello from offline'")
    run = reply.data
    assert reply.status == 201 and run["status"] == "completed", reply
    assert run["model"] == "offline" and run["output"].startswith("[offline model]")
    assert file_in_bucket(tenant, project_id, "notes.md") == "hello from offline"
    records = usage_table.records_for(tenant, run["id"])
    assert len(records) == 2 and all(r["estimated"] for r in records)
    assert run_events(run["id"]) == ["agent.started", "agent.completed"]
