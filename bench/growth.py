"""10. Growth without surprises: one tenant's lists with 10 items and with 100,000.

On the local stack (DynamoDB Local), one tenant is given N projects, agents, events and audit
entries, then each list's first page is read REPEATS times: unfiltered, and filtered for what only
the newest 10 items match (project.created events, webhook.created audit entries: the worst case of a
filter on a time-ordered partition, whose page reads through the others). The items are copies of
ones the API made (each table's own shape), written with BatchWriteItem under new time-ordered ids,
older than the API's own, so a seeding of 100,000 takes a minute or two instead of the API's hours
at 40 creates a second. Then the audit export (at most 10,000 entries by design) is run over the
100,000 and over its newest 9,000-odd, with the local stack's RSS before each and its peak during
it (the stack serves every function in one process).

    .venv/bin/python -m bench --only growth [--growth-items 100000]

What it does not show: DynamoDB's own latency per read (DynamoDB Local is a different engine) and
a tenant's deletion (the service has none yet).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.fixture import ROOT

REPEATS = 15
PAGE = 50


@dataclass
class ListTiming:
    route: str
    items: int                        # the tenant's items of that kind
    median_ms: float
    p90_ms: float
    shown: int                        # items on the first page
    more: bool                        # a cursor to go on
    pages_to_end: int | None = None   # a filtered list: the pages a client reads to learn there is no more
    seconds_to_end: float | None = None


@dataclass
class GrowthRun:
    small: int
    large: int
    seeded_per_second: float
    timings: list[ListTiming] = field(default_factory=list)
    export: dict[str, Any] = field(default_factory=dict)             # over the whole log
    export_narrowed: dict[str, Any] = field(default_factory=dict)    # over its newest 9,000-odd entries


def _routes() -> list[tuple[str, str, dict[str, Any]]]:
    """(label, path, query) of each first page measured; `kind` is the table the count is of."""
    return [
        ("projects", "/api/v1/projects", {"limit": PAGE}),
        ("agents", "/api/v1/agents", {"limit": PAGE}),
        ("events", "/api/v1/events", {"limit": PAGE}),
        ("events, a type only the newest 10 have", "/api/v1/events", {"limit": PAGE, "type": "project.created"}),
        ("audit log", "/api/v1/audit-log", {"limit": PAGE}),
        ("audit log, an action only the newest 10 have", "/api/v1/audit-log",
         {"limit": PAGE, "action": "webhook.created"}),
    ]


def _stack_env(port: str) -> dict[str, str]:
    from devstack.stack import environment_file

    return json.loads(environment_file(int(port), None).read_text())


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class RssPeak:
    """The highest resident size of a process while the block runs, sampled every 10 ms (its VmHWM
    is no use: the stack's start-up peak stands above what a request adds)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.before, self.peak = pid, 0, 0
        self._done = threading.Event()

    def _sample(self) -> None:
        while not self._done.is_set():
            self.peak = max(self.peak, _rss_kib(self.pid))
            self._done.wait(0.01)

    def __enter__(self) -> RssPeak:
        self.before = self.peak = _rss_kib(self.pid)
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()


class Seeder:
    """Copies of a template item of one table under new ids, older than every id the API made."""

    def __init__(self, stack: dict[str, str]) -> None:
        import boto3

        self.client = boto3.client("dynamodb", endpoint_url=stack["AWS_ENDPOINT_URL_DYNAMODB"],
                                   region_name=stack["AWS_REGION"], aws_access_key_id="bench",
                                   aws_secret_access_key="bench")
        self.stack = stack
        self.clock_ms = int(time.time() * 1000) - 86_400_000    # a day ago, then one id a millisecond on
        self.lock = threading.Lock()

    def template(self, table: str, tenant_id: str, prefix: str) -> dict[str, Any]:
        """The newest item of the tenant with this id prefix (the API's own)."""
        page = self.client.query(TableName=self.stack[table], KeyConditionExpression="tenantId = :t AND begins_with(id, :p)",
                                 ExpressionAttributeValues={":t": {"S": tenant_id}, ":p": {"S": prefix + "_"}},
                                 ScanIndexForward=False, Limit=1)
        return page["Items"][0]

    def copies(self, table: str, item: dict[str, Any], prefix: str, count: int, changes=None, threads: int = 4) -> int:
        """Write `count` copies of item under new ids, a millisecond apart; changes(copy, n) may alter a
        copy further. The first copy's time (epoch ms)."""
        from svc_core.platform import ids

        with self.lock:
            start, self.clock_ms = self.clock_ms, self.clock_ms + count
        made = [f"{prefix}_{ids.new_ulid(start + n)}" for n in range(count)]

        def write(chunk: list[str]) -> None:
            for begin in range(0, len(chunk), 25):
                requests = []
                for n, new_id in enumerate(chunk[begin:begin + 25], start=begin):
                    copy = {**item, "id": {"S": new_id}}
                    if changes is not None:
                        changes(copy, n)
                    requests.append({"PutRequest": {"Item": copy}})
                pending = {self.stack[table]: requests}
                while pending:
                    pending = self.client.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}

        share = -(-count // threads)
        workers = [threading.Thread(target=write, args=(made[i:i + share],)) for i in range(0, count, share)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        return start


def measure(env: dict[str, str], large: int = 100_000, small: int = 10, progress=print) -> GrowthRun:
    import httpx

    from bench.load import _start_stack, _stop_stack

    with tempfile.TemporaryDirectory(prefix="bench-growth-") as tmp:
        process, creds, _ = _start_stack(env, Path(tmp))
        try:
            base, key, tenant_id = creds["baseUrl"], creds["apiKey"], creds["tenantId"]
            port = base.rsplit(":", 1)[1].split("/")[0]
            subprocess.run([sys.executable, "-m", "ops", "--local", "--stack", port, "tenants", "set-plan",
                            tenant_id, "enterprise"], cwd=ROOT, env=env, check=True, capture_output=True)
            stack = _stack_env(port)
            seeder = Seeder(stack)
            http = httpx.Client(base_url=base, timeout=60, headers={"Authorization": f"Bearer {key}"})
            with http:
                # The API's own items: the templates, and the newest ten of each kind (what the filters find).
                for n in range(small):
                    http.post("/api/v1/projects", json={"name": f"growth {n}"}).raise_for_status()
                    http.post("/api/v1/agents", json={"name": f"growth {n}", "systemPrompt": "Read.",
                                                      "config": {"autonomyLevel": "suggest"}}).raise_for_status()
                    http.post("/api/v1/webhooks", json={"url": f"https://hooks.example.com/growth/{n}",
                                                        "events": ["project.created"]}).raise_for_status()
                _wait_for_events(http, "project.created", small)
                run = GrowthRun(small, large, 0.0)
                run.timings += _first_pages(http, small, progress)

                templates = {
                    "PROJECTS_TABLE": ("proj", seeder.template("PROJECTS_TABLE", tenant_id, "proj")),
                    "AGENTS_TABLE": ("agt", seeder.template("AGENTS_TABLE", tenant_id, "agt")),
                    "EVENTS_TABLE": ("evt", seeder.template("EVENTS_TABLE", tenant_id, "evt")),
                    "AUDIT_LOG_TABLE": ("aud", seeder.template("AUDIT_LOG_TABLE", tenant_id, "aud")),
                }
                # Copies carry another event type and audit action than the newest ten's.
                retype = {"EVENTS_TABLE": lambda copy, n: copy.update(type={"S": "project.updated"}),
                          "AUDIT_LOG_TABLE": lambda copy, n: copy.update(action={"S": "tenant.settings_changed"})}
                began = time.monotonic()
                first_ms = {}
                for table, (prefix, item) in templates.items():
                    progress(f"  seeding {large - small:,} copies into {stack[table]}")
                    first_ms[table] = seeder.copies(table, item, prefix, large - small, retype.get(table))
                seconds = time.monotonic() - began
                run.seeded_per_second = 4 * (large - small) / seconds if seconds else 0.0
                progress(f"  seeded {4 * (large - small):,} items in {seconds:.0f} s")
                run.timings += _first_pages(http, large, progress)
                # The export: over the whole log (more than it holds: refused once it has read past its
                # limit), then over the newest 9,000 copies and the API's own entries.
                run.export = _export(http, process.pid, {}, progress)
                newest = first_ms["AUDIT_LOG_TABLE"] + (large - small) - 9_000
                run.export_narrowed = _export(http, process.pid, {"since": _iso_ms(newest)}, progress)
        finally:
            _stop_stack(process)
    return run


def _wait_for_events(http, event_type: str, count: int, longest: float = 60.0) -> None:
    began = time.monotonic()
    while time.monotonic() - began < longest:
        answer = http.get("/api/v1/events", params={"type": event_type, "limit": PAGE})
        answer.raise_for_status()
        if len(answer.json()["data"]["items"]) >= count:
            return
        time.sleep(0.3)
    raise RuntimeError(f"the tenant's event log did not show {count} {event_type} events in {longest:.0f} s")


def _first_pages(http, items: int, progress) -> list[ListTiming]:
    out = []
    for label, path, query in _routes():
        http.get(path, params=query).raise_for_status()      # one warm-up: a container per function
        times, page = [], {}
        for _ in range(REPEATS):
            began = time.perf_counter()
            answer = http.get(path, params=query)
            times.append((time.perf_counter() - began) * 1000)
            answer.raise_for_status()
            page = answer.json()["data"]
        times.sort()
        timing = ListTiming(label, items, statistics.median(times), times[int(len(times) * 0.9) - 1],
                            len(page["items"]), bool(page.get("nextCursor")))
        if len(query) > 1:   # filtered: every match is on the first page; the rest only says "none here"
            timing.pages_to_end, timing.seconds_to_end = _to_the_end(http, path, query)
        progress(f"  {label}, {items:,} items: median {timing.median_ms:.1f} ms, {timing.shown} shown, "
                 f"{'more' if timing.more else 'no more'}")
        out.append(timing)
    return out


def _to_the_end(http, path: str, query: dict[str, Any]) -> tuple[int, float]:
    pages, cursor, began = 0, None, time.perf_counter()
    while True:
        answer = http.get(path, params={**query, **({"cursor": cursor} if cursor else {})})
        answer.raise_for_status()
        pages += 1
        cursor = answer.json()["data"].get("nextCursor")
        if not cursor:
            return pages, time.perf_counter() - began


def _iso_ms(epoch_ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch_ms // 1000)) + f".{epoch_ms % 1000:03d}Z"


def _export(http, pid: int, query: dict[str, str], progress) -> dict[str, Any]:
    with RssPeak(pid) as rss:
        began = time.perf_counter()
        answer = http.post("/api/v1/audit-log/export", params=query)
        seconds = time.perf_counter() - began
    body = answer.json()
    result = {"status": answer.status_code, "seconds": seconds, "rss_before_mib": rss.before / 1024,
              "rss_peak_mib": rss.peak / 1024,
              "entries": (body.get("data") or {}).get("entries"),
              "error": (body.get("error") or {}).get("code")}
    progress(f"  audit export {query or 'of the whole log'}: {result}")
    return result


def rows(run: GrowthRun) -> list[tuple]:
    out: list[tuple] = [(f"10. Growth: first pages with {run.small:,} and {run.large:,} items of a kind in one tenant "
                         f"(local stack, DynamoDB Local; seeded at {run.seeded_per_second:,.0f} items/s)",)]
    by_route: dict[str, dict[int, ListTiming]] = {}
    for timing in run.timings:
        by_route.setdefault(timing.route, {})[timing.items] = timing
    for route, sizes in by_route.items():
        few, many = sizes.get(run.small), sizes.get(run.large)
        if few is None or many is None:
            continue
        out.append((f"  {route}", f"{many.median_ms:.1f} ms", f"{many.median_ms / few.median_ms:.2f}x",
                    f"the first page with {run.small:,}: {few.median_ms:.1f} ms",
                    f"p90 {few.p90_ms:.1f} / {many.p90_ms:.1f} ms; shown {few.shown} / {many.shown}"
                    f"{', more' if many.more else ''}"
                    + (f"; to the end {few.pages_to_end} / {many.pages_to_end} pages, "
                       f"{few.seconds_to_end:.1f} / {many.seconds_to_end:.1f} s" if many.pages_to_end else "")))
    for label, export in (("audit export over the whole log", run.export),
                          ("audit export, its newest 9,000-odd entries", run.export_narrowed)):
        if export:
            out.append((f"  {label}", f"{export['seconds']:.1f} s", "", "",
                        f"status {export['status']} {export.get('error') or ''} entries {export.get('entries')}; the "
                        f"stack's RSS {export['rss_before_mib']:.0f} MiB before, at most {export['rss_peak_mib']:.0f} "
                        "during it"))
    return out
