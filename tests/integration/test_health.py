"""GET /api/v1/health: no credential, no AWS call, not counted, in the envelope."""

from __future__ import annotations

import pytest

from svc_core.adapters import aws
from tests.support.auth_helpers import RATE_HEADERS, invoke
from tests.support.functions import api_event


@pytest.fixture
def no_aws():
    """Every AWS client the layer would make fails (none is cached): the services a request asked for."""
    asked: list[str] = []

    def refuse(service, *args, **kwargs):
        asked.append(service)
        raise AssertionError(f"the health answer made a {service} client")

    aws.reset_clients()
    with pytest.MonkeyPatch.context() as patch:  # undone before the stack fixture resets the clients
        patch.setattr(aws, "client", refuse)
        yield asked


def test_health_answers_without_a_credential_and_without_aws(stack, no_aws):
    event = api_event("Meta-Health")
    reply = invoke("meta", event)
    assert reply.status == 200, reply
    assert reply.json["data"] == {"status": "ok", "service": "svc-api", "stage": "dev", "version": "$LATEST",
                                  "local": None}
    assert reply.json["meta"]["request_id"] == event["requestContext"]["requestId"]
    assert reply.headers["x-request-id"] == event["requestContext"]["requestId"]
    assert not any(name in reply.headers for name in RATE_HEADERS)  # not counted against anything
    assert no_aws == []


def test_health_ignores_a_credential_and_is_never_rate_limited(stack, no_aws, monkeypatch):
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_VERSION", "7")
    for token in (None, "svc_sdk_madeup", "eyJhbGciOiJub25lIn0.e30."):
        for _ in range(5):  # a bad credential elsewhere is counted per address; here nothing is read
            reply = invoke("meta", api_event("Meta-Health", token=token, source_ip="198.51.100.7"))
            assert reply.status == 200 and reply.json["data"]["version"] == "7", reply
    assert no_aws == []


def test_another_method_on_health_is_405_without_a_credential(stack):
    reply = invoke("meta", api_event("Meta-Health", method="POST"))
    assert reply.status == 405 and reply.error["code"] == "METHOD_NOT_ALLOWED", reply
    assert reply.headers["allow"] == "GET"
