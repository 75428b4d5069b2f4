"""Every derived file (openapi.json, events/) is what scripts/generate writes from its source, and a
change to a source that is not regenerated is caught."""

from __future__ import annotations

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
        "GET", "/api/v1/projects/{id}/files", "/api/v1/projects/proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA/files")


def test_a_removed_route_and_a_changed_document_are_stale_too():
    files = generate.derived_files()
    files[openapi.DOCUMENT] = files[openapi.DOCUMENT].replace('"name"', '"title"', 1)
    del files[sample_events.EVENTS_DIR / "Projects-GetProject.json"]
    assert generate.stale(files) == ["functions/meta/openapi.json is out of date",
                                     "events/Projects-GetProject.json is written by nothing any more"]


def test_the_check_names_the_command_to_run(monkeypatch, capsys):
    files = generate.derived_files()
    files[sample_events.EVENTS_DIR / "Projects-GetProject.json"] += " "
    monkeypatch.setattr(generate, "derived_files", lambda: files)
    assert generate.main(["--check"]) == 1
    out = capsys.readouterr().out
    assert "events/Projects-GetProject.json is out of date" in out and "run scripts/generate" in out


def test_the_events_have_sam_clis_shape():
    # What the handlers rely on: a base64 body, the stage in the context's path, the route's resource.
    event = json.loads((sample_events.EVENTS_DIR / "Projects-CreateProject.json").read_text())
    assert event["isBase64Encoded"] is True and event["body"] == "eyJuYW1lIjoiRXhhbXBsZSJ9"
    assert event["requestContext"]["path"] == "/v1/api/v1/projects"
    assert event["requestContext"]["resourcePath"] == event["resource"] == "/api/v1/projects"
    assert event["headers"]["Host"] != event["multiValueHeaders"]["Host"][0]  # as SAM CLI writes them
