"""The local gateway stops waiting for a function after API Gateway's integration timeout and answers
as the deployed API does: 504 with template.yaml's INTEGRATION_TIMEOUT gateway response (the error
envelope, its X-Request-Id), while the function goes on; a function that answers in time is served."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import httpx

from devstack.gateway import Gateway, Router
from devstack.template import load


class _Slow:
    """A function that answers after `seconds` (or when released)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.release = threading.Event()
        self.finished = threading.Event()

    def invoke(self, event):
        self.release.wait(self.seconds)
        self.finished.set()
        return {"statusCode": 200, "headers": {"Content-Type": "application/json"}, "body": '{"data": {}}'}


def _gateway(function, timeout: float | None = None) -> Gateway:
    gateway = Gateway(Router([("GET", "/api/v1/slow", "Slow")]), {"Slow": function}, port=0, log=lambda _m: None)
    if timeout is not None:
        gateway.integration_timeout = timeout
    return gateway.start()


def test_a_function_that_outlasts_the_integration_timeout_gets_the_gateway_s_504():
    slow = _Slow(30)
    gateway = _gateway(slow, 0.5)
    try:
        answer = httpx.get(f"http://127.0.0.1:{gateway.port}/api/v1/slow", timeout=10)
        assert not slow.finished.is_set()   # answered while the function still runs
    finally:
        slow.release.set()
        gateway.stop()
    template = load()["Resources"]["Api"]["Properties"]["GatewayResponses"]["INTEGRATION_TIMEOUT"]
    assert answer.status_code == int(template["StatusCode"]) == 504
    body = answer.json()
    assert body["error"] == {"code": "INTERNAL_ERROR", "message": "The server failed to handle the request.",
                             "details": {}}
    assert body["meta"]["request_id"] == answer.headers["X-Request-Id"]
    datetime.strptime(body["meta"]["timestamp"], "%d/%b/%Y:%H:%M:%S %z")   # API Gateway's requestTime
    assert set(json.loads(template["ResponseTemplates"]["application/json"].replace("$context.", ""))) == set(body)
    # The template's static headers (quoted there) as the security headers of every answer.
    from svc_core.http import security_headers
    for name, value in security_headers.EVERY_ANSWER.items():
        assert answer.headers[name] == value, name


def test_a_function_that_answers_in_time_is_served_and_the_default_is_api_gateway_s():
    gateway = _gateway(_Slow(0.2))
    try:
        assert gateway.integration_timeout == 29
        answer = httpx.get(f"http://127.0.0.1:{gateway.port}/api/v1/slow", timeout=10)
    finally:
        gateway.stop()
    assert answer.status_code == 200 and answer.json() == {"data": {}}


class _Answering:
    """A function with a Timeout of its own, answering `body` after `seconds` (or when released)."""

    def __init__(self, timeout: float, seconds: float = 0, body: str = '{"data": {}}') -> None:
        self.timeout, self.seconds, self.body = timeout, seconds, body
        self.release = threading.Event()
        self.calls = 0

    def invoke(self, event, began=None):
        self.calls += 1
        if began is not None:
            began(time.monotonic())
        self.release.wait(self.seconds)
        return {"statusCode": 200, "headers": {"Content-Type": "application/json"}, "body": self.body}


class _OneContainer(_Answering):
    """Its one container serves one invocation at a time; another waits for it, as the local stack's
    functions wait for a free one (devstack/runtime.py), and begins once it holds it."""

    def __init__(self, timeout: float, seconds: float) -> None:
        super().__init__(timeout, seconds)
        self.container = threading.Lock()

    def invoke(self, event, began=None):
        with self.container:
            if began is not None:
                began(time.monotonic())
            time.sleep(self.seconds)
            return {"statusCode": 200, "headers": {"Content-Type": "application/json"}, "body": self.body}


