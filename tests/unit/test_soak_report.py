"""The soak's report as `python -m devstack.soak --json` prints it and the bench reads it."""

from __future__ import annotations

import json
import subprocess
from collections import Counter

import pytest

from bench.soak import _report
from devstack.soak import Report


def test_the_report_is_one_json_object_with_its_status_counts_and_problems():
    report = Report(calls=7, seconds=1.5, statuses=Counter({201: 2, 200: 4, 503: 1}), lost=2, paused_seconds=5,
                    statuses_during_pause=Counter({503: 1}), notes=["the bus kept 1 event unread"])
    read = json.loads(report.to_json())
    assert read["statuses"] == {"200": 4, "201": 2, "503": 1}
    assert read["statuses_during_pause"] == {"503": 1}
    assert read["calls"] == 7 and read["lost"] == 2 and read["paused_seconds"] == 5
    assert read["problems"] == ["lost = 2", "the bus kept 1 event unread"]


def test_the_bench_reads_the_last_line_and_not_a_function_s_log_line():
    report = Report(calls=3, statuses=Counter({200: 3}))
    log_line = json.dumps({"level": "ERROR", "message": "a function's log line"})
    done = subprocess.CompletedProcess([], 0, stdout=f"{log_line}\n{report.to_json()}\n", stderr="")
    assert _report(done)["calls"] == 3
    failed = subprocess.CompletedProcess([], 1, stdout=f"{log_line}\n", stderr="Traceback ...")
    with pytest.raises(RuntimeError, match="exit status 1"):
        _report(failed)


class _Pipeline:
    """A stand-in for the session: a receiver's count and one queue poller's status, scripted over time."""

    def __init__(self, script) -> None:
        self.script, self.started = script, None
        self.receiver, self.stack = self, self
        self.pollers = [self]

    def _now(self) -> dict:
        import time
        self.started = self.started or time.monotonic()
        return self.script(time.monotonic() - self.started)

    def count(self) -> int:
        return self._now()["delivered"]

    def status(self) -> dict:
        state = self._now()
        return {"processed": state["processed"], "sentToFailureDestination": 0, "discarded": 0,
                "messagesWaiting": state["waiting"], "oldestUnprocessedAgeSeconds": None}


def test_the_soak_settles_by_progress_and_waits_for_what_is_in_flight(monkeypatch):
    import time

    from devstack import soak
    monkeypatch.setattr(soak, "IN_FLIGHT_PATIENCE", 5.0)
    # A message hidden (in flight, nothing moving) for 1.5 s, longer than the stall bound of 0.5 s,
    # then delivered: waited for, not given up on.
    late = _Pipeline(lambda t: {"delivered": 3 if t > 1.5 else 2, "processed": 3 if t > 1.5 else 2,
                                "waiting": 0 if t > 1.5 else 1})
    started = time.monotonic()
    assert soak._settle(late, 3, stall_seconds=0.5) is None
    assert 1.5 < time.monotonic() - started < 4
    # Nothing in flight and nothing moving: given up after the stall bound, not after a fixed time.
    gone = _Pipeline(lambda t: {"delivered": 2, "processed": 2, "waiting": 0})
    started = time.monotonic()
    assert soak._settle(gone, 3, stall_seconds=0.5) is None
    assert time.monotonic() - started < 2
    # In flight but stuck past IN_FLIGHT_PATIENCE: given up, and said so.
    stuck = _Pipeline(lambda t: {"delivered": 2, "processed": 2, "waiting": 1})
    monkeypatch.setattr(soak, "IN_FLIGHT_PATIENCE", 0.5)
    assert soak._settle(stuck, 3, stall_seconds=0.1) == "1 records or messages still in flight"


def test_the_summary_says_where_the_time_went():
    report = Report(calls=10, seconds=20.0, set_up_seconds=3.0, read_back_seconds=4.0, settle_seconds=9.5,
                    count_seconds=0.5)
    assert "seconds: set-up 3.0, calls 20.0, final state read back 4.0, settling 9.5, counting 0.5" in report.summary()
    assert "settled 9.5 s after the final state was read back, 13.5 s after the last call" in report.summary()
    assert json.loads(report.to_json())["read_back_seconds"] == 4.0


def test_settling_asks_the_pollers_at_most_once_a_second_while_deliveries_are_missing():
    from types import SimpleNamespace

    from devstack import soak

    reads = {"deliveries": 0, "pollers": 0}

    def delivered() -> int:  # one more delivery every second read (every 0.5 s)
        reads["deliveries"] += 1
        return reads["deliveries"] // 2

    def status() -> dict:
        reads["pollers"] += 1
        return {"processed": reads["deliveries"], "sentToFailureDestination": 0, "discarded": 0,
                "messagesWaiting": 0, "oldestUnprocessedAgeSeconds": None}

    session = SimpleNamespace(receiver=SimpleNamespace(count=delivered),
                              stack=SimpleNamespace(pollers=[SimpleNamespace(status=status)]))
    assert soak._settle(session, expected=8, stall_seconds=30) is None
    assert reads["deliveries"] >= 16
    # Every read of the deliveries asked the pollers too before (16 or more); now about one in four.
    assert reads["pollers"] <= reads["deliveries"] // 2, reads
