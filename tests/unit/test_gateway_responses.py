"""API Gateway's own answers (template.yaml's GatewayResponses) are the API's error envelope.

A GatewayResponse template is plain `$context.xxx` substitution (no VTL), so rendering one is a
substitution of sample context values; the result must parse as the error envelope with a code of
the API's list, the status that code carries, and X-Request-Id. Each carries the security headers of
every answer too.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest

from devstack.template import load
from svc_core.http.openapi_doc import ErrorEnvelope
from svc_core.platform.errors import ALL_ERRORS

MOMENT = datetime(2026, 11, 24, 22, 28, 49, tzinfo=UTC)
CONTEXT = {
    "requestId": "c6b1f9d2-3c1e-4f7a-9a55-0e8d2b1f4a10",
    "requestTime": MOMENT.strftime("%d/%b/%Y:%H:%M:%S +0000"),  # API Gateway's CLF layout
    "requestTimeEpoch": str(int(MOMENT.timestamp() * 1000)),
    "path": "/v1/no/such/route",
    # Already a quoted JSON string, as API Gateway gives it; a quote inside stays escaped.
    "error.messageString": json.dumps('Invalid request body: "name"'),
    "error.message": 'Invalid request body: "name"',
    "error.responseType": "BAD_REQUEST_BODY",
}
CODES = {error.code: error.status for error in ALL_ERRORS} | {"INTERNAL_ERROR": 500}
# The stage answers 504 when a function fails or outlasts 29 s; the code is still INTERNAL_ERROR.
GATEWAY_STATUSES = {"INTERNAL_ERROR": {500, 504}}
EXPECTED_CODES = {
    "MISSING_AUTHENTICATION_TOKEN": "RESOURCE_NOT_FOUND", "RESOURCE_NOT_FOUND": "RESOURCE_NOT_FOUND",
    "THROTTLED": "RATE_LIMIT_EXCEEDED", "QUOTA_EXCEEDED": "RATE_LIMIT_EXCEEDED",
    "REQUEST_TOO_LARGE": "PAYLOAD_TOO_LARGE", "UNAUTHORIZED": "UNAUTHORIZED",
    "BAD_REQUEST_BODY": "VALIDATION_ERROR", "BAD_REQUEST_PARAMETERS": "VALIDATION_ERROR",
    "ACCESS_DENIED": "FORBIDDEN", "DEFAULT_4XX": "VALIDATION_ERROR",
    "DEFAULT_5XX": "INTERNAL_ERROR", "INTEGRATION_FAILURE": "INTERNAL_ERROR", "INTEGRATION_TIMEOUT": "INTERNAL_ERROR",
}


def gateway_responses() -> dict[str, dict]:
    return load()["Resources"]["Api"]["Properties"]["GatewayResponses"]


def render(template: str) -> str:
    def substitute(match: re.Match) -> str:
        name = match.group(1)
        assert name in CONTEXT, f"the sample context lacks $context.{name}"
        return CONTEXT[name]
    return re.sub(r"\$context\.([A-Za-z.]+[A-Za-z])", substitute, template)


def gateway_timestamp(value: str) -> datetime:
    """meta.timestamp of a gateway answer: ISO 8601, or API Gateway's requestTime (the only date a
    GatewayResponse template can render; see docs/conventions.md, "Errors API Gateway answers itself")."""
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return datetime.strptime(value, "%d/%b/%Y:%H:%M:%S %z")


def test_every_gateway_response_type_the_brief_names_is_configured_with_its_code():
    responses = gateway_responses()
    for response_type, code in EXPECTED_CODES.items():
        assert response_type in responses, response_type
        body = json.loads(render(responses[response_type]["ResponseTemplates"]["application/json"]))
        assert body["error"]["code"] == code, response_type


@pytest.mark.parametrize("response_type", sorted(gateway_responses()))
def test_a_gateway_response_renders_as_the_error_envelope(response_type):
    response = gateway_responses()[response_type]
    assert set(response["ResponseTemplates"]) == {"application/json"}
    body = json.loads(render(response["ResponseTemplates"]["application/json"]))
    envelope = ErrorEnvelope.model_validate(body)

    assert set(body) == {"error", "meta"} and set(body["error"]) == {"code", "message", "details"}
    assert envelope.error.code in CODES, f"{response_type}: {envelope.error.code} is not one of the API's codes"
    assert envelope.error.message and isinstance(body["error"]["details"], dict)
    if "StatusCode" in response:  # DEFAULT_4XX / DEFAULT_5XX keep the status API Gateway chose
        assert int(response["StatusCode"]) in GATEWAY_STATUSES.get(envelope.error.code, {CODES[envelope.error.code]})
    assert envelope.meta.request_id == CONTEXT["requestId"]
    stamp = gateway_timestamp(envelope.meta.timestamp)
    assert stamp == MOMENT and stamp.utcoffset().total_seconds() == 0
    assert response["ResponseParameters"]["Headers"]["X-Request-Id"] == "context.requestId"


# What every answer carries (docs/security.md); written out here, not read from the code that sends them.
SECURITY_HEADERS = {
    "Strict-Transport-Security": "max-age=63072000; includeSubDomains",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
}


def static_headers(response: dict) -> dict[str, str]:
    """The headers a gateway response sends as literals: API Gateway drops a value's outer quotes."""
    headers = response["ResponseParameters"]["Headers"]
    return {name: value[1:-1] for name, value in headers.items()
            if len(value) >= 2 and value.startswith("'") and value.endswith("'")}


@pytest.mark.parametrize("response_type", sorted(gateway_responses()))
def test_a_gateway_response_carries_the_security_headers(response_type):
    assert static_headers(gateway_responses()[response_type]) == SECURITY_HEADERS


def test_the_functions_and_the_local_gateway_send_the_same_security_headers():
    from svc_core.http.security_headers import EVERY_ANSWER
    assert EVERY_ANSWER == SECURITY_HEADERS


def test_a_message_with_quotes_stays_valid_json():
    template = gateway_responses()["BAD_REQUEST_BODY"]["ResponseTemplates"]["application/json"]
    assert json.loads(render(template))["error"]["message"] == 'Invalid request body: "name"'
