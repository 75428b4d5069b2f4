"""The moto server in a child process on a free loopback port, started as the local stack
starts it (the child never outlives the tests, however they end)."""

from __future__ import annotations

import subprocess
import urllib.request

from devstack.processes import start_emulator


class MotoServer:
    def __init__(self) -> None:
        self.port = 0  # its own once started
        self.endpoint = ""
        self.process: subprocess.Popen | None = None
        self.generation = 0  # counts resets, so a provisioned state knows when it is gone

    def start(self) -> MotoServer:
        self.process, self.port = start_emulator()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        return self

    def reset(self) -> None:
        request = urllib.request.Request(f"{self.endpoint}/moto-api/reset", method="POST")
        urllib.request.urlopen(request, timeout=10).close()
        self.generation += 1

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
