"""The local stack answers like the deployed API: routes, envelope, errors, events."""

from __future__ import annotations

import json
import time

import botocore.session
import httpx


def client(stack, key=None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key or stack.credentials['apiKey']}"}
    return httpx.Client(base_url=stack.base_url, headers=headers, timeout=10)


def test_the_readme_session_creates_and_lists_projects(local_stack):
    with client(local_stack) as http:
        created = http.post("/api/v1/projects", json={"name": "Apollo", "language": "python"})
        assert created.status_code == 201
        project = created.json()["data"]
        listed = http.get("/api/v1/projects").json()["data"]["items"]
    assert project["id"] in [p["id"] for p in listed]
    assert created.headers["x-request-id"] == created.json()["meta"]["request_id"]
    assert int(created.headers["x-ratelimit-limit"]) == 2 * 1000  # the starter plan's (conftest): 2 x RateLimitPerWindow


def test_paths_no_route_matches_get_the_api_envelope(local_stack):
    with client(local_stack) as http:
        outside = http.get("/not/the/api")
        inside = http.get("/api/v1/no/such/thing")
        anonymous = httpx.get(local_stack.base_url + "/api/v1/no/such/thing")
        wrong_method = http.put("/api/v1/projects", json={})
    assert outside.status_code == 404 and outside.json()["error"]["code"] == "RESOURCE_NOT_FOUND"
    assert inside.status_code == 404 and inside.json()["error"]["code"] == "RESOURCE_NOT_FOUND"
    assert anonymous.status_code == 401 and anonymous.json()["error"]["code"] == "UNAUTHORIZED"
    assert wrong_method.status_code == 405 and wrong_method.headers["allow"] == "GET, POST"


def test_a_handler_that_raises_gives_the_500_envelope_and_the_stack_keeps_serving(local_stack, monkeypatch):
    from svc_core.data import projects_table

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire: secret internals")

    monkeypatch.setattr(projects_table, "list_for_tenant", broken)
    with client(local_stack) as http:
        failed = http.get("/api/v1/projects")
        monkeypatch.undo()
        after = http.get("/api/v1/projects")
    assert failed.status_code == 500
    assert failed.json()["error"] == {"code": "INTERNAL_ERROR", "message": "The server failed to handle the request.",
                                      "details": {}}
    assert "disk on fire" not in failed.text and "Traceback" not in failed.text
    assert after.status_code == 200


def _sam_shape(value):
    if isinstance(value, dict):
        return {k: _sam_shape(v) for k, v in value.items()}
    return type(value).__name__


def test_gateway_events_have_the_shape_of_sam_generated_events(local_stack):
    from tests.support.functions import ROOT
    with client(local_stack) as http:
        project = http.post("/api/v1/projects?x=1&x=2", json={"name": "Shape"}).json()["data"]
        http.get(f"/api/v1/projects/{project['id']}", headers={"X-Multi": "a"})
    by_resource = {(e["httpMethod"], e["resource"]): e for e in local_stack.recorder.events}
    for name, method, resource in [("Projects-CreateProject", "POST", "/api/v1/projects"),
                                   ("Projects-GetProject", "GET", "/api/v1/projects/{id}")]:
        ours = by_resource[(method, resource)]
        sam = json.loads((ROOT / "events" / f"{name}.json").read_text())
        assert set(sam) <= set(ours), f"missing top-level keys: {set(sam) - set(ours)}"
        assert set(sam["requestContext"]) - {"resourceId"} <= set(ours["requestContext"])
        assert set(sam["requestContext"]["identity"]) <= set(ours["requestContext"]["identity"])
        for key in ("resource", "path", "httpMethod"):
            assert type(ours[key]) is type(sam[key])
        assert ours["requestContext"]["stage"] == "v1"
        assert ours["requestContext"]["resourcePath"] == resource
        assert ours["requestContext"]["identity"]["sourceIp"] == "127.0.0.1"
        assert ours["requestContext"]["path"] == "/v1" + ours["path"]
    post = by_resource[("POST", "/api/v1/projects")]
    assert post["multiValueQueryStringParameters"] == {"x": ["1", "2"]}
    assert post["queryStringParameters"] == {"x": "2"}  # API Gateway keeps the last value
    assert post["isBase64Encoded"] is False and json.loads(post["body"]) == {"name": "Shape"}
    get = by_resource[("GET", "/api/v1/projects/{id}")]
    assert get["pathParameters"] == {"id": project["id"]}
    assert get["multiValueHeaders"]["X-Multi"] == ["a"] and get["body"] is None


def test_binary_bodies_arrive_base64_encoded(local_stack):
    with client(local_stack) as http:
        answer = http.post("/api/v1/projects", content=bytes(range(256)),
                           headers={"Content-Type": "application/octet-stream"})
    event = local_stack.recorder.events[-1]
    assert event["isBase64Encoded"] is True
    import base64
    assert base64.b64decode(event["body"]) == bytes(range(256))
    assert answer.status_code == 415


def test_a_created_project_reaches_the_webhook_queue_through_stream_bus_and_rule(local_stack):
    session = botocore.session.get_session()
    sqs = session.create_client("sqs", region_name="us-east-1", endpoint_url=local_stack.emulator_endpoint,
                                aws_access_key_id="local", aws_secret_access_key="local")
    queue = sqs.get_queue_url(QueueName="WebhookQueue")["QueueUrl"]
    # The stack's webhook fan-out consumes the queue: what its poller hands the function is looked at.
    taken: list[dict] = []
    poller = next(p for p in local_stack.pollers if getattr(p, "url", None) == queue)
    real_invoke = poller.invoke
    poller.invoke = lambda event: (taken.extend(event["Records"]), real_invoke(event))[1]
    try:
        with client(local_stack) as http:
            project = http.post("/api/v1/projects", json={"name": "Evented"}).json()["data"]
        found = None
        deadline = time.monotonic() + 20
        while found is None and time.monotonic() < deadline:
            for record in list(taken):
                body = json.loads(record["body"])
                if body["detail"]["data"].get("id") == project["id"]:
                    found = body
            time.sleep(0.02)
    finally:
        poller.invoke = real_invoke
    assert found is not None, "the project.created event never reached the queue"
    assert found["detail-type"] == "project.created" and found["source"] == "svc.api"
    assert found["detail"]["tenantId"] == local_stack.credentials["tenantId"]
    assert found["detail"]["id"].startswith("evt_")
