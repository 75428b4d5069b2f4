"""A child server is started on a port it listens on itself: when another process takes the port
between free_port's answer and the child's bind, the child is started again on another port, and
another server answering there never counts as the child started."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import pytest

from devstack import processes

# Binds the port it is given after a pause (a server still starting), listens, then waits to be ended.
SLOW_SERVER = ("import socket, sys, time; time.sleep(0.3); s = socket.socket(); "
               "s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); time.sleep(60)")

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads listening sockets from /proc")


@pytest.fixture
def taken_port():
    """A port another server listens on (and would answer a connection)."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield other.getsockname()[1]


def ports_given_first(monkeypatch, *first: int) -> list[int]:
    """free_port answers the given ports first, then the kernel's; returns every port it gave."""
    given: list[int] = []
    queue = list(first)
    real = processes.free_port

    def free_port() -> int:
        given.append(queue.pop(0) if queue else real())
        return given[-1]
    monkeypatch.setattr(processes, "free_port", free_port)
    return given


def can_connect(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


def stop(process: subprocess.Popen) -> None:
    process.kill()
    process.wait(timeout=10)


def test_a_child_that_finds_its_port_taken_is_started_again_on_another(monkeypatch, taken_port):
    given = ports_given_first(monkeypatch, taken_port)
    process, port = processes.start_listening_child(
        lambda port: [sys.executable, "-c", SLOW_SERVER, str(port)], "the test server", ready=can_connect,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # The other server answered on the first port all along; the child's own port is the second.
        assert given[0] == taken_port and port == given[1] != taken_port
        assert processes.listens_on(process.pid, port)
        assert not processes.listens_on(process.pid, taken_port)
    finally:
        stop(process)


def test_a_listener_of_a_process_the_child_started_counts_as_the_child_s(monkeypatch):
    # sh runs python as its own child (two commands: no exec), as a wrapper script may.
    process, port = processes.start_listening_child(
        lambda port: ["sh", "-c", f'"{sys.executable}" -c "{SLOW_SERVER}" {port}; true'], "the wrapped server",
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert processes.children_of(process.pid), "the server should run under sh"
        assert processes.listens_on(process.pid, port)
    finally:
        for child in processes.children_of(process.pid):
            os.kill(child, signal.SIGKILL)
        stop(process)


def test_a_child_that_never_listens_is_given_up_after_its_attempts(monkeypatch):
    given = ports_given_first(monkeypatch)
    with pytest.raises(processes.ChildExited) as failure:
        processes.start_listening_child(lambda port: [sys.executable, "-c", "raise SystemExit(3)"], "a broken server",
                                        attempts=3, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert failure.value.returncode == 3 and len(given) == 3
    assert "a broken server exited at start (status 3)" in str(failure.value)


def test_another_process_s_listener_is_not_the_child_s(taken_port):
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as idle:
        try:
            assert can_connect(taken_port)
            assert not processes.listens_on(idle.pid, taken_port)
        finally:
            stop(idle)
