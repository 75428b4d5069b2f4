"""Conservation soak on the local stack (DynamoDB Local and the emulator), as a user runs it: a long,
seeded, mixed session from 8 clients with deliberate failures, then a count of what was committed,
published and delivered (devstack/soak.py says what is counted). Once as it is, once each with both
datastores paused for 5 s and for 15 s (SIGSTOP, SIGCONT) in the middle (test_soak_paused.py,
test_soak_stalled.py). `python -m bench --only soak` runs them longer.

A soak is bounded by its call count and settles by progress (devstack/soak.py's _settle), never by
a wall clock: no pytest timeout applies (SOAK below), so a busy machine makes it slower, not failed.

The same stack answers an exact rate limit: 1,100 concurrent requests against a key with 999
requests left in its window, exactly 999 pass.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter

import httpx
import pytest

from devstack import soak
from devstack.bootstrap import bootstrap
from devstack.stack import LocalStack

pytestmark = pytest.mark.long_running   # minutes long: its test process starts with it (tests/conftest.py)

# 1,000 calls a soak: three soaks of 2,000 took a third of the suite's time on two cores; the bench
# runs them 20 times longer (`python -m bench --only soak`).
CALLS = int(os.environ.get("SOAK_CALLS", "1000"))
# The soaks with a datastore paused in the middle: half as long, the pause still in the middle of a
# mixed session (what they test is what the pause does, and what it leaves behind once it ends).
FAULT_CALLS = int(os.environ.get("SOAK_FAULT_CALLS", "500"))
SEED = int(os.environ.get("SOAK_SEED", "20261124"))
SOAK = pytest.mark.timeout(0)   # bounded by its calls and its progress, not by the clock


@pytest.fixture(scope="module")
def soak_stack(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        stack = LocalStack(port=0, log=lambda _m: None, containers=4, parameters={"LogLevel": "ERROR"})
        started = time.monotonic()
        stack.start()
        print(f"local stack started in {time.monotonic() - started:.1f} s")
        # One window for the whole module, so the exact-limit test never straddles two windows.
        patch.setenv("RATE_LIMIT_WINDOW_SECONDS", "3600")
        stack._forget_caches()
        stack.credentials = bootstrap(stack.base_url, tmp_path_factory.mktemp("soak") / "credentials.json")
        yield stack
        stack.stop()
        stack._forget_caches()


def _check(report: soak.Report, calls: int = CALLS) -> None:
    print(report.summary())
    assert report.problems() == []
    assert report.calls >= calls
    # Never a 500 (nor a crash the gateway answers 502): a datastore out of reach is 503, the gateway's wait 504.
    assert report.statuses[500] == report.retry_statuses[500] == 0
    assert report.statuses[502] == report.retry_statuses[502] == 0
    # The mix was played: successes, and each kind of deliberate failure.
    for status in (200, 201, 400, 404, 409):
        assert report.statuses[status] > 0, report.statuses
    assert report.committed > calls // 5
    assert report.delivered == report.expected_deliveries > 0
    assert report.published - report.published_twice == report.committed


@SOAK
def test_a_long_mixed_session_loses_nothing_and_invents_nothing(soak_stack):
    report = soak.run(soak_stack, calls=CALLS, seed=SEED)
    status = httpx.get(soak_stack.base_url + "/_local/status").json()
    outbox = next(p for p in status["pollers"] if p["source"] == "stream OutboxTable")
    print(f"outbox publisher: {outbox['invokedRecords']} records in {outbox['invocations']} batches, "
          f"{outbox['invokedSeconds']:.1f} s in the function "
          f"({outbox['invokedSeconds'] / max(outbox['invokedRecords'], 1) * 1000:.0f} ms a record)")
    _check(report)
    assert status["engine"] == "dynamodb-local"
    # Each record once (an event published twice by a retried call is one record).
    assert outbox["processed"] >= report.published - report.published_twice
    assert outbox["oldestUnprocessedAgeSeconds"] is None
    assert outbox["sentToFailureDestination"] == 0 and outbox["discarded"] == 0


def test_the_rate_limit_is_exact_under_concurrency(soak_stack):
    base = soak_stack.base_url + "/api/v1"
    owner = {"Authorization": f"Bearer {soak_stack.credentials['apiKey']}"}
    made = httpx.post(f"{base}/api-keys", headers=owner, json={
        "name": "exact", "type": "sdk", "environment": "Development", "scopes": ["projects:read"]})
    assert made.status_code == 201
    auth = {"Authorization": f"Bearer {made.json()['data']['key']}"}
    first = httpx.get(f"{base}/projects", headers=auth)
    limit = int(first.headers["X-RateLimit-Limit"])
    left = int(first.headers["X-RateLimit-Remaining"])
    assert left == limit - 1 == 999
    statuses: Counter = Counter()
    lock = threading.Lock()
    todo = iter(range(1100))

    def client() -> None:
        with httpx.Client(timeout=60) as http:
            for _ in iter(lambda: next(todo, None), None):
                status = http.get(f"{base}/projects", headers=auth, params={"limit": 1}).status_code
                with lock:
                    statuses[status] += 1

    threads = [threading.Thread(target=client) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == {200: left, 429: 1100 - left}
