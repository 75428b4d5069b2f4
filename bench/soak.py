"""The conservation soak, longer than CI's (devstack/soak.py says what it counts): the same seeded
session on a local stack of its own, once as it is and once per pause with both datastores paused
that long mid-way (5 s and 15 s: longer than a request's time, so requests answer 503 and creates
are retried with their Idempotency-Key); the paused runs' throughput is reported as a ratio of the
unpaused one (the baseline)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any


def measure(env: dict[str, str], calls: int, clients: int, pauses: list[float], progress) -> list[dict[str, Any]]:
    runs = []
    for seconds in (0.0, *pauses):
        progress(f"soak: {calls} calls from {clients} clients" + (f", datastores paused {seconds:g} s" if seconds else ""))
        done = subprocess.run([sys.executable, "-m", "devstack.soak", "--calls", str(calls), "--clients",
                               str(clients), "--pause", str(seconds), "--seed", "7", "--json"],
                              env=env, capture_output=True, text=True)
        runs.append(_report(done))
    return runs


def _report(done: subprocess.CompletedProcess) -> dict[str, Any]:
    """The soak's report: its last line (the functions' own JSON log lines come before it)."""
    last = done.stdout.rstrip().rsplit("\n", 1)[-1]
    try:
        report = json.loads(last)
    except ValueError:
        report = None
    if not isinstance(report, dict) or "calls" not in report:
        raise RuntimeError(f"the soak did not report (exit status {done.returncode}): {done.stderr[-2000:]}")
    return report


def rows(runs: list[dict[str, Any]]) -> list[tuple]:
    from bench.report import verdict
    base = runs[0]["calls"] / max(runs[0]["seconds"], 1e-9)
    out: list[tuple] = [("7. Conservation soak (python -m devstack.soak), 8 clients, DynamoDB Local + emulator",)]
    for run in runs:
        rate = run["calls"] / max(run["seconds"], 1e-9)
        clean = not run["problems"]
        label = f"  paused {run['paused_seconds']:g} s mid-way" if run["paused_seconds"] else "  as it is (baseline)"
        out.append((label, f"{rate:.0f} calls/s ({rate / base:.2f}x)", "nothing lost", verdict(clean),
                    f"{run['calls']} calls in {run['seconds']:.0f} s; committed {run['committed']}, on the bus "
                    f"{run['published']} ({run['published_twice']} twice), delivered {run['delivered']} of "
                    f"{run['expected_deliveries']}; lost "
                    f"{run['lost']}, phantom {run['phantom']}, duplicated {run['duplicated']}, wrong 5xx "
                    f"{run['wrong_5xx']}; 5xx {_five_xx(run)}; creates retried with their key {run['retried']}, "
                    f"recognised as committed {run['recognised']}; settled {run['settle_seconds']:.1f} s after the "
                    "last call"))
    return out


def _five_xx(run: dict[str, Any]) -> str:
    """The 5xx answers by status (first answers and retries'), or 0."""
    counts = {status: run["statuses"].get(status, 0) + run["retry_statuses"].get(status, 0)
              for status in {*run["statuses"], *run["retry_statuses"]} if int(status) >= 500}
    return ", ".join(f"{n} x {status}" for status, n in sorted(counts.items())) or "0"
