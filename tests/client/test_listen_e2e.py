"""`svc listen --forward-to` end to end: the CLI, a process of its own, reads the local stack's event
stream with an API key and forwards each event to a receiver on loopback that verifies it with the
Standard Webhooks reference library and the secret `svc listen --print-secret` prints. Every event
of a session arrives once, in order; Ctrl-C ends it cleanly; a restart forwards what happened while
it was stopped, without a gap and without a repeat."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from tests.support.webhook_receiver import Receiver

pytestmark = pytest.mark.long_running   # minutes long: its test process starts with it (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]


class Listening:
    """`svc listen` running, its standard error read line by line."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.errors: queue.Queue[str] = queue.Queue()
        self.error_text: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.process.stderr:
            self.error_text.append(line)
            self.errors.put(line)

    def wait_for(self, text: str, timeout: float = 30) -> None:
        while True:
            try:
                line = self.errors.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no {text!r} from svc listen: {''.join(self.error_text)}") from None
            if text in line:
                return

    def interrupt(self) -> tuple[int, list[dict]]:
        self.process.send_signal(signal.SIGINT)   # what Ctrl-C sends
        # Not communicate(): it would read standard error too, and could take the last line ("Stopped.")
        # from the reader thread. Standard output is a few lines, well within a pipe's buffer.
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.reader.join(timeout=10)
            raise AssertionError("svc listen did not stop on Ctrl-C; it wrote: " + "".join(self.error_text)) from None
        out = self.process.stdout.read()
        self.reader.join(timeout=30)  # every line of standard error read
        return self.process.returncode, [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.fixture
def env(tmp_path, account) -> dict[str, str]:
    made = {k: v for k, v in os.environ.items() if not k.startswith("SVC_")}
    made.update({"SVC_CONFIG_DIR": str(tmp_path / "svc"), "SVC_API_KEY": account["key"],
                 "SVC_BASE_URL": account["baseUrl"], "PYTHONPATH": str(ROOT / "client"), "PYTHONUNBUFFERED": "1"})
    return made


def svc_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "svc_client.cli", *args]


def test_listen_forwards_every_event_signed_in_order_and_resumes_after_a_restart(account, env):
    secret = subprocess.run(svc_argv("listen", "--print-secret"), env=env, capture_output=True, text=True,
                            timeout=60, check=True).stdout.strip()
    assert secret.startswith("whsec_")
    assert subprocess.run(svc_argv("listen", "--print-secret"), env=env, capture_output=True, text=True,
                          timeout=60).stdout.strip() == secret   # kept: the receiver is configured once
    receiver = Receiver(secret)
    http = httpx.Client(base_url=account["baseUrl"], timeout=10, headers={"Authorization": f"Bearer {account['key']}"})
    argv = svc_argv("--output", "json", "listen", "--forward-to", receiver.url,
                    "--events", "project.created,project.deleted")
    try:
        listening = Listening(argv, env)
        listening.wait_for("Connected")
        made = [http.post("/api/v1/projects", json={"name": f"Listened {i}"}).json()["data"] for i in range(3)]
        assert http.delete(f"/api/v1/projects/{made[0]['id']}").status_code == 200
        http.patch(f"/api/v1/projects/{made[1]['id']}", json={"name": "Not listened for"})   # project.updated
        received = receiver.wait_for(4, timeout=30)
        code, shown = listening.interrupt()
        assert code == 0 and "Stopped." in "".join(listening.error_text)
        assert all(d.verify_error is None for d in received)
        assert [(d.payload["type"], d.payload["data"]["id"]) for d in received] == [
            ("project.created", made[0]["id"]), ("project.created", made[1]["id"]),
            ("project.created", made[2]["id"]), ("project.deleted", made[0]["id"])]
        assert [d.headers["webhook-id"] for d in received] == [d.payload["id"] for d in received]
        # The payload is the event log's, as a webhook carries it; each forward is shown with the answer.
        assert received[0].payload == http.get(f"/api/v1/events/{received[0].payload['id']}").json()["data"]
        assert [(s["event"]["id"], s["status"]) for s in shown] == [(d.payload["id"], 200) for d in received]

        # Stopped: these happen meanwhile; the restart forwards them first, and nothing twice.
        later = [http.post("/api/v1/projects", json={"name": f"While stopped {i}"}).json()["data"] for i in range(2)]
        listening = Listening(argv, env)
        listening.wait_for("Resuming after")
        after = receiver.wait_for(6, timeout=30)
        code, shown = listening.interrupt()
        assert code == 0
        assert [(d.payload["type"], d.payload["data"]["id"]) for d in after[4:]] == [
            ("project.created", p["id"]) for p in later]
        assert all(d.verify_error is None for d in after) and len(receiver.deliveries) == 6
        assert len({d.payload["id"] for d in receiver.deliveries}) == 6
    finally:
        http.close()
        receiver.stop()
