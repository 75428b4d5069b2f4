"""The local gateway takes in a burst of connections it cannot accept at once: 200 opened together
while the stack's process is not running (as on a busy machine, where the accepting thread waits
for a core) each get their answer once it runs again. With socketserver's listen backlog of 5, the
kernel held 6 of them and the rest timed out or were reset."""

from __future__ import annotations

import os
import signal
import ssl
import threading
import time
from collections import Counter

import httpx
import pytest

from tests.support.stack_process import StackProcess

CONNECTIONS = 200


def _waiting_to_be_accepted(port: int) -> int:
    """The connections the kernel completed on the listening socket and the server has not accepted
    yet (the accept queue: rx_queue of a LISTEN socket in /proc/net/tcp)."""
    with open("/proc/net/tcp") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                return int(fields[4].split(":")[1], 16)
    return 0


def _state(pid: int) -> str:
    """The process's state letter (T: stopped), from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0]


@pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="reads the accept queue from Linux's /proc")
def test_200_connections_opened_while_the_stack_is_stopped_are_all_answered(tmp_path):
    stack = StackProcess(tmp_path / "creds.json", "--emulator", "moto")
    try:
        saved = stack.wait_ready()
        url, port = saved["baseUrl"] + "/api/v1/health", int(saved["baseUrl"].rsplit(":", 1)[1])
        answers: Counter = Counter()
        lock = threading.Lock()
        start = threading.Barrier(CONNECTIONS + 1)
        tls = ssl.create_default_context()

        def one() -> None:
            # A connection of its own, the client made before the burst (one TLS context for all:
            # making one each costs more than the burst itself).
            with httpx.Client(timeout=120, verify=tls) as client:  # a busy machine answers 200 slowly
                start.wait()
                try:
                    outcome: object = client.get(url).status_code
                except httpx.HTTPError as error:
                    outcome = f"{type(error).__name__}: {error}"
            with lock:
                answers[outcome] += 1

        threads = [threading.Thread(target=one) for _ in range(CONNECTIONS)]
        for thread in threads:
            thread.start()
        os.kill(stack.process.pid, signal.SIGSTOP)
        try:
            # The signal is delivered on its own time: until the process is stopped, it may still accept
            # a connection of the burst (queued 199 of 200 on a loaded machine, all 200 answered).
            stopped = time.monotonic() + 10
            while _state(stack.process.pid) != "T" and time.monotonic() < stopped:
                time.sleep(0.01)
            start.wait()
            # Until every connection waits in the queue (or it is full): 10 s left one of 200 still
            # connecting on a loaded machine (queued 199, all 200 answered); the wait ends as soon as all are in.
            deadline = time.monotonic() + 60
            while _waiting_to_be_accepted(port) < CONNECTIONS and time.monotonic() < deadline:
                time.sleep(0.1)
            queued = _waiting_to_be_accepted(port)
        finally:
            os.kill(stack.process.pid, signal.SIGCONT)
        for thread in threads:
            thread.join()
        # Every connection waited in the kernel's queue, and each got its answer.
        assert (queued, dict(answers)) == (CONNECTIONS, {200: CONNECTIONS})
    finally:
        stack.stop()
