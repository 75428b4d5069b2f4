"""The conservation soak with both datastores (DynamoDB Local and the emulator) paused for 15 s
(SIGSTOP, SIGCONT) in the middle: longer than a request's calls wait (3 attempts of 1 s connect and
2 s read, svc_core/adapters/aws.py), so requests caught in it answer 503 SERVICE_UNAVAILABLE with
Retry-After, never 500; a create answered 503 is sent again with its Idempotency-Key and is made
exactly once (recognised when its first attempt had committed); every change that committed is
delivered once. Its own file (and stack), so it runs beside the other soaks in another test process."""

from __future__ import annotations

import pytest

from devstack import soak
from tests.e2e.test_soak import FAULT_CALLS, SEED, SOAK, _check
from tests.e2e.test_soak_paused import soak_stack  # noqa: F401 - a stack of this module's own

pytestmark = pytest.mark.long_running   # minutes long: its test process starts with it (tests/conftest.py)

PAUSE_SECONDS = 15


@SOAK
def test_the_session_survives_both_datastores_paused_longer_than_a_request_waits(soak_stack):  # noqa: F811
    report = soak.run(soak_stack, calls=FAULT_CALLS, seed=SEED + 2, pause_seconds=PAUSE_SECONDS)
    _check(report, FAULT_CALLS)   # lost, phantom, duplicated, redelivered 0; no 500, no 502
    assert report.paused_seconds == PAUSE_SECONDS and report.calls_during_pause > 0
    assert report.statuses[503] > 0   # requests caught in the pause said so
    # Creates caught in it (most runs have some: which calls the pause catches is chance) were sent
    # again with their key until answered; tests/integration/test_create_idempotency.py shows each case.
    assert report.retries_unsettled == 0
    # A change answered 503 may still commit (the datastore ran it after the pause): never a wrong 5xx,
    # and a create's retry with its key was answered from the key's record when it had.
    assert report.wrong_5xx == 0
