"""The start command as a user runs it: ready, serving, and gone without orphans on SIGTERM."""

from __future__ import annotations

import json
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


def _start(tmp_path, *extra):
    credentials = tmp_path / "creds.json"
    process = subprocess.Popen([sys.executable, "-m", "devstack", "--port", "0", "--quiet",
                                "--credentials", str(credentials), *extra], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 90
    line, seen = "", []
    while "ready" not in line and time.monotonic() < deadline:
        line = process.stdout.readline()
        seen.append(line)
        if not line and process.poll() is not None:
            raise AssertionError("the stack exited before it was ready:\n" + "".join(seen[-30:]))
    return process, json.loads(credentials.read_text())


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