def test_a_function_still_running_at_its_own_timeout_is_a_function_error_answered_502():
    function = _Answering(timeout=0.5, seconds=30)   # Lambda ends it at 0.5 s, long before API Gateway's 29 s
    gateway = _gateway(function)
    try:
        answer = httpx.get(f"http://127.0.0.1:{gateway.port}/api/v1/slow", timeout=10)
    finally:
        function.release.set()
        gateway.stop()
    assert answer.status_code == 502
    assert answer.json()["error"]["code"] == "INTERNAL_ERROR"
    assert answer.json()["meta"]["request_id"] == answer.headers["X-Request-Id"]


def test_the_timeout_counts_from_when_a_container_holds_the_invocation_not_while_it_waits_for_one():
    """Lambda runs another container rather than make a request wait: a wait for the local stack's
    busy containers is the gateway's time (its 29 s), never the function's Timeout."""
    function = _OneContainer(timeout=1.0, seconds=0.7)   # two at once: the second begins at 0.7 s, ends at 1.4 s
    gateway = _gateway(function)
    try:
        url = f"http://127.0.0.1:{gateway.port}/api/v1/slow"
        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(lambda _: httpx.get(url, timeout=10), range(2)))
    finally:
        gateway.stop()
    assert [a.status_code for a in answers] == [200, 200]


def test_a_function_whose_timeout_outlasts_29_s_is_answered_504_by_the_gateway_first():
    function = _Answering(timeout=900, seconds=30)
    gateway = _gateway(function, 0.5)
    try:
        answer = httpx.get(f"http://127.0.0.1:{gateway.port}/api/v1/slow", timeout=10)
    finally:
        function.release.set()
        gateway.stop()
    assert answer.status_code == 504


def test_an_answer_over_lambda_s_6_mb_is_a_function_error_answered_502_and_one_within_it_is_served():
    from devstack.gateway import LAMBDA_RESPONSE_BYTES
    overhead = len(json.dumps({"statusCode": 200, "headers": {"Content-Type": "application/json"}, "body": ""},
                              separators=(",", ":")))
    fits = _Answering(timeout=3, body="x" * (LAMBDA_RESPONSE_BYTES - overhead))
    over = _Answering(timeout=3, body="x" * (LAMBDA_RESPONSE_BYTES - overhead + 1))
    answers = []
    for function in (fits, over):
        gateway = _gateway(function)
        try:
            answers.append(httpx.get(f"http://127.0.0.1:{gateway.port}/api/v1/slow", timeout=30))
        finally:
            gateway.stop()
    assert answers[0].status_code == 200 and len(answers[0].content) == LAMBDA_RESPONSE_BYTES - overhead
    assert answers[1].status_code == 502 and answers[1].json()["error"]["code"] == "INTERNAL_ERROR"


def test_a_body_over_10_mb_gets_the_template_s_request_too_large_and_never_reaches_the_function():
    from devstack.gateway import REQUEST_PAYLOAD_BYTES
    function = _Answering(timeout=3)
    gateway = Gateway(Router([("POST", "/api/v1/slow", "Slow")]), {"Slow": function}, port=0, log=lambda _m: None)
    gateway.start()
    try:
        url = f"http://127.0.0.1:{gateway.port}/api/v1/slow"
        at_limit = httpx.post(url, content=b"x" * REQUEST_PAYLOAD_BYTES, timeout=60)
        over = httpx.post(url, content=b"x" * (REQUEST_PAYLOAD_BYTES + 1), timeout=60)
    finally:
        gateway.stop()
    assert at_limit.status_code == 200 and function.calls == 1
    template = load()["Resources"]["Api"]["Properties"]["GatewayResponses"]["REQUEST_TOO_LARGE"]
    assert over.status_code == int(template["StatusCode"]) == 413
    assert over.json()["error"] == {"code": "PAYLOAD_TOO_LARGE", "message": "The request body is too large.",
                                    "details": {}}
    assert over.json()["meta"]["request_id"] == over.headers["X-Request-Id"]
    from svc_core.http import security_headers
    for name, value in security_headers.EVERY_ANSWER.items():
        assert over.headers[name] == value, name
    assert function.calls == 1   # the function never saw it
