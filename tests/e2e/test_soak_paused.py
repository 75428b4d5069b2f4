"""The conservation soak with both datastores (DynamoDB Local and the emulator) paused for 5 s
(SIGSTOP, SIGCONT) in the middle: what was answered during the pause is a success, an expected
refusal or a 5xx in the envelope, and afterwards nothing is lost. Its own file (and stack), so it
runs beside test_soak.py in another test process."""

from __future__ import annotations

import time

import pytest

from devstack import soak
from devstack.stack import LocalStack
from tests.e2e.test_soak import FAULT_CALLS, SEED, SOAK, _check

pytestmark = pytest.mark.long_running   # minutes long: its test process starts with it (tests/conftest.py)


@pytest.fixture(scope="module")
def soak_stack():
    stack = LocalStack(port=0, log=lambda _m: None, containers=4, parameters={"LogLevel": "ERROR"})
    started = time.monotonic()
    stack.start()
    print(f"local stack started in {time.monotonic() - started:.1f} s")
    yield stack
    stack.stop()


@SOAK
def test_the_session_survives_both_datastores_paused_for_five_seconds(soak_stack):
    report = soak.run(soak_stack, calls=FAULT_CALLS, seed=SEED + 1, pause_seconds=5)
    _check(report, FAULT_CALLS)
    assert report.paused_seconds == 5 and report.calls_during_pause > 0
    # Answered during the pause: a success, an expected refusal, or a 5xx in the envelope (checked
    # in problems()); never a 5xx for a change that did commit.
    assert report.wrong_5xx == 0
