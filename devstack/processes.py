"""Child processes of the local stack (the emulators), and reading processes from /proc (Linux)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request


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


def start_emulator(port: int, bind: str = "127.0.0.1") -> subprocess.Popen:
    """moto's server in a child process that never outlives the stack, listening on bind (loopback unless
    containers must reach it: `sam local`, docs/sam-local.md)."""
    process = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", bind, "-p", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               preexec_fn=die_with_parent if sys.platform == "linux" else None)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            host = "127.0.0.1" if bind in ("127.0.0.1", "0.0.0.0") else bind
            urllib.request.urlopen(f"http://{host}:{port}/moto-api/", timeout=1).close()
            return process
        except OSError:
            if process.poll() is not None:
                raise RuntimeError("the AWS emulator exited at start")
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("the AWS emulator did not start in 30 s")


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
