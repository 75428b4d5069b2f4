"""Every event of events/ succeeds as `sam local invoke` would run it against the local stack: the
function the template names, the environment of the --env-vars file the local stack writes, the
handler invoked in a fresh process (tests/e2e/sam_invoke.py, no Docker), the event's placeholders
filled from the stack's development credentials and sample objects; each answers the status it is
written for (devstack/sample_events.py: the operation's 2xx unless EXPECTED_STATUS says why not).

One interpreter per function imports the handler once; each event is invoked in a child forked
from it, DELETE events last, two functions at a time.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from devstack import sam_local, sample_events
from devstack.bootstrap import bootstrap
from devstack.template import Resolver

ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("sam_invoke.py")
LAYER = ROOT / "layers" / "shared" / "python"
EVENT_NAMES = sorted(path.stem for path in (ROOT / "events").glob("*.json"))


def _function_of(resolver: Resolver, event: dict) -> str:
    """The function whose Api event has this method and path, as SAM finds it."""
    for method, path, logical_id in resolver.api_routes():
        if method == event["httpMethod"] and path == event["resource"]:
            return logical_id
    raise AssertionError(f"no function of template.yaml has the route {event['httpMethod']} {event['resource']}")


def _handler(resolver: Resolver, logical_id: str) -> str:
    props = resolver.resources[logical_id]["Properties"]
    handler = props.get("Handler", resolver.template["Globals"]["Function"].get("Handler", "app.lambda_handler"))
    # The Lambda Web Adapter's start script serves streamed requests; a buffered invocation (what
    # `sam local invoke` makes) goes to the proxy handler beside it.
    return "app.lambda_handler" if handler.endswith(".sh") else handler


# What SAM CLI itself gives the container besides the template's variables: the region and the
# shell's credentials (docs/sam-local.md: any value does for the emulators).
SAM_GIVEN = {"AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "local",
             "AWS_SECRET_ACCESS_KEY": "local"}


def _sam_environment(resolver: Resolver, logical_id: str, env_vars: dict) -> dict[str, str]:
    """As SAM CLI builds it: each variable the template declares for the function, its value from the
    --env-vars file (the function's own entry before "Parameters"), else the template's."""
    declared = resolver.function_environment(logical_id)
    own, shared = env_vars.get(logical_id, {}), env_vars.get("Parameters", {})
    return {**SAM_GIVEN, **{name: own.get(name, shared.get(name, value)) for name, value in declared.items()}}


def _run_function(logical_id: str, handler: str, code_dir: Path, env: dict[str, str], events: dict,
                  out: Path) -> dict:
    base = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "TMPDIR") if k in os.environ}
    process = subprocess.run(
        [sys.executable, str(RUNNER), str(out)], input=json.dumps({
            "code_dir": str(code_dir), "layer": str(LAYER), "handler": handler, "function": logical_id,
            "events": events}),
        capture_output=True, text=True, timeout=300,
        env={**base, **env, "AWS_LAMBDA_FUNCTION_NAME": logical_id, "AWS_SAM_LOCAL": "true"})
    if process.returncode != 0:
        return {name: {"error": f"{logical_id} did not start: {process.stderr[-3000:]}"} for name in events}
    return json.loads(out.read_text())


# The events' caller: a loopback address of its own, so the sign-in throttles it meets are its own.
SOURCE_IP = "127.0.0.77"


@pytest.fixture(scope="module")
def answers(local_stack, tmp_path_factory):
    # A tenant of its own: the events change what they name (plan, settings, storage) and add objects.
    credentials = bootstrap(local_stack.base_url, tmp_path_factory.mktemp("sam-creds") / "credentials.json",
                            email="sam-local@example.com", tenant_name="sam local")
    values = sam_local.create_samples(local_stack.base_url, credentials)
    env_file = sam_local.write_env_vars(local_stack.environment, local_stack.parameters, "127.0.0.1",
                                        tmp_path_factory.mktemp("sam") / "sam-env.json")
    env_vars = json.loads(env_file.read_text())
    resolver = Resolver(local_stack.parameters)
    by_function: dict[str, dict] = {}
    problems: dict[str, str] = {}
    for name in EVENT_NAMES:
        event = json.loads((ROOT / "events" / f"{name}.json").read_text())
        try:
            filled = sam_local.fill(event, values, absent_ok=sample_events.absent_allowed(name))
            filled["requestContext"]["identity"]["sourceIp"] = SOURCE_IP
        except sam_local.MissingSample as missing:
            problems[name] = str(missing)
            continue
        by_function.setdefault(_function_of(resolver, event), {})[name] = filled
    jobs = []
    answers_dir = tmp_path_factory.mktemp("answers")
    with ThreadPoolExecutor(max_workers=2) as pool:
        for logical_id, events in by_function.items():
            ordered = dict(sorted(events.items(), key=lambda item: item[1]["httpMethod"] == "DELETE"))
            env = _sam_environment(resolver, logical_id, env_vars)
            jobs.append(pool.submit(_run_function, logical_id, _handler(resolver, logical_id),
                                    resolver.function_code_dir(logical_id), env, ordered,
                                    answers_dir / f"{logical_id}.json"))
        results = {}
        for job in jobs:
            results.update(job.result())
    return results, problems


def _status_and_text(answer: dict) -> tuple[int, str]:
    body = answer.get("body") or ""
    if answer.get("isBase64Encoded"):
        body = base64.b64decode(body).decode(errors="replace")
    return answer["statusCode"], body[:600]


@pytest.mark.parametrize("name", EVENT_NAMES)
def test_the_event_answers_the_status_it_is_written_for(answers, name):
    results, problems = answers
    assert name not in problems, f"events/{name}.json: {problems.get(name)}"
    answer = results[name]
    assert "error" not in answer, f"events/{name}.json: the handler failed:\n{answer.get('error')}"
    expected = sample_events.expected_statuses()[name]
    status, text = _status_and_text(answer)
    assert status in expected, (
        f"events/{name}.json answered {status}, written for {expected}: {text}\n(a 400/422 naming a body field: "
        "give the request model an example (Field(examples=[...])) and run scripts/generate)")


def test_the_env_vars_file_names_every_function_and_reaches_the_host(local_stack, tmp_path):
    path = sam_local.write_env_vars(local_stack.environment, local_stack.parameters, sam_local.LINUX_BRIDGE_HOST,
                                    tmp_path / "sam-env.json")
    document = json.loads(path.read_text())
    functions = set(Resolver(local_stack.parameters).of_type("AWS::Serverless::Function"))
    assert set(document) == functions | {"Parameters"}
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    for logical_id in functions:
        env = document[logical_id]
        assert env["AWS_ENDPOINT_URL"].startswith(f"http://{sam_local.LINUX_BRIDGE_HOST}:")
        assert env["PROJECTS_TABLE"] == local_stack.environment["PROJECTS_TABLE"]
        assert not any("127.0.0.1" in value for value in env.values()), env


def test_the_stack_writes_filled_events_and_keeps_its_samples_across_a_restart(local_stack, tmp_path):
    from devstack.__main__ import _write_sam_local_files
    credentials = bootstrap(local_stack.base_url, tmp_path / "credentials.json", email="sam-files@example.com",
                            tenant_name="sam local files")
    kept, state = tmp_path / "samples.json", tmp_path / "state"
    _write_sam_local_files(local_stack, credentials, state / "sam-env.json", tmp_path, "host.docker.internal", kept,
                           samples=True)
    written = sorted(path.stem for path in (tmp_path / "events").glob("*.json"))
    assert written == EVENT_NAMES
    for path in (tmp_path / "events").glob("*.json"):
        assert "{{" not in path.read_text(), path.name
        assert oct(path.stat().st_mode & 0o777) == "0o600"
    get = json.loads((tmp_path / "events" / "Projects-GetProject.json").read_text())
    assert get["headers"]["Authorization"] == f"Bearer {credentials['apiKey']}"
    assert json.loads((state / "sam-env.json").read_text())["ProjectsFunction"]["AWS_ENDPOINT_URL"].startswith(
        "http://host.docker.internal:")
    first = json.loads(kept.read_text())
    assert "api_key" not in first and "password" not in first and not any(k.startswith("spare:") for k in first)
    # A restart with --persist: the same samples, new spares.
    spare_before = json.loads((tmp_path / "events" / "Projects-DeleteProject.json").read_text())["path"]
    _write_sam_local_files(local_stack, credentials, state / "sam-env.json", tmp_path, "host.docker.internal", kept,
                           samples=True)
    assert json.loads(kept.read_text()) == first
    assert json.loads((tmp_path / "events" / "Projects-DeleteProject.json").read_text())["path"] != spare_before


def test_the_events_are_filled_for_a_running_stack_by_command(local_stack, tmp_path):
    credentials = bootstrap(local_stack.base_url, tmp_path / "credentials.json", email="sam-command@example.com",
                            tenant_name="sam local command")
    done = subprocess.run([sys.executable, "-m", "devstack.sam_local", "--credentials", str(tmp_path / "credentials.json"),
                           "--out", str(tmp_path / "filled")], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(path.stem for path in (tmp_path / "filled").glob("*.json")) == EVENT_NAMES
    me = json.loads((tmp_path / "filled" / "Auth-Me.json").read_text())
    assert me["headers"]["Authorization"] == f"Bearer {credentials['apiKey']}"
