"""A function's first read, in a fresh process as Lambda starts one, loads no pydantic (about 50 ms of
a cold start: svc_core/http/binding.py). Each function's everyday read and every list
(devstack/routes.py) is served once in a new interpreter against the emulator, and the process
reports what it loaded; a write and a bad read, which pydantic decides, load it as they must."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from devstack import routes
from tests.support.functions import api_event
from tests.support.route_objects import MADE, credential_for, make_each

ROOT = Path(__file__).resolve().parents[2]
LAYER = ROOT / "layers" / "shared" / "python"

CHILD = """
import json, sys
import app
event = json.load(open(sys.argv[1]))
response = app.lambda_handler(event, None)
print(json.dumps({"status": response["statusCode"], "pydantic": "pydantic" in sys.modules}))
"""

# Each function's everyday read and every list (devstack/routes.py): (function directory, event file,
# the collection its path parameter names an object of, or None).
READS = sorted({(r.directory, r.event, r.parents[-1] if r.parents else None)
                for r in [*routes.everyday_reads().values(), *routes.list_routes()]})


def test_every_read_names_an_object_tests_support_makes():
    missing = {event: parent for _, event, parent in READS if parent is not None and parent not in MADE}
    assert not missing, f"no way to make the object these reads name: add it to tests/support/route_objects.py: {missing}"


@pytest.fixture(scope="module")
def made(emulator):
    from tests.support.stack import provisioned_stack
    for stack in provisioned_stack(emulator):
        tenant_id, key = stack.tenant_with_key()
        yield key, {**make_each(MADE, tenant_id, key), "tenantId": tenant_id}, dict(os.environ)


def _first_request(directory: str, event: dict, environment: dict, tmp_path: Path) -> dict:
    event_file = tmp_path / "event.json"
    event_file.write_text(json.dumps(event))
    env = {**environment, "PYTHONPATH": os.pathsep.join([str(ROOT / "functions" / directory), str(LAYER)])}
    done = subprocess.run([sys.executable, "-c", CHILD, str(event_file)], env=env, capture_output=True,
                          text=True, timeout=120, cwd=ROOT / "functions" / directory)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("directory, event_name, resource", READS, ids=[r[1] for r in READS])
def test_a_functions_first_read_loads_no_pydantic(made, tmp_path, directory, event_name, resource):
    key, ids, environment = made
    path_params = {"id": ids[resource]} if resource else None
    token = credential_for(event_name, ids["tenantId"], key)
    answered = _first_request(directory, api_event(event_name, token=token, path_params=path_params),
                              environment, tmp_path)
    assert answered["status"] in (200, 204)
    assert answered["pydantic"] is False


def test_a_write_and_a_read_pydantic_refuses_load_it(made, tmp_path):
    """The control: the same child sees pydantic when a request needs it."""
    key, _, environment = made
    wrote = _first_request("projects", api_event("Projects-CreateProject", token=key, body={"name": "Q"}),
                           environment, tmp_path)
    assert wrote == {"status": 201, "pydantic": True}
    refused = _first_request("projects", api_event("Projects-ListProjects", token=key, query={"limit": "0"}),
                             environment, tmp_path)
    assert refused == {"status": 400, "pydantic": True}
