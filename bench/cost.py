"""8. What AWS would charge: dollars per million calls of every route, and a tenant's month.

The local stack runs as the README starts it (`python -m devstack --port 0`, DynamoDB Local for the
tables, every function under its role) with DEVSTACK_METER set: each invocation records what it
consumed of what AWS bills (devstack/meter.py: its duration, the bytes it logged, each AWS call with
DynamoDB's own ConsumedCapacity). Every event of events/ (one per route of template.yaml) is sent once
through the gateway, after a pass of the GET events that warms each function's container; DELETE events
come last. What a request sets off (stream fan-out, queue workers) is the invocations that start before
the next request, after the stack has been quiet for a moment; webhook deliveries are priced apart, per
delivery to a loopback receiver. bench/prices.json holds the prices (dated, versioned, with their
region and sources); docs/costs.md says what is and is not counted.

    .venv/bin/python -m bench --only cost
"""

from __future__ import annotations

import base64
import json
import math
import os
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bench.fixture import BENCH

PRICES_FILE = BENCH / "prices.json"
GB = 1024 ** 3
MONTH_SECONDS = 30 * 24 * 3600
SECRETS_CACHE_SECONDS = 300     # svc_core.platform.config: secrets_cache_seconds
# Lambda's own lines per invocation (START, END and REPORT, text format), as it writes them to the
# function's log group: about 290 bytes with their request ids and figures.
PLATFORM_LOG_BYTES = 290
WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems", "ExecuteTransaction"}
DELIVERY_FUNCTION = "WebhookDeliveryFunction"
PARTS = ("API Gateway", "Lambda", "DynamoDB: auth and rate limits", "DynamoDB: the route's own", "SQS",
         "EventBridge", "KMS", "Secrets Manager", "SES", "S3", "Logs")


def prices() -> dict[str, float]:
    document = json.loads(PRICES_FILE.read_text())
    return {name: entry["usd"] for name, entry in document["prices"].items()}


def price_document() -> dict[str, Any]:
    return json.loads(PRICES_FILE.read_text())


# ---- pricing one invocation -------------------------------------------------------------------------

@dataclass
class Bill:
    """Dollars by part, and the units behind them."""
    parts: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    units: Counter = field(default_factory=Counter)

    def add(self, other: Bill, times: float = 1.0) -> None:
        for part, usd in other.parts.items():
            self.parts[part] += usd * times
        for unit, count in other.units.items():
            self.units[unit] += count * times

    @property
    def total(self) -> float:
        return sum(self.parts.values())


def price_invocation(record: dict[str, Any], memory_mb: int, p: dict[str, float], *, global_tables: dict[str, int],
                     billed_ms: float | None = None) -> Bill:
    """What one invocation costs: Lambda's request and duration (rounded up to 1 ms, at the function's
    memory), its log bytes, API Gateway's request and bytes out when it served one, and each AWS call."""
    bill = Bill()
    ms = math.ceil(record["ms"] if billed_ms is None else billed_ms)
    bill.parts["Lambda"] += p["lambda.request"] + ms / 1000 * memory_mb / 1024 * p["lambda.arm64_gb_second"]
    bill.units["lambda GB-ms"] += ms * memory_mb / 1024
    log_bytes = record.get("logBytes", 0) + PLATFORM_LOG_BYTES
    bill.parts["Logs"] += log_bytes / GB * p["logs.ingested_gb"]
    bill.units["log bytes"] += log_bytes
    if record.get("source") == "api":
        bill.parts["API Gateway"] += p["apigateway.rest_request"] + record.get("responseBytes", 0) / GB * p[
            "apigateway.data_out_gb"]
    if record.get("source") == "aws:sqs":   # the event source mapping's receive and delete of the batch
        bill.parts["SQS"] += 2 * p["sqs.request"]
        bill.units["SQS requests"] += 2
    for call in record.get("calls", []):
        price_call(call, bill, p, global_tables)
    return bill


