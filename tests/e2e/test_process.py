"""The start command as a user runs it: ready, serving, and gone without orphans on SIGTERM."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import httpx
import pytest

from devstack.dynamodb_local import Unavailable, find_jar
from devstack.processes import children_of, is_alive
from tests.support.ci import in_ci
from tests.support.functions import ROOT
from tests.support.stack_process import StackProcess
from tests.support.terminal import Terminal

pytestmark = pytest.mark.long_running   # minutes long: its test process starts with it (tests/conftest.py)


# How long a start may take on a loaded CI machine (one took more than 60 s at load 12 on 2 cores).
STARTUP_SECONDS = 180


def test_start_serve_and_stop_on_sigterm_leaving_no_process(tmp_path):
    credentials = tmp_path / "creds.json"
    process = subprocess.Popen([sys.executable, "-m", "devstack", "--port", "0", "--quiet",
                                "--credentials", str(credentials)], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        ready_line = ""
        deadline = time.monotonic() + STARTUP_SECONDS
        while "ready" not in ready_line and time.monotonic() < deadline:
            ready_line = process.stdout.readline()
            assert ready_line or process.poll() is None, "the stack exited before it was ready"
        assert "ready" in ready_line
        assert process.stdout.readline().startswith("IAM: each function's AWS calls are checked against its role")
        saved = json.loads(credentials.read_text())
        assert set(saved) >= {"baseUrl", "tenantId", "apiKey"} and set(saved["user"]) >= {"email", "password"}
        assert oct(credentials.stat().st_mode & 0o777) == "0o600"
        answer = httpx.get(saved["baseUrl"] + "/api/v1/projects", headers={"Authorization": f"Bearer {saved['apiKey']}"})
        assert answer.status_code == 200
        children = children_of(process.pid)
        assert children, "the emulator should run as a child process"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        deadline = time.monotonic() + 10
        while any(is_alive(c) for c in children) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(is_alive(c) for c in children), "a child outlived the stack"
    finally:
        if process.poll() is None:
            process.kill()


def test_no_iam_says_the_roles_are_not_enforced(tmp_path):
    stack = StackProcess(tmp_path / "creds.json", "--no-iam", "--no-dashboard")
    try:
        saved = stack.wait_ready()
        answer = httpx.get(saved["baseUrl"] + "/api/v1/projects", headers={"Authorization": f"Bearer {saved['apiKey']}"})
        assert answer.status_code == 200
    finally:
        assert stack.stop() == 0
    assert "IAM: NOT enforced (--no-iam)" in stack.output
    assert "checked against its role" not in stack.output


def _start(tmp_path, *extra):
    stack = StackProcess(tmp_path / "creds.json", *extra)
    return stack.process, stack.wait_ready()


def _stop(process):
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0


def test_persist_keeps_tables_keys_and_tokens_across_a_restart(tmp_path):
    try:
        find_jar()
    except Unavailable as exc:
        if in_ci():
            raise
        pytest.skip(str(exc))
    data = tmp_path / "data"
    first, credentials = _start(tmp_path, "--persist", str(data))
    try:
        auth = {"Authorization": f"Bearer {credentials['apiKey']}"}
        made = httpx.post(credentials["baseUrl"] + "/api/v1/projects", json={"name": "Kept"}, headers=auth)
        assert made.status_code == 201
    finally:
        _stop(first)
    second, again = _start(tmp_path, "--persist", str(data))
    try:
        assert again["apiKey"] == credentials["apiKey"] and again["tenantId"] == credentials["tenantId"]
        listed = httpx.get(again["baseUrl"] + "/api/v1/projects", headers=auth)
        assert listed.status_code == 200
        assert [p["id"] for p in listed.json()["data"]["items"]] == [made.json()["data"]["id"]]
    finally:
        _stop(second)


class _Receiver:
    """A webhook endpoint on loopback that keeps what it verified (standardwebhooks)."""

    def __init__(self, secret: str) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        from standardwebhooks import Webhook
        self.events: list[dict] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.events.append(Webhook(secret).verify(body, dict(self.headers.items())))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"


@pytest.mark.parametrize("engine", ["dynamodb-local", "persist", "moto"])
def test_after_a_duplicate_registration_a_new_project_is_still_delivered(tmp_path, engine):
    """The command as a user runs it, on each engine: a duplicate registration (a cancelled or
    refused write) must not stop the event pipeline, nor publish anything."""
    import base64
    import os
    extra = {"dynamodb-local": [], "persist": ["--persist", str(tmp_path / "data")],
             "moto": ["--emulator", "moto"]}[engine]
    credentials = tmp_path / "creds.json"
    # Started from a shell where another stack's DynamoDB endpoint is still exported: it must not win.
    stale = {"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:9", "AWS_ENDPOINT_URL_DYNAMODB_STREAMS": "http://127.0.0.1:9"}
    process = subprocess.Popen([sys.executable, "-m", "devstack", "--port", "0", "--quiet",
                                "--credentials", str(credentials), *extra], cwd=ROOT, env={**os.environ, **stale},
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        seen = []
        deadline = time.monotonic() + 90
        while not seen or not seen[-1].startswith("local stack ready"):
            seen.append(process.stdout.readline())
            assert (seen[-1] or process.poll() is None) and time.monotonic() < deadline, "".join(seen)
        if engine == "moto":
            assert any("WARNING" in line and "not atomic" in line for line in seen), "".join(seen)
        saved = json.loads(credentials.read_text())
        base, auth = saved["baseUrl"] + "/api/v1", {"Authorization": f"Bearer {saved['apiKey']}"}
        secret = "whsec_" + base64.b64encode(os.urandom(24)).decode()
        receiver = _Receiver(secret)
        hook = httpx.post(f"{base}/webhooks", headers=auth, json={
            "url": receiver.url, "events": ["project.created", "tenant.created", "user.created"], "secret": secret})
        assert hook.status_code == 201, hook.text
        body = {"email": f"twice-{engine}@example.com", "password": "a long enough password", "name": "Twice"}
        assert [httpx.post(f"{base}/auth/register", json=body).status_code for _ in range(2)] == [201, 201]
        project = httpx.post(f"{base}/projects", headers=auth, json={"name": "After", "language": "python"})
        assert project.status_code == 201
        deadline = time.monotonic() + 30
        while not receiver.events and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1)  # anything else (a phantom of the registrations) would come with it
        # The development tenant's own creation events may reach its webhook too (when they are fanned
        # out after it was registered); nothing of the registrations' tenants ever does.
        delivered = [(e["type"], e["data"]["id"]) for e in receiver.events if e["tenantId"] != saved["tenantId"]
                     or e["type"] == "project.created"]
        assert delivered == [("project.created", project.json()["data"]["id"])]
        assert all(e["tenantId"] == saved["tenantId"] for e in receiver.events)
        # The stack's environment is beside its own state, and ops --local finds it there.
        port = saved["baseUrl"].rsplit(":", 1)[1]
        stack = str(tmp_path / "data") if engine == "persist" else port
        found = subprocess.run([sys.executable, "-m", "ops", "--local", "--stack", stack, "users", "enable",
                                "nobody@example.com"], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert "is missing" not in found.stderr and found.returncode != 2, found.stderr
        status = httpx.get(saved["baseUrl"] + "/_local/status").json()
        assert status["engine"] == ("moto" if engine == "moto" else "dynamodb-local")
        assert all(p["discarded"] == 0 and p["sentToFailureDestination"] == 0 for p in status["pollers"])
        receiver.server.shutdown()
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)


def test_environment_files_stay_beside_the_stacks_state_and_the_log_never_holds_the_password(tmp_path):
    """--credentials outside the repository: only the credentials go there. The environment files
    (the functions' and sam local's) are beside the stack's own state, and gone with its in-memory
    data at stop; the output, kept here as a log is (a pipe), never holds the password."""
    elsewhere = tmp_path / "elsewhere"
    assert not elsewhere.resolve().is_relative_to(ROOT)
    stack = StackProcess(elsewhere / "creds.json")
    try:
        saved = stack.wait_ready()
        state = ROOT / ".local" / "stacks" / saved["baseUrl"].rsplit(":", 1)[1]
        assert sorted(p.name for p in elsewhere.iterdir()) == ["creds.json"]
        assert (state / "sam-env.json").is_file() and (state / "local-stack-env.json").is_file()
        assert f"--env-vars {state / 'sam-env.json'}" in stack.output
    finally:
        assert stack.stop() == 0
    assert sorted(p.name for p in elsewhere.iterdir()) == ["creds.json"]
    assert not (state / "sam-env.json").exists() and not (state / "local-stack-env.json").exists()
    password = saved["user"]["password"]
    assert f"credentials written to {elsewhere / 'creds.json'}" in stack.output and "(not printed" in stack.output
    assert password not in stack.output


def test_the_password_is_printed_once_to_a_terminal(tmp_path):
    credentials = tmp_path / "creds.json"
    terminal = Terminal([sys.executable, "-m", "devstack", "--port", "0", "--quiet", "--credentials",
                         str(credentials)], env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        terminal.wait_for(re.compile(r'"password": "[^"]+"'), timeout=90)
        terminal.wait_for(re.compile(r"\n\}"))   # the whole of the credentials
        password = json.loads(credentials.read_text())["user"]["password"]
    finally:
        terminal.process.send_signal(signal.SIGTERM)
        assert terminal.process.wait(timeout=30) == 0
    assert terminal.text.count(password) == 1
