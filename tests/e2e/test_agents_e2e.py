"""Agents on the local stack with the offline model, over real HTTP (issue 7's "done when"): an
autonomous run writes the file to the project's storage, a suggest run only proposes it; a
supervised run waits and is approved; an async run is finished by the stack's own worker (the
poller of AgentRunQueue that template.yaml declares)."""

from __future__ import annotations

import time

import botocore.session
import httpx

GOAL = "Write the file notes.md with 'hello from offline'"


def client(stack) -> httpx.Client:
    return httpx.Client(base_url=stack.base_url, timeout=20,
                        headers={"Authorization": f"Bearer {stack.credentials['apiKey']}"})


def stored_file(stack, project_id: str, path: str) -> str | None:
    s3 = botocore.session.get_session().create_client(
        "s3", region_name="us-east-1", endpoint_url=stack.emulator_endpoint,
        aws_access_key_id="local", aws_secret_access_key="local")
    key = f"tenants/{stack.credentials['tenantId']}/projects/{project_id}/files/{path}"
    try:
        return s3.get_object(Bucket=stack.environment["PROJECT_FILES_BUCKET"], Key=key)["Body"].read().decode()
    except s3.exceptions.NoSuchKey:
        return None


def agent_and_project(http: httpx.Client, level: str) -> tuple[str, str]:
    project = http.post("/api/v1/projects", json={"name": f"{level} notes"})
    agent = http.post("/api/v1/agents", json={"name": "Notes", "systemPrompt": "You keep notes.",
                                              "config": {"autonomyLevel": level}})
    assert project.status_code == 201 and agent.status_code == 201, (project.text, agent.text)
    return agent.json()["data"]["id"], project.json()["data"]["id"]


def test_an_autonomous_offline_run_writes_the_file_and_a_suggest_run_only_proposes_it(local_stack):
    with client(local_stack) as http:
        agent_id, project_id = agent_and_project(http, "autonomous")
        done = http.post(f"/api/v1/agents/{agent_id}/execute", json={"goal": GOAL, "projectId": project_id})
        suggest_id, suggest_project = agent_and_project(http, "suggest")
        proposed = http.post(f"/api/v1/agents/{suggest_id}/execute", json={"goal": GOAL, "projectId": suggest_project})
    run = done.json()["data"]
    assert done.status_code == 201 and run["status"] == "completed" and run["model"] == "offline", done.text
    assert stored_file(local_stack, project_id, "notes.md") == "hello from offline"
    suggestion = proposed.json()["data"]
    assert proposed.status_code == 201 and suggestion["status"] == "completed", proposed.text
    assert "Proposed changes (not applied):\n- write_file notes.md" in suggestion["output"]
    assert [s["status"] for s in suggestion["steps"] if s["type"] == "tool"] == ["proposed"]
    assert stored_file(local_stack, suggest_project, "notes.md") is None


def test_a_supervised_run_is_approved_and_an_async_run_is_finished_by_the_worker(local_stack):
    with client(local_stack) as http:
        agent_id, project_id = agent_and_project(http, "supervised")
        paused = http.post(f"/api/v1/agents/{agent_id}/execute", json={"goal": GOAL, "projectId": project_id})
        run_id = paused.json()["data"]["id"]
        assert paused.json()["data"]["status"] == "awaiting_approval", paused.text
        assert stored_file(local_stack, project_id, "notes.md") is None
        approved = http.post(f"/api/v1/agents/{agent_id}/runs/{run_id}/approve")
        assert approved.status_code == 200 and approved.json()["data"]["status"] == "completed", approved.text
        assert stored_file(local_stack, project_id, "notes.md") == "hello from offline"

        auto_id, auto_project = agent_and_project(http, "autonomous")
        queued = http.post(f"/api/v1/agents/{auto_id}/execute",
                           json={"goal": GOAL, "projectId": auto_project, "async": True})
        assert queued.status_code == 202 and queued.json()["data"]["status"] == "queued", queued.text
        url = f"/api/v1/agents/{auto_id}/runs/{queued.json()['data']['id']}"
        deadline, status = time.monotonic() + 30, "queued"
        while status in ("queued", "running") and time.monotonic() < deadline:
            time.sleep(0.1)
            status = http.get(url).json()["data"]["status"]
    assert status == "completed"
    assert stored_file(local_stack, auto_project, "notes.md") == "hello from offline"
