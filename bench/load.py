"""4. The local stack under load: GET /api/v1/projects/{id} from concurrent clients.

The stack runs as the README starts it, `python -m devstack --port 0 --quiet`, in a child
process (its own moto server, gateway and function containers), so the clients here do not
share an interpreter with it. Each client is a thread with its own keep-alive httpx client
and its own API key (made through the API with the bootstrap key: the rate limit counts per
key, 1000 per minute by default). A fixed number of requests, bounded in time as well.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.fixture import ROOT
from bench.warm import Latencies
from devstack.processes import children_of, cpu_seconds


@dataclass
class LoadResult(Latencies):
    clients: int
    requested: int
    completed: int = 0
    seconds: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    errors: int = 0
    startup_s: float = 0.0
    stopped_by_deadline: bool = False
    cpu_s: dict[str, float] = field(default_factory=dict)  # CPU used during the measured window

    @property
    def rps(self) -> float:
        return self.completed / self.seconds if self.seconds else 0.0


def _cpu_snapshot(stack_pid: int) -> dict[str, float]:
    """CPU seconds so far of the stack's process, its emulator (its children) and this process."""
    try:
        return {"stack": cpu_seconds(stack_pid), "emulator": sum(cpu_seconds(c) for c in children_of(stack_pid)),
                "clients": time.process_time()}
    except (OSError, ValueError, IndexError):
        return {}


def _start_stack(env: dict[str, str], workdir: Path) -> tuple[subprocess.Popen, dict, float]:
    credentials = workdir / "credentials.json"
    log = open(workdir / "devstack.log", "w+b")
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-m", "devstack", "--port", "0", "--quiet",
                                "--credentials", str(credentials)],
                               cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = started + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"the local stack exited at start:\n{log.read().decode()[-3000:]}")
        log.seek(0)
        if b"local stack ready" in log.read():
            return process, json.loads(credentials.read_text()), time.monotonic() - started
        time.sleep(0.1)
    _stop_stack(process)
    raise RuntimeError("the local stack was not ready in 90 s")


def _stop_stack(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def measure(env: dict[str, str], clients: int, requests: int, max_seconds: float, warmup: int = 10,
            progress=print) -> LoadResult:
    import httpx

    result = LoadResult(clients=clients, requested=requests)
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        process, creds, result.startup_s = _start_stack(env, Path(tmp))
        try:
            base = creds["baseUrl"]
            progress(f"  local stack ready in {result.startup_s:.1f} s at {base}")
            with httpx.Client(base_url=base, timeout=30,
                              headers={"Authorization": f"Bearer {creds['apiKey']}"}) as admin:
                made = admin.post("/api/v1/projects", json={"name": "bench load", "language": "python"})
                made.raise_for_status()
                project_id = made.json()["data"]["id"]
                keys = []
                for i in range(clients):
                    answer = admin.post("/api/v1/api-keys", json={
                        "name": f"bench client {i}", "type": "sdk", "environment": "Development",
                        "scopes": ["projects:read"]})
                    answer.raise_for_status()
                    keys.append(answer.json()["data"]["key"])

            path = f"/api/v1/projects/{project_id}"
            lock = threading.Lock()
            issued = 0
            barrier = threading.Barrier(clients + 1)
            deadline = [float("inf")]  # set when the clients are released
            latencies: list[list[float]] = [[] for _ in range(clients)]
            statuses: list[dict[int, int]] = [{} for _ in range(clients)]
            errors = [0] * clients

            def client(index: int) -> None:
                nonlocal issued
                with httpx.Client(base_url=base, timeout=30,
                                  headers={"Authorization": f"Bearer {keys[index]}"}) as http:
                    try:
                        for _ in range(warmup):  # fills the key caches of the stack's containers
                            http.get(path).raise_for_status()
                    except Exception:
                        barrier.abort()
                        raise
                    barrier.wait()
                    while True:
                        with lock:
                            if issued >= requests or time.monotonic() > deadline[0]:
                                return
                            issued += 1
                        started = time.perf_counter()
                        try:
                            status = http.get(path).status_code
                        except httpx.HTTPError:
                            errors[index] += 1
                            continue
                        latencies[index].append((time.perf_counter() - started) * 1000)
                        statuses[index][status] = statuses[index].get(status, 0) + 1

            threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
            for thread in threads:
                thread.start()
            barrier.wait(timeout=120)
            began = time.monotonic()
            cpu_before = _cpu_snapshot(process.pid)
            deadline[0] = began + max_seconds
            for thread in threads:
                thread.join(timeout=max_seconds + 60)
            result.seconds = time.monotonic() - began
            cpu_after = _cpu_snapshot(process.pid)
            if cpu_before and cpu_after:
                result.cpu_s = {k: cpu_after[k] - cpu_before[k] for k in cpu_before}
            result.stopped_by_deadline = issued < requests
            for index in range(clients):
                result.latencies_ms.extend(latencies[index])
                for status, n in statuses[index].items():
                    result.statuses[status] = result.statuses.get(status, 0) + n
                result.errors += errors[index]
            result.completed = len(result.latencies_ms)
        finally:
            _stop_stack(process)
    return result


def stack_env(clean_env: dict[str, str]) -> dict[str, str]:
    """The local stack's environment: the bench's AWS-safe one, without our emulator's."""
    env = dict(clean_env)
    env.pop("PYTHONPATH", None)
    env["PYTHONUNBUFFERED"] = "1"
    return env

