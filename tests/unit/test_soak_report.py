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
