"""8. Secondary region: replication lag (RPO) and failover time (RTO) on two local cells.

In a child process (as bench/webhooks.py's latency), the two-cell local stack as the e2e tests start
it (tests/support/cells.py: python -m devstack --regions us-east-1,eu-central-1, the directory
replicated between the cells after --replication-lag, 1.0 s by default; the tenant policy cached
POLICY_CACHE_SECONDS, as in the e2e tests of cells). A tenant homed in us-east-1, the growth plan,
20 projects, then `secondaryRegion: eu-central-1`: the seed's time is from that PATCH's answer to the
directory's (TENANT#<id>, REPLICA) item saying "current".

Then --replication-seconds of writes through the home cell's API at --replication-rate a second
(POST /projects and PATCH /projects/{id}, alternately, each with a name of its own; a PATCH only of a
project whose last write has reached the secondary). A watcher reads the secondary cell's projects
table directly (a Query of the tenant's partition on its DynamoDB Local, every 20 ms): a write's lag
is from its answer to the first read that shows its name there (the replication lag, RPO in time;
the read period adds up to 20 ms). The ratios are against the directory's replication lag of the
local stack (a global table's lag as the stack emulates it).

Then the failover, nothing stopped (the home cell keeps running: the harness stops both cells or
none): `python -m ops --local --stack <secondary port> tenants failover T --json`, started at once
after the last write was answered. RTO: from the command's start until a GET and then a PATCH of a
project (one the writes never touched) through the secondary's own base URL both answer 200, polled
every 50 ms from the start. RPO in items: the writes the home had answered that the secondary did not
have when the command started (what a lost home would have taken with it), and when the secondary
first served the tenant.

    .venv/bin/python -m bench --only replication                # in the table
    .venv/bin/python -m bench.replication 20 4                  # alone: 20 s of writes, 4 a second
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.fixture import ROOT
from bench.warm import percentile

POLICY_CACHE_SECONDS = 2
DIRECTORY_LAG_SECONDS = 1.0
SEEDED_PROJECTS = 20
READ_EVERY = 0.02
PROBE_EVERY = 0.05


@dataclass
class ReplicationResult:
    seconds: float
    rate: float
    directory_lag_s: float
    lag_ms: list[float]
    writes: int
    refused: int
    unseen: int
    seed_s: float
    seeded_items: int
    rto_s: float | None
    command_s: float
    failover: dict[str, Any] | None
    missing_at_start: int
    missing_when_served: int
    startup_s: float
    probes: dict[str, int] = field(default_factory=dict)

    def figures(self) -> dict[str, float]:
        lags = self.lag_ms or [float("nan")]
        return {"p50": percentile(lags, 50), "p95": percentile(lags, 95), "max": max(lags)}


def rows(r: ReplicationResult) -> list[tuple]:
    f = r.figures()
    base_ms = r.directory_lag_s * 1000
    probes = ", ".join(f"{status}: {n}" for status, n in sorted(r.probes.items()))
    return [
        ("8. Secondary region (two local cells, us-east-1 -> eu-central-1, growth plan)",),
        ("  seed of the secondary", f"{r.seed_s:.1f} s", "", "",
         f"PATCH secondaryRegion to the directory's REPLICA 'current'; {r.seeded_items} items of the tenant "
         f"({SEEDED_PROJECTS} projects and what registration made); stack start {r.startup_s:.0f} s"),
        ("  replication lag (RPO), write answered to item in the secondary's table",
         f"p50 {f['p50']:.0f} ms, p95 {f['p95']:.0f} ms, max {f['max']:.0f} ms", "", "",
         f"{f['p50'] / base_ms:.2f}x / {f['p95'] / base_ms:.2f}x the directory's replication lag "
         f"({r.directory_lag_s:g} s, the baseline); {len(r.lag_ms)} of {r.writes} writes "
         f"({r.rate:g}/s for {r.seconds:g} s, POST and PATCH /projects){_and(r.refused, 'refused')}"
         f"{_and(r.unseen, 'never seen')}; read every {READ_EVERY * 1000:.0f} ms"),
        ("  failover (RTO), command start to GET and PATCH 200 at the secondary",
         f"{r.rto_s:.1f} s" if r.rto_s is not None else "not served in 300 s", "", "",
         f"the command {r.command_s:.1f} s (a Python process, imports included; the failover's own work "
         f"{(r.failover or {}).get('tookMs', '?')} ms); home cell not stopped; "
         f"policy cache {POLICY_CACHE_SECONDS} s; probes {probes}"),
        ("  writes answered by the home, missing in the secondary (RPO in items)",
         f"{r.missing_at_start} at the failover's start" + (f", {r.missing_when_served} when served"
                                                            if r.rto_s is not None else ""), "", "",
         f"the last writes were answered just before the command started; "
         f"replicaStatus {(r.failover or {}).get('replicaStatus', '?')}"),
    ]


def _and(count: int, what: str) -> str:
    return f", {count} {what}" if count else ""


def measure(env: dict[str, str], seconds: float = 60.0, rate: float = 4.0) -> ReplicationResult:
    """Runs _child in a fresh interpreter and reads its JSON answer."""
    done = subprocess.run([sys.executable, "-m", "bench.replication", str(seconds), str(rate), "--json"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=seconds + 900)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{\"bench\"")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"the replication run failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    answer = json.loads(lines[-1])
    answer.pop("bench")
    return ReplicationResult(**answer)


class Watcher:
    """Reads the secondary's copy of the tenant's projects and times each awaited write's arrival."""

    def __init__(self, cell, tenant_id: str) -> None:
        self.client, self.table = cell.dynamodb(), cell.environment["PROJECTS_TABLE"]
        self.tenant_id = tenant_id
        self.lock = threading.Lock()
        self.pending: dict[str, tuple[str, float]] = {}   # project id -> (name awaited, answered at)
        self.lags: list[float] = []
        self.settled: list[str] = []   # projects whose last write arrived: the next PATCHes' targets
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def expect(self, project_id: str, name: str, answered_at: float) -> None:
        with self.lock:
            self.pending[project_id] = (name, answered_at)
            if project_id in self.settled:
                self.settled.remove(project_id)

    def target(self) -> str | None:
        with self.lock:
            return self.settled.pop(0) if self.settled else None

    def missing(self) -> int:
        with self.lock:
            return len(self.pending)

    def names(self) -> dict[str, str]:
        found, start = {}, None
        while True:
            page = self.client.query(TableName=self.table, KeyConditionExpression="tenantId = :t",
                                     ExpressionAttributeValues={":t": {"S": self.tenant_id}}, ConsistentRead=True,
                                     ProjectionExpression="id, #n", ExpressionAttributeNames={"#n": "name"},
                                     **({"ExclusiveStartKey": start} if start else {}))
            found.update({i["id"]["S"]: i.get("name", {}).get("S", "") for i in page["Items"]})
            start = page.get("LastEvaluatedKey")
            if not start:
                return found

    def _run(self) -> None:
        while not self.stopped.is_set():
            names = self.names()
            seen_at = time.time()
            with self.lock:
                for project_id, (name, answered_at) in list(self.pending.items()):
                    if names.get(project_id) == name:
                        self.lags.append((seen_at - answered_at) * 1000)
                        del self.pending[project_id]
                        self.settled.append(project_id)
            time.sleep(READ_EVERY)