def price_call(call: dict[str, Any], bill: Bill, p: dict[str, float], global_tables: dict[str, int]) -> None:
    service, operation = call["service"], call["operation"]
    if service == "dynamodb":
        write = operation in WRITES
        units = sum(entry["total"] for entry in call.get("units", []))
        part = "DynamoDB: auth and rate limits" if call.get("overhead") else "DynamoDB: the route's own"
        price = p["dynamodb.write_request_unit"] if write else p["dynamodb.read_request_unit"]
        bill.parts[part] += units * price
        bill.units["WRU" if write else "RRU"] += units
        if write:
            for entry in call.get("units", []):
                replicas = global_tables.get(entry.get("table") or "", 0)
                if replicas:
                    bill.parts[part] += entry["total"] * replicas * p["dynamodb.replicated_write_request_unit"]
                    bill.units["replicated WRU"] += entry["total"] * replicas
        return
    chunks = call.get("chunks", 1)
    if service == "sqs":
        bill.parts["SQS"] += chunks * p["sqs.request"]
        bill.units["SQS requests"] += chunks
    elif service == "events":
        bill.parts["EventBridge"] += chunks * p["eventbridge.custom_event"]
        bill.units["events"] += chunks
    elif service == "kms":
        bill.parts["KMS"] += p["kms.request"]
        bill.units["KMS requests"] += 1
    elif service == "secretsmanager" and operation == "GetSecretValue":
        # A container keeps a secret for SECRETS_CACHE_SECONDS (svc_core/adapters/secrets_cache.py): a read
        # is a refresh, once per container and secret in that time whatever the traffic, so it is priced
        # in the month (idle_month), not per call. A single counted request meets one only by chance.
        bill.units["Secrets Manager cache refreshes"] += 1
    elif service == "secretsmanager":
        bill.parts["Secrets Manager"] += p["secretsmanager.request"]
        bill.units["Secrets Manager requests"] += 1
    elif service in ("email", "ses"):
        bill.parts["SES"] += chunks * p["ses.message"]
        bill.units["e-mails"] += chunks
    elif service == "s3":
        kind = "s3.put_request" if operation.startswith(("Put", "Copy", "List", "Create", "Complete", "Upload",
                                                           "Delete")) else "s3.get_request"
        bill.parts["S3"] += 0.0 if operation.startswith("Delete") else p[kind]   # S3 does not charge DELETE
        bill.units["S3 requests"] += 1
    else:
        bill.units[f"{service} requests (not priced)"] += 1


def floor_of(record: dict[str, Any], memory_mb: int, p: dict[str, float], global_tables: dict[str, int]) -> Bill:
    """The route's floor: one gateway request and one invocation lasting only as long as the route's own
    AWS calls, with only those calls (no authentication, rate limits or logs)."""
    own = [call for call in record.get("calls", []) if not call.get("overhead")]
    bare = {**record, "calls": own, "logBytes": 0}
    bill = price_invocation(bare, memory_mb, p, global_tables=global_tables,
                            billed_ms=max(1.0, sum(call.get("ms", 0.0) for call in own)))
    bill.parts["Logs"] = 0.0
    return bill


# ---- the run ------------------------------------------------------------------------------------------

@dataclass
class RouteCost:
    event: str
    route: str
    function: str
    status: int | None
    memory_mb: int
    ms: float
    bill: Bill                    # the request itself
    follow_on: Bill               # what it set off (stream fan-out, queue workers), deliveries apart
    floor: Bill
    follow_on_functions: list[str]
    note: str = ""

    @property
    def total(self) -> float:
        return self.bill.total + self.follow_on.total


@dataclass
class CostRun:
    routes: list[RouteCost]
    delivery: Bill                # per webhook delivered to a receiver that answers 2xx
    deliveries: int
    metrics: set[str]
    secret_readers: set[str]      # function/secret pairs read (each refreshed every SECRETS_CACHE_SECONDS)
    machine: str
    date: str
    engine: str


