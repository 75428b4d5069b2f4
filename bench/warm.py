"""2. Warm overhead of the shared layer per request, AWS time excluded.

ProjectsFunction's handler is called in this process for GET /api/v1/projects/{id} with an
API key already in the container's cache, against the moto server. Per request: the time
in lambda_handler minus the time inside botocore API calls (before-call to after-call, see
bench/awstime.py). What is left is authentication with the cached key (format, checksum,
HMAC), the rate-limit bookkeeping around its UpdateItem, routing, validation, the domain
code, the envelope, the headers, the log line, and botocore's client-side work (parameter
validation, endpoint resolution, serialization), shown on its own line too; the last line takes
away every moment inside a botocore client method (its event dispatch and retry bookkeeping
too); the last, the same requests with botocore's answers canned: the shared layer's own time,
which the 0.5 ms target is about (the wall-clock figures also hold the process resuming after each
round trip to the emulator on this shared machine). The same
difference in the process's CPU time (both threads of a request) is shown as well: on a shared machine, wall time also
holds the moments the process waited for a core.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass

from bench.awstime import AwsCalls
from bench.fixture import Fixture, quiet_stdout


@dataclass
class WarmResult:
    requests: int
    overhead_us: list[float]          # handler - inside the AWS calls
    layer_only_us: list[float]        # handler - inside - botocore's client side
    layer_own_us: list[float]         # handler - the whole botocore calls: the shared layer's own time
    canned_us: list[float]            # the same with botocore's answers canned: no network, no emulator
    overhead_cpu_us: list[float]      # as overhead_us, in the process's CPU time
    handler_us: list[float]
    inside_us: list[float]
    calls_per_request: float


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile: the median for 50, else the nearest rank; NaN when there are no values."""
    if not values:
        return float("nan")
    if p == 50:
        return statistics.median(values)
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


class Latencies:
    """p50 and p99 of a result's latencies_ms."""
    latencies_ms: list[float]

    @property
    def p50(self) -> float:
        return percentile(self.latencies_ms, 50)

    @property
    def p99(self) -> float:
        return percentile(self.latencies_ms, 99)


def measure(fixture: Fixture, requests: int, warmup: int = 50) -> WarmResult:
    import time

    from tests.support.functions import api_event, load_function

    handler = load_function("projects").lambda_handler
    events = [api_event("Projects-GetProject", token=fixture.key, path_params={"id": fixture.project_id})
              for _ in range(warmup + requests)]
    calls = AwsCalls().install()
    result = WarmResult(requests, [], [], [], [], [], [], [], 0.0)
    total_calls = 0
    try:
        with quiet_stdout():
            for event in events[:warmup]:
                if handler(event, None)["statusCode"] != 200:
                    raise RuntimeError("the warm-up request failed")
            for event in events[warmup:]:
                calls.reset()
                started, started_cpu = time.perf_counter(), time.process_time()
                response = handler(event, None)
                elapsed, elapsed_cpu = time.perf_counter() - started, time.process_time() - started_cpu
                if response["statusCode"] != 200:
                    raise RuntimeError(f"warm request answered {response['statusCode']}: {response['body']}")
                total_calls += calls.count
                result.handler_us.append(elapsed * 1e6)
                result.inside_us.append(calls.inside * 1e6)
                result.overhead_us.append((elapsed - calls.inside) * 1e6)
                result.layer_only_us.append((elapsed - calls.inside_or_client_side) * 1e6)
                result.layer_own_us.append((elapsed - calls.whole) * 1e6)
                result.overhead_cpu_us.append((elapsed_cpu - calls.inside_cpu) * 1e6)
    finally:
        calls.uninstall()
    result.calls_per_request = total_calls / requests
    result.canned_us = _with_canned_answers(handler, events[warmup:])
    return result


def _call_key(operation: str, params: dict) -> str:
    return json.dumps([operation, params.get("TableName"), params.get("Key")], sort_keys=True, default=str)


def _with_canned_answers(handler, events: list[dict]) -> list[float]:
    """The same requests with every botocore call answered from a recording of the real answers
    (by operation, table and key): what is left is the layer's own work, without the process
    resuming after each round trip to the emulator (which the wall-clock figures above hold too).
    The stand-in's own time is taken away as a call's."""
    import copy
    import time

    import botocore.client

    real = botocore.client.BaseClient._make_api_call
    answers: dict[str, dict] = {}

    def record(client, operation, params):
        answer = real(client, operation, params)
        answers[_call_key(operation, params)] = copy.deepcopy(answer)
        return answer

    def canned(client, operation, params):
        return copy.deepcopy(answers[_call_key(operation, params)])

    times = []
    try:
        botocore.client.BaseClient._make_api_call = record
        with quiet_stdout():
            handler(events[0], None)
        botocore.client.BaseClient._make_api_call = canned
        calls = AwsCalls().install()   # wraps the stand-in: its time is taken away as a call's
        try:
            with quiet_stdout():
                for event in events:
                    calls.reset()
                    started = time.perf_counter()
                    response = handler(event, None)
                    elapsed = time.perf_counter() - started
                    if response["statusCode"] != 200:
                        raise RuntimeError(f"canned request answered {response['statusCode']}: {response['body']}")
                    times.append((elapsed - calls.whole) * 1e6)
        finally:
            calls.uninstall()
    finally:
        botocore.client.BaseClient._make_api_call = real
    return times


def summary(values: list[float]) -> tuple[float, float]:
    return percentile(values, 50), percentile(values, 99)
