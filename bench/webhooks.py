"""5. Webhook delivery: throughput of one delivery process, and event-to-delivery latency.

Throughput (in this process, on the bench's moto server): one subscription whose URL is a
receiver on loopback (a ThreadingHTTPServer answering 204 at once), --webhook-messages delivery
messages, handed to WebhookDeliveryFunction's real handler in batches of 10 (what the SQS
mapping's BatchSize gives it), one batch after the other, as one Lambda container would take
them. Each delivery: the subscription read, the signature (the unsealed secret is cached), the
POST, the attempt logged. The receiver checks a sample with the standardwebhooks library.

Latency (in a child process: the local stack sets its own environment): the local stack as in
the e2e tests (LocalStack in-process, its pollers and gateway), a subscription to
project.created on a loopback receiver, then --webhook-events POST /api/v1/projects one after
the other; for each, the time from sending the request to the receiver getting the signed
delivery: outbox stream -> publisher -> bus -> webhook queue -> fan-out -> delivery queue ->
delivery, every hop polled as the stack polls it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from threading import Thread
from typing import Any

from bench.fixture import ROOT, quiet_stdout
from bench.warm import Latencies
from devstack.loopback_server import LoopbackHTTPServer


@dataclass
class ThroughputResult:
    messages: int
    seconds: float
    delivered: int
    verified_sample: int
    failures: int

    @property
    def per_second(self) -> float:
        return self.delivered / self.seconds if self.seconds else 0.0


@dataclass
class LatencyResult(Latencies):
    events: int
    latencies_ms: list[float]
    startup_s: float


def _receiver(secret: str, verify_every: int = 50):
    from standardwebhooks import Webhook
    seen: dict[str, Any] = {"count": 0, "verified": 0, "arrivals": {}}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as a real endpoint would

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen["count"] += 1
            if seen["count"] % verify_every == 1:
                Webhook(secret).verify(body, dict(self.headers))
                seen["verified"] += 1
            seen["arrivals"][json.loads(body)["data"]["id"]] = time.time()
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
    Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server, seen


def throughput(fixture, messages: int = 500) -> ThroughputResult:
    from svc_core.contracts import events
    from svc_core.data.webhook_delivery_queue import delivery_message
    from tests.support.functions import load_function
    from tests.support.webhook_receiver import new_secret, register

    secret = new_secret()
    server, seen = _receiver(secret)
    try:
        webhook_id = register(fixture.tenant_id, f"http://127.0.0.1:{server.server_address[1]}/hooks", secret)
        handler = load_function("webhook_delivery").lambda_handler

        def records(count: int) -> list[dict[str, Any]]:
            made = []
            for _ in range(count):
                event = events.new_event("project.created", fixture.tenant_id, {"id": "proj_bench", "name": "x"})
                made.append({"messageId": str(uuid.uuid4()), "receiptHandle": "unused-on-success",
                             "body": delivery_message(event, webhook_id).to_json(),
                             "attributes": {"ApproximateReceiveCount": "1"}, "messageAttributes": {},
                             "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:0:WebhookDeliveryQueue",
                             "awsRegion": "us-east-1", "md5OfBody": ""})
            return made

        batches = [records(10) for _ in range(max(1, messages // 10))]
        failures = 0
        with quiet_stdout():
            handler({"Records": records(10)}, None)  # warm-up: imports, clients, the unsealed secret
            seen["count"] = seen["verified"] = 0
            started = time.perf_counter()
            for batch in batches:
                failures += len(handler({"Records": batch}, None)["batchItemFailures"])
            seconds = time.perf_counter() - started
        return ThroughputResult(sum(map(len, batches)), seconds, seen["count"], seen["verified"], failures)
    finally:
        server.shutdown()
        server.server_close()


def latency(env: dict[str, str], events: int = 50) -> LatencyResult:
    """Runs _latency_child in a fresh interpreter and reads its JSON answer."""
    done = subprocess.run([sys.executable, "-m", "bench.webhooks", "latency", str(events)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{\"bench\"")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"the webhook latency run failed:\n{done.stderr[-3000:]}")
    answer = json.loads(lines[-1])
    return LatencyResult(events, answer["latencies_ms"], answer["startup_s"])


def _latency_child(events: int) -> None:
    import httpx

    from devstack.bootstrap import bootstrap
    from devstack.stack import LocalStack
    from tests.support.webhook_receiver import new_secret, register

    begun = time.monotonic()
    stack = LocalStack(port=0, log=lambda _m: None, parameters={"LogLevel": "WARNING"}).start()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-webhooks-") as tmp:
            credentials = bootstrap(stack.base_url, Path(tmp) / "credentials.json")
        startup = time.monotonic() - begun
        secret = new_secret()
        server, seen = _receiver(secret, verify_every=1)
        register(credentials["tenantId"], f"http://127.0.0.1:{server.server_address[1]}/hooks", secret,
                 events=["project.created"])
        latencies = []
        with httpx.Client(base_url=stack.base_url, timeout=30,
                          headers={"Authorization": f"Bearer {credentials['apiKey']}"}) as http:
            for i in range(events + 2):  # two warm-up events, not counted
                sent = time.time()
                answer = http.post("/api/v1/projects", json={"name": f"bench webhook {i}", "language": "python"})
                answer.raise_for_status()
                project_id = answer.json()["data"]["id"]
                deadline = time.monotonic() + 30
                while project_id not in seen["arrivals"] and time.monotonic() < deadline:
                    time.sleep(0.002)
                arrived = seen["arrivals"].get(project_id)
                if arrived is None:
                    raise RuntimeError(f"no delivery for project {project_id} in 30 s")
                if i >= 2:
                    latencies.append((arrived - sent) * 1000)
        server.shutdown()
    finally:
        stack.stop()
    print(json.dumps({"bench": "webhook-latency", "latencies_ms": latencies, "startup_s": startup}))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "latency":
        _latency_child(int(sys.argv[2]))
