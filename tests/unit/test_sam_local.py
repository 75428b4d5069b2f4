"""The pieces `sam local` users get from the local stack (devstack/sam_local.py): the --env-vars
document, the filling of the events' placeholders, and the template's empty endpoint variables."""

from __future__ import annotations

import base64
import json

import boto3
import pytest

from devstack import sam_local, sample_events
from devstack.template import Resolver

STACK_ENV = {"AWS_ENDPOINT_URL": "http://127.0.0.1:4566", "AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:8000",
             "AWS_ENDPOINT_URL_DYNAMODB_STREAMS": "http://127.0.0.1:8000", "PROJECTS_TABLE": "ProjectsTable",
             "AGENT_RUN_QUEUE_URL": "http://127.0.0.1:4566/123456789012/AgentRunQueue",
             "CORS_ALLOWED_ORIGINS": "http://localhost:5173", "PUBLIC_BASE_URL": "http://127.0.0.1:3000"}


def test_the_env_vars_document_points_every_function_at_the_host_address():
    document = sam_local.env_vars(STACK_ENV, {}, "host.docker.internal")
    functions = set(Resolver({}).of_type("AWS::Serverless::Function"))
    assert set(document) == functions | {"Parameters"}
    projects = document["ProjectsFunction"]
    assert projects["AWS_ENDPOINT_URL"] == "http://host.docker.internal:4566"
    assert projects["AWS_ENDPOINT_URL_DYNAMODB"] == "http://host.docker.internal:8000"
    assert projects["PUBLIC_BASE_URL"] == "http://host.docker.internal:3000"
    assert projects["PROJECTS_TABLE"] == "ProjectsTable"
    assert projects["CORS_ALLOWED_ORIGINS"] == "http://localhost:5173"  # an origin of the browser, not the stack's
    assert document["Parameters"]["AGENT_RUN_QUEUE_URL"] == "http://host.docker.internal:4566/123456789012/AgentRunQueue"
    # SAM sets only what the template declares: every function declares the endpoint variables.
    for logical_id in functions:
        assert {"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"} <= set(Resolver({}).function_environment(logical_id))


def test_an_empty_endpoint_variable_leaves_the_clients_on_aws(monkeypatch):
    # What template.yaml's empty AWS_ENDPOINT_URL* mean for a deployed function.
    monkeypatch.setenv("AWS_ENDPOINT_URL", "")
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", "")
    assert boto3.client("dynamodb", region_name="eu-west-1").meta.endpoint_url == "https://dynamodb.eu-west-1.amazonaws.com"
    assert boto3.client("sqs", region_name="eu-west-1").meta.endpoint_url.startswith("https://sqs.eu-west-1.")


def test_fill_replaces_placeholders_in_the_path_the_headers_and_the_base64_body():
    event = json.loads((sample_events.EVENTS_DIR / "Agents-ExecuteAgent.json").read_text())
    filled = sam_local.fill(event, {"api_key": "k", "agents": "agt_1", "projects": "proj_1"})
    assert filled["path"] == "/api/v1/agents/agt_1/execute" and filled["pathParameters"] == {"id": "agt_1"}
    assert filled["headers"]["Authorization"] == "Bearer k"
    assert json.loads(base64.b64decode(filled["body"]))["projectId"] == "proj_1"


def test_a_placeholder_no_sample_fills_is_named_with_where_to_add_one():
    event = sample_events.proxy_event("GET", "/api/v1/events/{id}", "/api/v1/events/{{events}}", "")
    with pytest.raises(sam_local.MissingSample) as missing:
        sam_local.fill(event, {})
    assert "{{events}}" in str(missing.value) and "CREATED_BY" in str(missing.value)
    assert sam_local.fill(event, {}, absent_ok=True)["path"] == f"/api/v1/events/{sam_local.ABSENT_ID}"


def test_the_kept_samples_leave_out_credentials_sessions_and_spares():
    values = {"api_key": "k", "password": "p", "email": "e", "access_token": "a", "spare:refresh_token": "r",
              "projects": "proj_1", "spare:projects": "proj_2"}
    assert sam_local.lasting(values) == {"projects": "proj_1"}
