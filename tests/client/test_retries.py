"""429 and 503 retried after Retry-After (seconds or an HTTP date), within the retry count and the
per-call time (RetryPolicy.max_retry_time), over real HTTP on loopback; a 503 that does not say the
request was refused before anything was done is not sent again for a request that may not be sent
twice. The servers are tests/support/cell_servers.py; each test counts the requests they were sent."""

from __future__ import annotations

import email.utils
import time

import pytest

from svc_client import Client, RetryPolicy, ServiceUnavailable
from tests.support.cell_servers import Seen, cell, data, error

PAGE = {"items": [], "nextCursor": None}
PROJECT = {"id": "proj_1", "name": "Apollo", "description": None, "language": "python",
           "created_at": "2026-11-21T21:00:00.000Z", "updated_at": "2026-11-21T21:00:00.000Z"}


def counting(answers: list):
    """Answers in order, the last one forever."""
    def answer(_seen: Seen):
        return answers.pop(0) if len(answers) > 1 else answers[0]
    return answer


MOVING = error("SERVICE_UNAVAILABLE", 503, {"reason": "tenant_moving", "retryAfterSeconds": 1}, {"Retry-After": "1"})
STALLED = error("SERVICE_UNAVAILABLE", 503, {"retryAfterSeconds": 1}, {"Retry-After": "1"})


def test_a_503_with_retry_after_1_twice_then_200_succeeds_in_3_requests():
    with cell(counting([MOVING, MOVING, data(PROJECT, 201)])) as server:
        started = time.monotonic()
        with Client(server.url, api_key="k") as svc:
            assert svc.projects.create("Apollo").id == "proj_1"   # a write refused while the tenant moves
        assert len(server.seen) == 3
        assert time.monotonic() - started >= 2.0                 # waited as told (a lower bound: never early)
        assert [s.body for s in server.seen] == [{"name": "Apollo"}] * 3


def test_a_503_of_a_stalled_datastore_is_retried_for_a_get_not_for_a_post_without_a_key():
    """A stalled datastore's 503 does not say the write was not made: a POST without an
    Idempotency-Key is not sent twice; a GET, or a billing POST with its key, is."""
    with cell(counting([STALLED, data(PAGE)])) as server, Client(server.url, api_key="k") as svc:
        svc.projects.list()
        assert len(server.seen) == 2
    with cell(counting([STALLED, data(PROJECT, 201)])) as server, Client(server.url, api_key="k") as svc:
        with pytest.raises(ServiceUnavailable) as raised:
            svc.projects.create("Apollo")
        assert len(server.seen) == 1 and raised.value.retry_after == 1.0
    purchase = {"id": "pur_1", "status": "succeeded", "credits": 10, "microCredits": 10, "amount": 1,
                "currency": "usd", "checkoutUrl": None, "invoiceId": None, "provider": "test", "testMode": True,
                "created_at": "t", "settled_at": "t"}
    with cell(counting([STALLED, data(purchase, 201)])) as server, Client(server.url, api_key="k") as svc:
        svc.billing.purchase_credits(credits=10)
        assert len(server.seen) == 2
        assert server.seen[0].headers["idempotency-key"] == server.seen[1].headers["idempotency-key"]


def test_a_retry_after_given_as_an_http_date_is_waited_for():
    def answer(_seen: Seen):
        if len(server.seen) == 1:
            return error("RATE_LIMIT_EXCEEDED", 429, headers={
                "Retry-After": email.utils.formatdate(time.time() + 1, usegmt=True)})
        return data(PAGE)
    with cell(answer) as server, Client(server.url, api_key="k") as svc:
        svc.projects.list()
        assert len(server.seen) == 2


def test_a_503_forever_ends_once_the_calls_retry_time_is_spent():
    """max_retry_time 2.5 s and Retry-After 1: attempts at 0, 1 and 2 s; a third wait would end at
    3 s, past the bound, so the 503 is raised at once (max_retries, 100, is not what stops it)."""
    with cell(lambda _: MOVING) as server:
        started = time.monotonic()
        with Client(server.url, api_key="k", retry=RetryPolicy(max_retries=100, max_retry_time=2.5)) as svc, \
                pytest.raises(ServiceUnavailable) as raised:
            svc.projects.update("proj_1", name="x")
        elapsed = time.monotonic() - started
        assert len(server.seen) == 3 and raised.value.details["reason"] == "tenant_moving"
        assert 2.0 <= elapsed < 30


def test_the_default_retry_time_is_30_seconds():
    assert RetryPolicy().max_retry_time == 30.0