def _child(seconds: float, rate: float) -> dict[str, Any]:
    import httpx

    from tests.support.cells import TwoCells
    from tests.support.secondary import auth, new_tenant, on_growth, replica_current, set_secondary, tenant_items

    begun = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-replication-") as tmp, \
            TwoCells(Path(tmp), lag=DIRECTORY_LAG_SECONDS,
                     environment={"TENANT_POLICY_CACHE_SECONDS": str(POLICY_CACHE_SECONDS)}).start() as pair:
        startup = time.monotonic() - begun
        home, secondary = pair.first, pair.second
        tenant = new_tenant(home, "Bench replica")
        on_growth(home, tenant)   # its feature secondary_region, and room for the projects below
        api = httpx.Client(base_url=home.base_url + "/api/v1", headers=auth(tenant["key"]), timeout=30)
        made = [api.post("/projects", json={"name": f"seeded {n}", "language": "python"})
                for n in range(SEEDED_PROJECTS)]
        for answer in made:
            answer.raise_for_status()
        probe = made[0].json()["data"]["id"]   # the RTO's GET and PATCH, never written by the stream below

        answer = set_secondary(home, tenant, secondary.region)
        if answer.status_code != 200:
            raise RuntimeError(f"PATCH secondaryRegion: {answer.status_code} {answer.text}")
        asked = time.monotonic()
        seeded = replica_current(pair, tenant["id"], seconds=600)
        if not seeded or seeded.get("status") != "current":
            raise RuntimeError(f"the seed did not end current: {seeded}")
        seed_s = time.monotonic() - asked
        seeded_items = sum(map(len, tenant_items(secondary, tenant["id"]).values()))

        watcher = Watcher(secondary, tenant["id"])
        watcher.settled = [answer.json()["data"]["id"] for answer in made[1:]]
        watcher.thread.start()
        writes = refused = 0
        started = time.monotonic()
        for n in range(max(1, int(seconds * rate))):
            time.sleep(max(0.0, started + n / rate - time.monotonic()))
            name = f"write {n}"
            target = watcher.target() if n % 2 else None
            answer = (api.patch(f"/projects/{target}", json={"name": name}) if target
                      else api.post("/projects", json={"name": name, "language": "python"}))
            answered_at = time.time()
            writes += 1
            if answer.status_code not in (200, 201):
                refused += 1
                continue
            watcher.expect(target or answer.json()["data"]["id"], name, answered_at)

        # The failover, at once: what the secondary lacks now is what a lost home would take with it.
        missing_at_start = watcher.missing()
        command_started = time.monotonic()
        command = subprocess.Popen([sys.executable, "-m", "ops", "--local", "--stack", str(secondary.port), "tenants",
                                    "failover", tenant["id"], "--json"], cwd=ROOT, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        there = httpx.Client(base_url=secondary.base_url + "/api/v1", headers=auth(tenant["key"]), timeout=30)
        probes: dict[str, int] = {}
        rto = missing_when_served = None
        deadline = command_started + 300
        while time.monotonic() < deadline:
            read = there.get(f"/projects/{probe}")
            wrote = there.patch(f"/projects/{probe}", json={"name": "probe"}) if read.status_code == 200 else None
            for answer in (read, wrote):
                if answer is not None:
                    probes[str(answer.status_code)] = probes.get(str(answer.status_code), 0) + 1
            if wrote is not None and wrote.status_code == 200:
                rto = time.monotonic() - command_started
                missing_when_served = watcher.missing()
                break
            time.sleep(PROBE_EVERY)
        out, err = command.communicate(timeout=300)
        command_s = time.monotonic() - command_started
        lines = [line for line in out.splitlines() if line.startswith("{")]
        failed_over = json.loads(lines[-1]) if command.returncode == 0 and lines else None
        if failed_over is None:
            print(f"the failover command failed ({command.returncode}):\n{out}\n{err}", file=sys.stderr)

        # Writes still on their way when the secondary took over: given time to arrive, else unseen.
        until = time.monotonic() + 30
        while watcher.missing() and time.monotonic() < until:
            time.sleep(0.1)
        watcher.stopped.set()
        watcher.thread.join(5)
        api.close()
        there.close()
    return {"seconds": seconds, "rate": rate, "directory_lag_s": DIRECTORY_LAG_SECONDS, "lag_ms": watcher.lags,
            "writes": writes, "refused": refused, "unseen": watcher.missing(), "seed_s": seed_s,
            "seeded_items": seeded_items, "rto_s": rto, "command_s": command_s, "failover": failed_over,
            "missing_at_start": missing_at_start,
            "missing_when_served": missing_when_served if missing_when_served is not None else -1,
            "startup_s": startup, "probes": probes}


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--json"]
    run_seconds = float(arguments[0]) if arguments else 60.0
    run_rate = float(arguments[1]) if len(arguments) > 1 else 4.0
    if "--json" in sys.argv:
        print(json.dumps({"bench": "replication", **_child(run_seconds, run_rate)}))
    else:
        print(json.dumps(_child(run_seconds, run_rate), indent=2))