class _Meter:
    """The records the stack appends to DEVSTACK_METER's files, read as they come."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.records: list[dict[str, Any]] = []
        self._offsets: dict[Path, int] = {}

    def poll(self) -> int:
        new = 0
        for path in sorted(self.directory.glob("*.jsonl")):
            with open(path, "rb") as file:
                file.seek(self._offsets.get(path, 0))
                data = file.read()
            complete = data[:data.rfind(b"\n") + 1]   # a line still being written waits for the next poll
            self._offsets[path] = self._offsets.get(path, 0) + len(complete)
            for line in complete.splitlines():
                self.records.append(json.loads(line))
                new += 1
        return new

    def quiet(self, seconds: float, longest: float = 20.0) -> None:
        """Wait until no invocation has ended for `seconds` (at most `longest`)."""
        last, ended = time.monotonic(), time.monotonic() + longest
        while time.monotonic() < ended:
            time.sleep(0.1)
            if self.poll():
                last = time.monotonic()
            elif time.monotonic() - last >= seconds:
                return


def _send(base_url: str, event: dict[str, Any]) -> int:
    body = base64.b64decode(event["body"]) if event.get("body") and event.get("isBase64Encoded") else (
        (event.get("body") or "").encode() or None)
    query = event.get("queryStringParameters") or {}
    url = base_url + event["path"] + ("?" + urllib.parse.urlencode(query) if query else "")
    headers = {name: value for name, value in (event.get("headers") or {}).items()
               if name.lower() in ("authorization", "content-type", "accept", "idempotency-key", "stripe-signature",
                                   "x-api-key", "webhook-id", "webhook-signature", "webhook-timestamp")}
    headers.setdefault("Content-Type", "application/json")
    request = urllib.request.Request(url, data=body, method=event["httpMethod"], headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as error:
        error.read()
        return error.code


class _Receiver(ThreadingHTTPServer):
    """A webhook receiver on loopback that answers 204 and counts what it received."""

    def __init__(self) -> None:
        self.received = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                server.received += 1
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()


def measure(env: dict[str, str], progress=print, deliveries: int = 20) -> CostRun:
    import platform

    from bench.load import _start_stack, _stop_stack
    from devstack import sam_local, sample_events
    from devstack.template import Resolver

    resolver = Resolver({"AllowLoopbackEndpoints": "true", "ModelProvider": "offline"})
    memory = _memory_by_function(resolver)
    global_tables = _global_tables(resolver)
    p = prices()
    with tempfile.TemporaryDirectory(prefix="bench-cost-") as workdir:
        meter_dir = Path(workdir) / "meter"
        stack_env = {**env, "DEVSTACK_METER": str(meter_dir), "POWERTOOLS_METRICS_DISABLED": "false"}
        process, credentials, _startup = _start_stack(stack_env, Path(workdir))
        try:
            base_url = credentials["baseUrl"].rstrip("/") if "baseUrl" in credentials else _base_url(credentials)
            values = sam_local.create_samples(base_url, credentials)
            events = {}
            for name, (event, _status) in sample_events.build().items():
                try:
                    events[name] = sam_local.fill(event, values, absent_ok=sample_events.absent_allowed(name))
                except sam_local.MissingSample:
                    progress(f"  {name}: no sample for it, left out")
            meter = _Meter(meter_dir)
            progress(f"cost: warming {sum(e['httpMethod'] == 'GET' for e in events.values())} GET routes")
            for _name, event in sorted(events.items()):
                if event["httpMethod"] == "GET":
                    _send(base_url, event)
            meter.quiet(1.5)
            order = sorted(events, key=lambda n: (events[n]["httpMethod"] == "DELETE", n))
            progress(f"cost: {len(order)} routes, one counted request each")
            routes = []
            for name in order:
                meter.poll()
                first = len(meter.records)
                status = _send(base_url, events[name])
                meter.quiet(0.4 if events[name]["httpMethod"] == "GET" else 1.5)
                window = meter.records[first:]
                routes.append(_route_cost(name, events[name], status, window, memory, p, global_tables))
            progress(f"cost: {deliveries} webhook deliveries to a loopback receiver")
            delivery, delivered = _deliveries(base_url, values["api_key"], meter, deliveries, memory, p, global_tables)
            metrics = {m for record in meter.records for m in record.get("metrics", [])}
            readers = {f"{record['function']}/{call.get('secret')}" for record in meter.records
                       for call in record.get("calls", []) if call.get("operation") == "GetSecretValue"}
        finally:
            _stop_stack(process)
    return CostRun(routes, delivery, delivered, metrics, readers, f"{platform.machine()}, {os.cpu_count()} CPUs",
                   time.strftime("%Y-%m-%d"), "DynamoDB Local")


def _base_url(credentials: dict[str, Any]) -> str:
    for key in ("apiBaseUrl", "apiUrl", "url"):
        if key in credentials:
            return credentials[key].split("/api/v1")[0]
    raise KeyError(f"the credentials file names no base URL: {sorted(credentials)}")


def _route_cost(name: str, event: dict[str, Any], status: int, window: list[dict[str, Any]], memory: dict[str, int],
                p: dict[str, float], global_tables: dict[str, int]) -> RouteCost:
    route = f"{event['httpMethod']} {event['resource']}"
    own = [r for r in window if r.get("source") == "api" and r.get("route") == route]
    note = ""
    if not own:
        note = "not metered: served streamed (the web adapter's ASGI app)" if "Stream" in name else "no invocation seen"
        empty = {"function": "?", "ms": 0.0, "calls": [], "logBytes": 0, "source": "api"}
        own = [empty]
    record = own[0]
    if record.get("cold"):
        note = "cold: its container's first request (its import included)"
    function = record["function"]
    mb = memory.get(function, 1024)
    bill = price_invocation(record, mb, p, global_tables=global_tables)
    follow_on = Bill()
    names = []
    for other in window:
        if other is record or other.get("function") == DELIVERY_FUNCTION:
            continue
        follow_on.add(price_invocation(other, memory.get(other["function"], 1024), p, global_tables=global_tables))
        names.append(other["function"])
    return RouteCost(name, route, function, status, mb, record["ms"], bill, follow_on,
                     floor_of(record, mb, p, global_tables), sorted(set(names)), note)


def _deliveries(base_url: str, api_key: str, meter: _Meter, count: int, memory: dict[str, int], p: dict[str, float],
                global_tables: dict[str, int]) -> tuple[Bill, int]:
    """Per webhook delivered: the delivery function's invocations while `count` events reach a receiver
    that answers 204, divided by what it received (the tenant's other endpoints deleted first)."""
    def call(method: str, path: str, body: dict | None = None) -> dict[str, Any]:
        request = urllib.request.Request(base_url + path, method=method, data=json.dumps(body).encode() if body else None,
                                         headers={"Authorization": f"Bearer {api_key}",
                                                  "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            text = response.read()
            return json.loads(text) if text else {}

    for hook in call("GET", "/api/v1/webhooks?limit=100")["data"]["items"]:
        call("DELETE", f"/api/v1/webhooks/{hook['id']}")
    receiver = _Receiver()
    try:
        call("POST", "/api/v1/webhooks", {"url": f"http://127.0.0.1:{receiver.server_port}/hook",
                                          "events": ["project.created"]})
        meter.quiet(2.0)
        first = len(meter.records)
        for number in range(count):
            call("POST", "/api/v1/projects", {"name": f"delivery {number}"})
        deadline = time.monotonic() + 60
        while receiver.received < count and time.monotonic() < deadline:
            time.sleep(0.2)
        meter.quiet(2.0)
        bill = Bill()
        for record in meter.records[first:]:
            if record["function"] == DELIVERY_FUNCTION:
                bill.add(price_invocation(record, memory.get(DELIVERY_FUNCTION, 1024), p, global_tables=global_tables))
        delivered = max(1, receiver.received)
        per = Bill()
        per.add(bill, 1 / delivered)
        return per, receiver.received
    finally:
        receiver.shutdown()


def _memory_by_function(resolver: Any) -> dict[str, int]:
    globals_fn = resolver.template.get("Globals", {}).get("Function", {})
    return {logical_id: int(resource["Properties"].get("MemorySize", globals_fn.get("MemorySize", 128)))
            for logical_id, resource in resolver.of_type("AWS::Serverless::Function").items()}


def _global_tables(resolver: Any) -> dict[str, int]:
    """Physical table name -> how many other regions each write is replicated to (a global table's
    replicas beyond the first; one other region where the replicas depend on a parameter)."""
    tables = {}
    for logical_id, resource in resolver.of_type("AWS::DynamoDB::GlobalTable").items():
        replicas = resource["Properties"].get("Replicas", [])
        tables[resolver.physical_name(logical_id)] = max(1, len(replicas) - 1) if isinstance(replicas, list) else 1
    return tables


# ---- a tenant's month ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Profile:
    """A tenant's month: calls per route (by event name), webhooks delivered, and what it stores."""
    name: str
    description: str
    calls: dict[str, float]
    deliveries: float
    dynamodb_gb: float
    s3_gb: float


def _mix(total: float, shares: dict[str, float]) -> dict[str, float]:
    whole = sum(shares.values())
    return {name: total * share / whole for name, share in shares.items()}


# The everyday mix of a tenant's calls (shares of its month), by what the dashboard and an integration
# send most: reads of projects and runs, chat turns with their stream, agent runs, and the sign-ins.
_DASHBOARD_MIX = {"Projects-ListProjects": 20, "Projects-GetProject": 10, "Projects-CreateProject": 1,
                  "Projects-UpdateProject": 2, "Agents-ListAgents": 6, "Agents-GetRun": 8, "Agents-ListRuns": 6,
                  "Agents-ExecuteAgent": 2, "Chat-ListChatSessions": 6, "Chat-ListChatMessages": 8,
                  "Chat-SendChatMessage": 5, "ChatStream-StreamChatSession": 5, "Chat-IssueChatStreamToken": 5,
                  "Auth-Me": 6, "Auth-Refresh": 4, "Auth-Login": 1, "Billing-BillingSummary": 2,
                  "Events-ListEvents": 2, "Audit-ListAuditLog": 1}
_INTEGRATION_MIX = {"Projects-GetProject": 40, "Projects-ListProjects": 15, "Projects-CreateProject": 10,
                    "Projects-UpdateProject": 15, "Projects-DeleteProject": 5, "Agents-ExecuteAgent": 3,
                    "Agents-GetRun": 6, "Chat-SendChatMessage": 3, "Chat-ListChatMessages": 3}

PROFILES = (
    Profile("small team", "3 people on the dashboard, 20 working days: 60,000 calls, 1,500 chat turns, "
            "600 agent runs; 2,000 webhooks delivered; 0.2 GB in DynamoDB, 1 GB of files",
            _mix(60_000, _DASHBOARD_MIX), 2_000, 0.2, 1.0),
    Profile("busy integration", "a backend on API keys, 4 calls a second all month (10.4 million calls, 1 million "
            "creates); 1 million webhooks delivered; 20 GB in DynamoDB, 50 GB of files",
            _mix(10_368_000, _INTEGRATION_MIX), 1_000_000, 20.0, 50.0),
    Profile("enterprise at its rate limit", "the enterprise tenant's ceiling all month: RateLimitPerWindow 1,000 x 20 "
            "(the plan) x 5 (the tenant's multiple) a minute = 1,667 calls a second, 4.32 billion calls; 400 million "
            "webhooks delivered; 2 TB in DynamoDB, 5 TB of files",
            _mix(100_000 / 60 * MONTH_SECONDS, _INTEGRATION_MIX), 400_000_000, 2_000.0, 5_000.0),
)


def month_of(profile: Profile, run: CostRun, p: dict[str, float]) -> Bill:
    by_event = {route.event: route for route in run.routes}
    bill = Bill()
    for event, calls in profile.calls.items():
        route = by_event.get(event)
        if route is None:
            continue
        bill.add(route.bill, calls)
        bill.add(route.follow_on, calls)
    bill.add(run.delivery, profile.deliveries)
    storage = profile.dynamodb_gb * (p["dynamodb.storage_gb_month"] + p["dynamodb.pitr_gb_month"])
    bill.parts["DynamoDB storage and backups"] += storage
    bill.parts["S3 storage"] += profile.s3_gb * p["s3.storage_gb_month"]
    return bill


def idle_month(resolver: Any, run: CostRun, p: dict[str, float]) -> Bill:
    """What the deployment costs a month with no traffic: the alarms, the secrets, the KMS key, the custom
    metrics the functions declare (each namespace, name and dimensions seen in the run), and the event
    source mappings' long polls of the queues (each polls with 5 concurrent 20-second receives when idle)."""
    bill = Bill()
    alarms = len(resolver.of_type("AWS::CloudWatch::Alarm"))
    bill.parts[f"CloudWatch alarms ({alarms})"] += alarms * p["cloudwatch.alarm_month"]
    secrets = len(resolver.of_type("AWS::SecretsManager::Secret"))
    bill.parts[f"Secrets Manager secrets ({secrets})"] += secrets * p["secretsmanager.secret_month"]
    keys = len(resolver.of_type("AWS::KMS::Key"))
    bill.parts[f"KMS keys ({keys})"] += keys * p["kms.key_month"]
    bill.parts[f"custom metrics ({len(run.metrics)})"] += len(run.metrics) * p["cloudwatch.metric_month"]
    refreshes = len(run.secret_readers) * MONTH_SECONDS / SECRETS_CACHE_SECONDS
    bill.parts[f"secret cache refreshes ({len(run.secret_readers)} function and secret pairs, one warm container "
               "each)"] += refreshes * p["secretsmanager.request"]
    queues = len(list(resolver.queue_subscriptions()))
    polls = queues * 5 * MONTH_SECONDS / 20
    bill.parts[f"idle receives of {queues} queues"] += polls * p["sqs.request"]
    return bill


# ---- the printout -----------------------------------------------------------------------------------------

def _usd_per_million(usd: float) -> str:
    return f"{usd * 1e6:,.2f}"


def render(run: CostRun) -> str:
    from devstack.template import Resolver
    document, p = price_document(), prices()
    resolver = Resolver({"AllowLoopbackEndpoints": "true", "ModelProvider": "offline"})
    out = [f"8. Cost (python -m bench --only cost), {run.date}, {run.machine}, tables on {run.engine}; prices "
           f"version {document['version']} of {document['date']}, {document['region']}, {document['currency']}",
           "   dollars per million calls: the request, what it set off, in all, the floor (one gateway request, "
           "one invocation as long as its own AWS calls, their units), in all / floor; then the parts of the request",
           ""]
    header = ("route", "status", "ms", "request", "set off", "in all", "floor", "x floor", *PARTS)
    rows = [header]
    for route in sorted(run.routes, key=lambda r: -r.total):
        rows.append((f"{route.route} ({route.event})", str(route.status), f"{route.ms:.0f}",
                     _usd_per_million(route.bill.total), _usd_per_million(route.follow_on.total),
                     _usd_per_million(route.total), _usd_per_million(route.floor.total),
                     f"{route.total / route.floor.total:.1f}" if route.floor.total else "-",
                     *(_usd_per_million(route.bill.parts.get(part, 0.0)) for part in PARTS)))
    out += _table(rows)
    notes = [f"   {r.event}: {r.note}" for r in run.routes if r.note]
    if notes:
        out += ["", "   notes:", *notes]
    out += ["", f"   a webhook delivered (to a receiver answering 204; {run.deliveries} delivered): "
                f"${run.delivery.total * 1e6:,.2f} per million ("
            + ", ".join(f"{part} {_usd_per_million(usd)}" for part, usd in sorted(run.delivery.parts.items()) if usd)
            + ")", ""]
    out.append("   a tenant's month (the model's own price apart):")
    for profile in PROFILES:
        month = month_of(profile, run, p)
        parts = ", ".join(f"{part} ${usd:,.2f}" for part, usd in sorted(month.parts.items(), key=lambda kv: -kv[1])
                          if usd >= 0.005)
        out.append(f"   - {profile.name}: ${month.total:,.2f} ({profile.description}): {parts}")
    idle = idle_month(resolver, run, p)
    out.append(f"   the deployment idle, a month: ${idle.total:,.2f} ("
               + ", ".join(f"{part} ${usd:,.2f}" for part, usd in idle.parts.items()) + ")")
    return "\n".join(out)


def _table(rows: list[tuple]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["   " + "  ".join(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i])
                              for i, cell in enumerate(row)) for row in rows]
