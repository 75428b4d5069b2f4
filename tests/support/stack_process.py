"""The local stack as a user starts it: `python -m devstack` in a process of its own, its output
(stdout and stderr: the stack's log, when kept in a file or a pipe) collected as it comes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from tests.support.functions import ROOT

READY = "local stack ready"
# How long a stopping stack may take before it is killed: its emulators, DynamoDB Local and the
# dashboard end one after another, each in seconds on a quiet machine, many more under load.
STOP_SECONDS = 90


class StackProcess:
    def __init__(self, credentials: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self.credentials_file = credentials
        self.process = subprocess.Popen(
            [sys.executable, "-m", "devstack", "--port", "0", "--quiet", "--credentials", str(credentials), *extra],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self._ready = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line)
            if line.startswith(READY):
                self._ready.set()
        self._ready.set()  # the stack ended: wait_ready says so

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def wait_ready(self, timeout: float = 180) -> dict[str, Any]:
        """The credentials the stack wrote, once it says it is ready."""
        if not self._ready.wait(timeout) or not any(line.startswith(READY) for line in self.lines):
            self.stop()
            raise AssertionError(f"the stack was not ready in {timeout:.0f} s:\n" + "".join(self.lines[-30:]))
        return json.loads(self.credentials_file.read_text())

    def stop(self) -> int:
        """SIGTERM, as Ctrl-C would; the exit status once the stack and its output ended."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._reader.join(timeout=10)
        return self.process.returncode
