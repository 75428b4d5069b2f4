"""Child processes of the local stack (the emulators), and reading processes from /proc (Linux)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with_parent() -> None:
    """In the child: ask Linux to end it when the stack's process ends, however that ends."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class ChildExited(RuntimeError):
    """A child server exited before it listened, on every port it was given."""

    def __init__(self, what: str, returncode: int | None) -> None:
        super().__init__(f"{what} exited at start (status {returncode})")
        self.returncode = returncode


def start_listening_child(argv_for: Callable[[int], list[str]], what: str, *,
                          ready: Callable[[int], bool] = lambda _port: True, seconds: float = 30,
                          attempts: int = 4, **popen: Any) -> tuple[subprocess.Popen, int]:
    """A server in a child process on a free loopback port: (the process, its port).

    free_port's answer is only true when given: before the child binds the port, another process
    may take it (a test run starts many servers, and outgoing connections draw from the same
    range). So the child counts as started only once it (or a process it started) listens on the
    port itself, never when some other server answers there; and a child that exits first is
    started again on another port. `ready(port)` is the server's own check on top (an HTTP answer)."""
    returncode = None
    for _ in range(attempts):
        port = free_port()
        process = subprocess.Popen(argv_for(port), preexec_fn=die_with_parent if sys.platform == "linux" else None,
                                   **popen)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if process.poll() is not None:
                returncode = process.returncode
                break
            if listens_on(process.pid, port) and ready(port):
                return process, port
            time.sleep(0.05)
        else:
            process.kill()
            process.wait(timeout=10)
            raise TimeoutError(f"{what} did not start in {seconds:.0f} s")
    raise ChildExited(what, returncode)


def start_emulator(bind: str = "127.0.0.1") -> tuple[subprocess.Popen, int]:
    """moto's server in a child process that never outlives the stack, listening on bind (loopback unless
    containers must reach it: `sam local`, docs/sam-local.md): the process and its port. It is started
    through devstack/emulator.py, which adds the sent mail's pages (the local mailbox) to moto's routes."""
    root = Path(__file__).resolve().parent.parent   # where `-m devstack.emulator` is found
    host = "127.0.0.1" if bind in ("127.0.0.1", "0.0.0.0") else bind

    def answers(port: int) -> bool:
        try:
            urllib.request.urlopen(f"http://{host}:{port}/moto-api/", timeout=1).close()
            return True
        except OSError:
            return False

    return start_listening_child(lambda port: [sys.executable, "-m", "devstack.emulator", "-H", bind, "-p", str(port)],
                                 "the AWS emulator", ready=answers, cwd=root,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def listens_on(pid: int, port: int) -> bool:
    """Whether the process, or one it started, holds a listening TCP socket on the port (Linux's
    /proc; elsewhere it cannot tell and says yes, leaving the server's own check)."""
    listening = _listening_socket_inodes(port)
    if listening is None:
        return True
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            for fd in os.listdir(f"/proc/{current}/fd"):
                try:
                    target = os.readlink(f"/proc/{current}/fd/{fd}")
                except OSError:
                    continue
                if target.startswith("socket:[") and target[8:-1] in listening:
                    return True
        except OSError:
            pass
        pending.extend(children_of(current))
    return False


def _listening_socket_inodes(port: int) -> set[str] | None:
    """The inodes of the sockets listening on the port (state 0A in /proc/net/tcp and tcp6)."""
    inodes: set[str] = set()
    readable = False
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as rows:
                readable = True
                next(rows)  # the header
                for row in rows:
                    fields = row.split()
                    if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add(fields[9])
        except OSError:
            continue
    return inodes if readable else None


def _stat_fields(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()  # after the command name, which may hold spaces


def children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if int(_stat_fields(int(entry))[1]) == pid:
                    found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return found


def is_alive(pid: int) -> bool:
    try:
        return _stat_fields(pid)[0] != "Z"
    except OSError:
        return False


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process."""
    fields = _stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
