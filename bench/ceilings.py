"""9. One tenant's write ceilings on the local stack: N parallel creators of projects, agents, webhooks
and invitations on one enterprise tenant, each kind's statuses (the share answered 409) and creates a
second, and how fast the tenant's event log takes the creates' events through the pipeline (outbox
stream, fan-out, the events table).

DynamoDB Local runs one transaction at a time and has no partitions: what it shows is the service's
own handling of conflicts (a create that loses a race on the tenant's counter is sent again inside the
request, or answered 409), never AWS's per-partition limits; docs/scaling.md computes those.

    .venv/bin/python -m bench --only ceilings
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.fixture import ROOT

KINDS: dict[str, tuple[str, Any]] = {
    "projects": ("/api/v1/projects", lambda n: {"name": f"ceiling {n}"}),
    "agents": ("/api/v1/agents", lambda n: {"name": f"ceiling {n}", "systemPrompt": "Read.",
                                            "config": {"autonomyLevel": "suggest"}}),
    "webhooks": ("/api/v1/webhooks", lambda n: {"url": f"https://hooks.example.com/ceiling/{n}",
                                                "events": ["project.created"]}),
    "invitations": ("/api/v1/invitations", lambda n: {"email": f"ceiling-{n}@example.com", "role": "member"}),
}


@dataclass
class KindResult:
    kind: str
    creators: int
    statuses: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    errors: int = 0

    @property
    def sent(self) -> int:
        return sum(self.statuses.values())

    @property
    def rate(self) -> float:
        return self.statuses.get(201, 0) / self.seconds if self.seconds else 0.0


@dataclass
class CeilingRun:
    kinds: list[KindResult]
    events_expected: int
    events_logged: int
    events_seconds: float


def measure(env: dict[str, str], creators: tuple[int, ...] = (1, 8, 32), per_creator: int = 10,
            progress=print) -> CeilingRun:
    import httpx

    from bench.load import _start_stack, _stop_stack

    results: list[KindResult] = []
    with tempfile.TemporaryDirectory(prefix="bench-ceilings-") as tmp:
        process, creds, _ = _start_stack(env, Path(tmp))
        try:
            base, key = creds["baseUrl"], creds["apiKey"]
            port = base.rsplit(":", 1)[1].split("/")[0]
            subprocess.run([sys.executable, "-m", "ops", "--local", "--stack", port, "tenants", "set-plan",
                            creds["tenantId"], "enterprise"], cwd=ROOT, env=env, check=True, capture_output=True)
            serial = iter(range(10_000_000))
            lock = threading.Lock()
            for kind, (path, body) in KINDS.items():
                for count in creators:
                    result = KindResult(kind, count)
                    barrier = threading.Barrier(count + 1)

                    def creator(result=result, path=path, body=body, barrier=barrier) -> None:
                        with httpx.Client(base_url=base, timeout=60,
                                          headers={"Authorization": f"Bearer {key}"}) as http:
                            barrier.wait()
                            for _ in range(per_creator):
                                with lock:
                                    number = next(serial)
                                try:
                                    status = http.post(path, json=body(number)).status_code
                                except httpx.HTTPError:
                                    with lock:
                                        result.errors += 1
                                    continue
                                with lock:
                                    result.statuses[status] += 1

                    threads = [threading.Thread(target=creator, daemon=True) for _ in range(count)]
                    for thread in threads:
                        thread.start()
                    barrier.wait(timeout=60)
                    began = time.monotonic()
                    for thread in threads:
                        thread.join(timeout=600)
                    result.seconds = time.monotonic() - began
                    progress(f"  {kind}: {count} creators, {dict(result.statuses)} in {result.seconds:.1f} s")
                    results.append(result)
                    if kind == "webhooks":   # a tenant holds at most 20: each round starts with none
                        _delete_all(base, key, "/api/v1/webhooks")
            expected = sum(r.statuses.get(201, 0) for r in results if r.kind == "projects")
            logged, seconds = _events_logged(base, key, expected)
        finally:
            _stop_stack(process)
    return CeilingRun(results, expected, logged, seconds)


def _delete_all(base: str, key: str, path: str) -> None:
    import httpx

    with httpx.Client(base_url=base, timeout=60, headers={"Authorization": f"Bearer {key}"}) as http:
        for item in http.get(path, params={"limit": 100}).json()["data"]["items"]:
            http.delete(f"{path}/{item['id']}").raise_for_status()


def _events_logged(base: str, key: str, expected: int, longest: float = 120.0) -> tuple[int, float]:
    """How many project.created events the tenant's log holds, and when it held them all (from now)."""
    import httpx

    began = time.monotonic()
    seen = 0
    with httpx.Client(base_url=base, timeout=60, headers={"Authorization": f"Bearer {key}"}) as http:
        while time.monotonic() - began < longest:
            seen, cursor = 0, None
            while True:
                page = http.get("/api/v1/events", params={"type": "project.created", "limit": 100,
                                                          **({"cursor": cursor} if cursor else {})}).json()["data"]
                seen += len(page["items"])
                cursor = page.get("nextCursor")
                if not cursor:
                    break
            if seen >= expected:
                break
            time.sleep(0.5)
    return seen, time.monotonic() - began


def rows(run: CeilingRun) -> list[tuple]:
    out: list[tuple] = [("9. One tenant's write ceilings on the local stack (DynamoDB Local: transactions one at a "
                         "time, no partitions; docs/scaling.md)",)]
    for result in run.kinds:
        share = result.statuses.get(409, 0) / result.sent if result.sent else 0.0
        out.append((f"  {result.kind}, {result.creators} parallel creators", f"{result.rate:.1f} creates/s",
                    "", "",
                    f"{result.sent} sent: " + ", ".join(f"{s} x{n}" for s, n in sorted(result.statuses.items()))
                    + f"; 409 {share:.1%}; {result.errors} transport errors; {result.seconds:.1f} s"))
    out.append(("  the event log after the project creates", f"{run.events_logged} of {run.events_expected}", "", "",
                f"all in the log {run.events_seconds:.1f} s after the last create"))
    return out
