"""Every derived file (openapi.json, events/) is what scripts/generate writes from its source, and a
change to a source that is not regenerated is caught."""

from __future__ import annotations

import base64
import copy
import json

from devstack import generate, openapi, sample_events
from devstack.template import load


def test_every_derived_file_is_what_scripts_generate_writes():
    stale = generate.stale()
    assert stale == [], f"derived files are stale, run scripts/generate and commit them: {stale}"


def test_a_route_added_to_the_template_without_regenerating_makes_events_stale():
    template = copy.deepcopy(load())
    template["Resources"]["ProjectsFunction"]["Properties"]["Events"]["ListFiles"] = {
        "Type": "Api", "Properties": {"Path": "/api/v1/projects/{id}/files", "Method": "GET"}}
    files = {openapi.DOCUMENT: openapi.DOCUMENT.read_text(), **sample_events.render(template)}
    assert generate.stale(files) == ["events/Projects-ListFiles.json is missing"]
    written = json.loads(files[sample_events.EVENTS_DIR / "Projects-ListFiles.json"])
    assert (written["httpMethod"], written["resource"], written["path"]) == (
        "GET", "/api/v1/projects/{id}/files", "/api/v1/projects/{{projects}}/files")
    assert written["pathParameters"] == {"id": "{{projects}}"}


def test_a_removed_route_and_a_changed_document_are_stale_too():
    files = generate.derived_files()
    files[openapi.DOCUMENT] = files[openapi.DOCUMENT].replace('"name"', '"title"', 1)
    del files[sample_events.EVENTS_DIR / "Projects-GetProject.json"]
    assert generate.stale(files) == ["functions/meta/openapi.json is out of date",
                                     "events/Projects-GetProject.json is written by nothing any more"]


def test_the_check_names_the_command_to_run(monkeypatch, capsys):
    files = generate.derived_files()
    files[sample_events.EVENTS_DIR / "Projects-GetProject.json"] += " "
    monkeypatch.setattr(generate, "derived_files", lambda targets=generate.TARGETS: files)
    assert generate.main(["--check"]) == 1
    out = capsys.readouterr().out
    assert "events/Projects-GetProject.json is out of date" in out and "run scripts/generate" in out


def test_the_events_have_sam_clis_shape():
    # What the handlers rely on: a base64 body, the stage in the context's path, the route's resource.
    event = json.loads((sample_events.EVENTS_DIR / "Projects-CreateProject.json").read_text())
    assert event["isBase64Encoded"] is True and json.loads(base64.b64decode(event["body"])) == {"name": "Sample name"}
    assert event["requestContext"]["path"] == "/v1/api/v1/projects"
    assert event["requestContext"]["resourcePath"] == event["resource"] == "/api/v1/projects"
    assert event["headers"]["Host"] != event["multiValueHeaders"]["Host"][0]  # as SAM CLI writes them


def test_the_events_carry_placeholders_never_a_credential():
    # The committed events name the development key and the sample objects by placeholder; the local
    # stack writes the filled copies (.local/events/).
    for path in sample_events.EVENTS_DIR.glob("*.json"):
        text = path.read_text()
        assert "svc_sdk_" not in text and "svc_cli_" not in text, path.name
    event = json.loads((sample_events.EVENTS_DIR / "Agents-ExecuteAgent.json").read_text())
    assert event["headers"]["Authorization"] == "Bearer {{api_key}}"
    assert event["pathParameters"] == {"id": "{{agents}}"}
    assert json.loads(base64.b64decode(event["body"]))["projectId"] == "{{projects}}"  # an id field of the body too
    assert sample_events.placeholders(event) == {"api_key", "agents", "projects"}


def test_a_delete_names_a_spare_and_a_nested_id_its_collection():
    assert sample_events.placeholder_key("/api/v1/projects/{id}", "id", "DELETE") == "spare:projects"
    assert sample_events.placeholder_key("/api/v1/projects/{id}", "id", "GET") == "projects"
    assert sample_events.placeholder_key("/api/v1/agents/{id}/runs/{run_id}", "run_id") == "agents.runs"
    assert sample_events.placeholder_key("/api/v1/regions/storage/{tenantId}", "tenantId") == "tenant_id"
    assert sample_events.placeholder_key("/api/v1/oauth/{provider}/start", "provider") == "provider"


def test_a_body_comes_from_the_request_models_examples():
    event = json.loads((sample_events.EVENTS_DIR / "Webhooks-CreateWebhook.json").read_text())
    body = json.loads(base64.b64decode(event["body"]))
    assert body == {"events": ["project.created", "project.deleted"], "url": "https://hooks.example.com/svc?token=abc"}
    public = json.loads((sample_events.EVENTS_DIR / "Auth-Register.json").read_text())
    assert "Authorization" not in public["headers"]  # a public operation carries no credential


def test_the_expected_status_is_the_operations_first_2xx_unless_named():
    statuses = sample_events.expected_statuses()
    assert statuses["Projects-CreateProject"] == (201,) and statuses["Projects-GetProject"] == (200,)
    assert statuses["Agents-ApproveRun"] == (sample_events.EXPECTED_STATUS["Agents-ApproveRun"][0],) == (409,)


def test_the_events_target_writes_only_events(monkeypatch, capsys):
    files = generate.derived_files(("events",))
    assert openapi.DOCUMENT not in files and files.keys() == sample_events.render().keys()
    assert generate.main(["events", "--check"]) == 0
    assert f"{len(files)} derived files are up to date" in capsys.readouterr().out
