"""The local gateway stops waiting for a function after API Gateway's integration timeout and answers
as the deployed API does: 504 with template.yaml's INTEGRATION_TIMEOUT gateway response (the error
envelope, its X-Request-Id), while the function goes on; a function that answers in time is served."""

from __future__ import annotations

import json
import threading
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
