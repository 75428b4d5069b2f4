"""A client generated from the served OpenAPI document by openapi-python-client, used against the
local stack as a user's tooling would: it generates without a warning, parses answers and errors
into its models, and reads the chat stream as the text it is."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.e2e.test_chat_e2e import wait_for_turn_end

PACKAGE = "svc_generated_client"
MISSING_PROJECT = "proj_00000000000000000000000000"


@pytest.fixture(scope="module")
def generated(local_stack, tmp_path_factory):
    root = tmp_path_factory.mktemp("generated")
    document = root / "openapi.json"
    document.write_text(httpx.get(f"{local_stack.base_url}/api/v1/openapi.json", timeout=10).text)
    config = root / "config.yaml"
    config.write_text(f"package_name_override: {PACKAGE}\npost_hooks: []\n")  # no formatter needed
    generator = Path(sys.executable).with_name("openapi-python-client")
    run = subprocess.run([str(generator), "generate", "--path", str(document), "--meta", "none",
                          "--output-path", str(root / PACKAGE), "--config", str(config), "--fail-on-warning"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    sys.path.insert(0, str(root))
    try:
        yield lambda name: importlib.import_module(f"{PACKAGE}.{name}")
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


def test_the_generated_client_creates_lists_and_reads_errors(local_stack, generated):
    client_module, models = generated("client"), generated("models")
    create, listing, read = (generated(f"api.projects.{n}") for n in ("create_project", "list_projects", "get_project"))
    client = client_module.AuthenticatedClient(base_url=local_stack.base_url, token=local_stack.credentials["apiKey"])

    created = create.sync_detailed(client=client, body=models.ProjectCreate(name="Generated", language="python"))
    assert created.status_code == 201, created.content
    assert isinstance(created.parsed, models.ProjectResponse) and created.parsed.data.id.startswith("proj_")

    page = listing.sync(client=client, limit=100)
    assert created.parsed.data.id in [p.id for p in page.data.items]

    missing = read.sync_detailed(id=MISSING_PROJECT, client=client)
    assert missing.status_code == 404 and isinstance(missing.parsed, models.ErrorEnvelope)
    assert missing.parsed.error.code == "RESOURCE_NOT_FOUND"

    anonymous = client_module.Client(base_url=local_stack.base_url)
    refused = listing.sync_detailed(client=anonymous)  # type: ignore[arg-type]
    assert refused.status_code == 401 and refused.parsed.error.code == "UNAUTHORIZED"


def test_the_generated_client_reads_the_chat_stream_as_text(local_stack, generated):
    client_module, models = generated("client"), generated("models")
    create, send, stream = (generated(f"api.chat.{n}")
                            for n in ("create_chat_session", "send_chat_message", "stream_chat_session"))
    client = client_module.AuthenticatedClient(base_url=local_stack.base_url, token=local_stack.credentials["apiKey"])

    session = create.sync(client=client, body=models.ChatSessionCreate()).data
    started = send.sync_detailed(session.id, client=client, body=models.ChatMessageCreate(content="Hello, generated."))
    assert started.status_code == 202, started.content
    with httpx.Client(base_url=local_stack.base_url, timeout=10,
                      headers={"Authorization": f"Bearer {local_stack.credentials['apiKey']}"}) as http:
        wait_for_turn_end(http, session.id)

    answer = stream.sync_detailed(session.id, client=client, last_event_id_query="0")
    assert answer.status_code == 200 and isinstance(answer.parsed, str)
    assert "event: message_start" in answer.parsed and "event: done" in answer.parsed
    assert "Hello, generated." in answer.parsed
