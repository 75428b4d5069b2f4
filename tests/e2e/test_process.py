"""The start command as a user runs it: ready, serving, and gone without orphans on SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import httpx

from devstack.processes import children_of, is_alive

from tests.support.functions import ROOT


def test_start_serve_and_stop_on_sigterm_leaving_no_process(tmp_path):
    credentials = tmp_path / "creds.json"
    process = subprocess.Popen([sys.executable, "-m", "devstack", "--port", "0", "--quiet",
                                "--credentials", str(credentials)], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        ready_line = ""
        deadline = time.monotonic() + 60
        while "ready" not in ready_line and time.monotonic() < deadline:
            ready_line = process.stdout.readline()
            assert ready_line or process.poll() is None, "the stack exited before it was ready"
        assert "ready" in ready_line
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
