"""Watching the service's botocore calls: how many, which, and how long they take.

Hooks go on the botocore session of svc_core.adapters.aws; clients copy the session's handlers when
they are created, so the cached clients are dropped (not the session) to be made again with
the hooks. Three of botocore's events bound a call (botocore/client.py, _make_api_call):

  provide-client-params  -> the call begins (parameter validation, endpoint resolution and
                            serialization follow, on the client side)
  before-call            -> the request is about to be signed and sent
  after-call             -> the answer is parsed (also for an error status)

"Inside the call" is before-call to after-call: the emulator's time, the HTTP round trip,
signing and response parsing. "Client side" is provide-client-params to before-call. "Whole"
is the client method from entry to return (BaseClient._make_api_call, wrapped while installed):
everything botocore does for the call, the event dispatch and retry bookkeeping around those
two windows included.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any


def covered(spans: list[tuple[float, float]]) -> float:
    """The time covered by any of the spans: calls made at once (the two rate-limit counts go
    out together) are not counted twice."""
    total, end = 0.0, float("-inf")
    for start, stop in sorted(spans):
        if stop > end:
            total += stop - max(start, end)
            end = stop
    return total


class AwsCalls:
    """Spans of the calls, per request (reset between requests); each figure is the time covered
    by its spans. CPU figures use the process's CPU clock: both threads of a request count."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.operations: Counter[str] = Counter()
        self.inside_spans: list[tuple[float, float]] = []       # before-call -> after-call
        self.inside_cpu_spans: list[tuple[float, float]] = []   # the same, in process CPU time
        self.client_spans: list[tuple[float, float]] = []       # provide-client-params -> before-call
        self.whole_spans: list[tuple[float, float]] = []        # BaseClient._make_api_call, entry to return

    @property
    def inside(self) -> float:
        return covered(self.inside_spans)

    @property
    def inside_cpu(self) -> float:
        return covered(self.inside_cpu_spans)

    @property
    def client_side(self) -> float:
        return covered(self.client_spans)

    @property
    def inside_or_client_side(self) -> float:
        return covered(self.inside_spans + self.client_spans)

    @property
    def whole(self) -> float:
        return covered(self.whole_spans)

    @property
    def count(self) -> int:
        return sum(self.operations.values())

    def _begin(self, context: dict[str, Any] | None = None, **_: Any) -> None:
        if context is not None:
            context["_bench_begin"] = time.perf_counter()

    def _before(self, model=None, context: dict[str, Any] | None = None, **_: Any) -> None:
        now = time.perf_counter()
        if context is None:
            return
        begun = context.pop("_bench_begin", None)
        if begun is not None:
            self.client_spans.append((begun, now))
        context["_bench_before"] = now
        context["_bench_before_cpu"] = time.process_time()
        self.operations[model.name] += 1

    def _after(self, context: dict[str, Any] | None = None, **_: Any) -> None:
        started = (context or {}).pop("_bench_before", None)
        started_cpu = (context or {}).pop("_bench_before_cpu", None)
        if started is not None:
            self.inside_spans.append((started, time.perf_counter()))
            self.inside_cpu_spans.append((started_cpu, time.process_time()))

    def install(self) -> AwsCalls:
        import botocore.client

        from svc_core.adapters import aws
        self._original = original = botocore.client.BaseClient._make_api_call
        calls = self

        def timed(client, operation_name, api_params):
            started = time.perf_counter()
            try:
                return original(client, operation_name, api_params)
            finally:
                calls.whole_spans.append((started, time.perf_counter()))

        botocore.client.BaseClient._make_api_call = timed
        session = aws._session()
        session.register("provide-client-params", self._begin, unique_id="bench-aws-begin")
        session.register("before-call", self._before, unique_id="bench-aws-before")
        session.register("after-call", self._after, unique_id="bench-aws-after")
        aws.client.cache_clear()  # made again, with the hooks, at their next use
        return self

    def uninstall(self) -> None:
        import botocore.client

        from svc_core.adapters import aws
        botocore.client.BaseClient._make_api_call = self._original
        session = aws._session()
        for event, uid in (("provide-client-params", "bench-aws-begin"), ("before-call", "bench-aws-before"),
                           ("after-call", "bench-aws-after")):
            session.unregister(event, unique_id=uid)
        aws.client.cache_clear()
