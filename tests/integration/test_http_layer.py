"""The HTTP layer every function shares: the envelope and its meta, unknown routes, wrong
methods, bad input, body size and type, unexpected failures, and what reaches the logs."""

from __future__ import annotations

import base64
import json
import re
import sys

import pytest

from svc_core.auth import tokens
from svc_core.domain import projects as projects_domain
from svc_core.platform.log import logger
from tests.support import bodies
from tests.support.auth_helpers import ISO_UTC_RE, RATE_HEADERS, invoke, unknown_route_event
from tests.support.functions import Reply, api_event, call

MISSING_PROJECT = "proj_01J00000000000000000000000"


def send(function: str, event_name: str, **kwargs) -> tuple[str, Reply]:
    event = api_event(event_name, **kwargs)
    return event["requestContext"]["requestId"], invoke(function, event)


def test_every_response_has_the_request_id_and_an_iso_utc_timestamp(stack):
    _, key = stack.tenant_with_key()
    _, narrow = stack.tenant_with_key(["keys:read"])
    cases = [
        ("projects", "Projects-ListProjects", {"token": key}, 200),
        ("projects", "Projects-CreateProject", {"token": key, "body": {"name": "A"}}, 201),
        ("projects", "Projects-CreateProject", {"token": key, "raw_body": "{oops"}, 400),
        ("projects", "Projects-ListProjects", {}, 401),
        ("projects", "Projects-ListProjects", {"token": narrow}, 403),
        ("projects", "Projects-GetProject", {"token": key, "path_params": {"id": MISSING_PROJECT}}, 404),
        ("projects", "Projects-GetProject", {"token": key, "path_params": {"id": "p"}, "method": "PUT"}, 405),
        ("api_keys", "ApiKeys-CreateKey", {"token": key, "raw_body": "{" * 300_000}, 413),
        ("api_keys", "ApiKeys-CreateKey", {"token": key, "raw_body": "x", "headers": {"Content-Type": "text/csv"}}, 415),
    ]
    for function, name, kwargs, status in cases:
        request_id, reply = send(function, name, **kwargs)
        assert reply.status == status, (name, reply)
        assert reply.json["meta"]["request_id"] == request_id
        assert reply.headers["x-request-id"] == request_id
        assert ISO_UTC_RE.match(reply.json["meta"]["timestamp"]), reply.json["meta"]
        assert ("data" in reply.json) == (status < 400) and ("error" in reply.json) == (status >= 400)
        if status >= 400:
            assert set(reply.error) == {"code", "message", "details"} and isinstance(reply.error["details"], dict)
        assert reply.headers["content-type"].startswith("application/json")
    request_id, jwks = send("meta", "Meta-Jwks")
    assert jwks.headers["x-request-id"] == request_id


def test_an_unknown_route_is_404_in_the_envelope_with_a_key_and_401_without(stack):
    _, key = stack.tenant_with_key()
    for path, method in [("/api/v1/nope", "GET"), ("/api/v1/nope", "POST"), ("/api/v1/projects/a/b/c", "DELETE"),
                         ("/api/v1/api-keys/key_x/rotate/again", "PATCH")]:
        event = unknown_route_event(token=key, path=path, method=method)
        reply = invoke("meta", event)
        assert reply.status == 404, (path, reply)
        assert reply.error["code"] == "RESOURCE_NOT_FOUND" and reply.error["details"]["path"] == path
        assert reply.json["meta"]["request_id"] == event["requestContext"]["requestId"]
        for name in RATE_HEADERS:
            assert name in reply.headers
    for token in (None, "svc_sdk_madeup", "eyJhbGciOiJub25lIn0.e30."):
        reply = invoke("meta", unknown_route_event(token=token))
        assert reply.status == 401 and reply.error["code"] == "UNAUTHORIZED", reply


@pytest.mark.parametrize("function, event_name, path_params, method, allowed", [
    ("projects", "Projects-GetProject", {"id": MISSING_PROJECT}, "PUT", "DELETE, GET, PATCH"),
    ("projects", "Projects-ListProjects", None, "DELETE", "GET, POST"),
    ("api_keys", "ApiKeys-GetKey", {"id": "key_x"}, "POST", "DELETE, GET"),
    ("api_keys", "ApiKeys-RotateKey", {"id": "key_x"}, "GET", "POST"),
    ("api_keys", "ApiKeys-ListKeys", None, "PUT", "GET, POST"),
    # A literal path is its own resource, as API Gateway matches it: DELETE /members/leave is not
    # DELETE /members/{userId} with "leave" for the id.
    ("members", "Members-LeaveTenant", None, "DELETE", "POST"),
    ("members", "Members-LeaveTenant", None, "OPTIONS", "POST"),
])
def test_a_wrong_method_is_405_with_allow(stack, function, event_name, path_params, method, allowed):
    _, key = stack.tenant_with_key()
    reply = call(function, event_name, token=key, path_params=path_params, method=method)
    assert reply.status == 405 and reply.error["code"] == "METHOD_NOT_ALLOWED", reply
    assert reply.headers["allow"] == allowed
    assert reply.error["details"]["allowed"] == allowed.split(", ")


@pytest.mark.parametrize("raw_body", ["{oops", '{"name": "A",}', "{'name': 'A'}", '{"name": "A"', "nul"])
def test_malformed_json_is_400_naming_the_body(stack, raw_body):
    _, key = stack.tenant_with_key()
    reply = call("projects", "Projects-CreateProject", token=key, raw_body=raw_body)
    assert reply.status == 400 and reply.error["code"] == "VALIDATION_ERROR", reply
    assert [f["field"] for f in reply.error["details"]["fields"]] == ["body"]
    assert call("projects", "Projects-ListProjects", token=key).data["items"] == []
    # Where the body is optional, JSON null is no body (as the schema allows), not a bad one.
    logout = call("auth", "Auth-Logout", raw_body="null")
    assert logout.status == 401 and logout.error["code"] == "UNAUTHORIZED", logout


def test_a_missing_or_non_object_body_is_400(stack):
    _, key = stack.tenant_with_key()
    for kwargs in ({}, {"raw_body": "[1, 2]"}, {"raw_body": '"a string"'}, {"raw_body": "null"}):
        reply = call("projects", "Projects-CreateProject", token=key, **kwargs)
        assert reply.status == 400 and reply.error["code"] == "VALIDATION_ERROR", (kwargs, reply)
        assert reply.error["details"]["fields"], reply
    assert call("projects", "Projects-ListProjects", token=key).data["items"] == []


def test_every_bad_field_is_named_at_once(stack):
    _, key = stack.tenant_with_key()
    reply = call("projects", "Projects-CreateProject", token=key,
                 body={"name": "", "description": "d" * 2001, "language": "<script>", "color": "red"})
    assert reply.status == 400, reply
    fields = {f["field"]: f for f in reply.error["details"]["fields"]}
    assert set(fields) == {"name", "description", "language", "color"}
    assert all(f["in"] == "body" and f["reason"] for f in fields.values())

    reply = call("api_keys", "ApiKeys-CreateKey", token=key,
                 body={"name": "", "type": "root", "environment": "prod", "scopes": ["x:y"], "expiresInDays": 0})
    assert reply.status == 400, reply
    named = [f["field"].split(".")[0] for f in reply.error["details"]["fields"]]  # scopes or scopes.0
    assert set(named) == {"name", "type", "environment", "scopes", "expiresInDays"}
    assert len(call("api_keys", "ApiKeys-ListKeys", token=key).data["items"]) == 1


@pytest.mark.parametrize("query", [{"limit": "0"}, {"limit": "101"}, {"limit": "ten"}, {"cursor": "c" * 513},
                                   {"cursor": "bm90LWEtY3Vyc29y"}])
def test_bad_query_parameters_are_400_naming_them(stack, query):
    _, key = stack.tenant_with_key()
    reply = call("projects", "Projects-ListProjects", token=key, query=query)
    assert reply.status == 400 and reply.error["code"] == "VALIDATION_ERROR", reply
    assert [(f["field"], f["in"]) for f in reply.error["details"]["fields"]] == [(list(query)[0], "query")]


def test_a_body_over_the_limit_is_413_and_stores_nothing(stack):
    _, key = stack.tenant_with_key()
    big = json.dumps({"name": "Big", "description": "x" * 300_000})
    for kwargs in ({"raw_body": big}, {"body": json.loads(big)}):  # plain and base64-encoded
        reply = call("projects", "Projects-CreateProject", token=key, **kwargs)
        assert reply.status == 413 and reply.error["code"] == "PAYLOAD_TOO_LARGE", reply
        assert reply.error["details"]["limitBytes"] == 256 * 1024
    assert call("projects", "Projects-ListProjects", token=key).data["items"] == []
    # the size is checked before the body's content: a body under the limit reaches validation
    under = call("projects", "Projects-CreateProject", token=key, body={"name": "Big", "description": "x" * 200_000})
    assert under.status == 400 and under.error["details"]["fields"][0]["field"] == "description"


def _create_project_with(key: str, body: str, base64_encoded: bool, **kwargs) -> Reply:
    event = api_event("Projects-CreateProject", token=key, raw_body=body, **kwargs)
    event["isBase64Encoded"] = base64_encoded
    return invoke("projects", event)


def _assert_refused(reply: Reply, status: int, code: str, reason: str, where: object, field: str = "body") -> None:
    assert reply.status == status, (where, reply)
    assert set(reply.json) == {"error", "meta"} and set(reply.error) == {"code", "message", "details"}, where
    assert reply.error["code"] == code, (where, reply)
    if status == 400:
        problem = reply.error["details"]["fields"][0]
        assert problem["field"] == field and problem["in"] == "body" and reason in problem["reason"], (where, reply)


@pytest.mark.parametrize("body", bodies.PATHOLOGICAL, ids=[b.id for b in bodies.PATHOLOGICAL])
def test_no_body_fails_the_function(stack, body):
    """Each body as the local gateway sends it (text when it is UTF-8, else base64) and as API
    Gateway sends a binary media type (base64): a 4xx in the envelope, and nothing stored."""
    _, key = stack.tenant_with_key()
    text = body.raw.decode("utf-8") if _is_utf8(body.raw) else None
    forms = [("base64", base64.b64encode(body.raw).decode(), True)]
    if text is not None:
        forms.append(("text", text, False))
    for form, sent, encoded in forms:
        _assert_refused(_create_project_with(key, sent, encoded), body.status, body.code, body.reason, form,
                        body.field)
    assert call("projects", "Projects-ListProjects", token=key).data["items"] == []


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@pytest.mark.parametrize("body, encoded, reason", [
    ("!!!not base64!!!", True, "not valid base64"),
    ("eyJuYW1lIjoiQSJ", True, "not valid base64"),             # a character short of its padding
    ("eyJuYW1lIjoiQSJ9\n", True, "not valid base64"),           # a newline inside
    ('{"name": "\ud800"}', False, "must be UTF-8"),              # a lone surrogate in the event's own text
    ('\x00{\x00"\x00n\x00"\x00:\x001\x00}', False, "must be UTF-8"),  # UTF-16-BE taken for text
], ids=["not-base64", "base64-unpadded", "base64-newline", "text-lone-surrogate", "text-utf16"])
def test_an_event_body_that_cannot_be_decoded_is_400(stack, body, encoded, reason):
    _, key = stack.tenant_with_key()
    _assert_refused(_create_project_with(key, body, encoded), 400, "VALIDATION_ERROR", reason, body)


def test_a_charset_other_than_utf8_is_415(stack):
    _, key = stack.tenant_with_key()
    for charset in ("utf-16", '"UTF-16LE"', "iso-8859-1"):
        reply = _create_project_with(key, bodies.ONE_PROJECT, False,
                                     headers={"Content-Type": f"application/json; charset={charset}"})
        _assert_refused(reply, 415, "UNSUPPORTED_MEDIA_TYPE", "", charset)
    assert call("projects", "Projects-ListProjects", token=key).data["items"] == []


def test_a_utf8_byte_order_mark_is_ignored(stack):
    _, key = stack.tenant_with_key()
    as_text = _create_project_with(key, bodies.UTF8_BOM.decode("utf-8"), False)
    as_base64 = _create_project_with(key, base64.b64encode(bodies.UTF8_BOM).decode(), True)
    assert as_text.status == 201 and as_base64.status == 201, (as_text, as_base64)
    assert as_text.data["name"] == as_base64.data["name"] == "Apollo"


def test_bodies_at_the_limits_are_accepted(stack):
    _, key = stack.tenant_with_key()
    deep = "[" * 62 + "]" * 62  # 64 deep with the body and its field; brackets and escapes in a string do not count
    reply = call("projects", "Projects-CreateProject", token=key,
                 raw_body=r'{"name": "A", "description": "\\u0000 \\ud800 [[[{{{ \"", "x": {"y": %s}}' % deep)
    # Past the body's rules, pydantic refuses the unknown field (and says so): the depth was allowed.
    assert reply.status == 400 and [f["field"] for f in reply.error["details"]["fields"]] == ["x"], reply
    reply = call("projects", "Projects-CreateProject", token=key,
                 raw_body='{"name": "A", "description": "caf\\u00e9 \\ud83d\\ude00 [{"}')
    assert reply.status == 201 and reply.data["description"] == "café \U0001F600 [{", reply


@pytest.mark.parametrize("content_type", ["text/plain", "application/xml", "application/x-www-form-urlencoded"])
def test_a_body_that_is_not_json_is_415(stack, content_type):
    _, key = stack.tenant_with_key()
    reply = call("projects", "Projects-CreateProject", token=key, raw_body='{"name": "A"}',
                 headers={"Content-Type": content_type})
    assert reply.status == 415 and reply.error["code"] == "UNSUPPORTED_MEDIA_TYPE", reply
    assert call("projects", "Projects-ListProjects", token=key).data["items"] == []


def test_json_with_a_charset_is_accepted(stack):
    _, key = stack.tenant_with_key()
    reply = call("projects", "Projects-CreateProject", token=key, raw_body='{"name": "A"}',
                 headers={"Content-Type": "application/json; charset=utf-8"})
    assert reply.status == 201, reply


@pytest.mark.parametrize("failure", ["runtime", "aws"])
def test_an_unexpected_failure_is_500_and_says_nothing_of_why(stack, monkeypatch, failure):
    from botocore.exceptions import ClientError
    _, key = stack.tenant_with_key()

    def boom(*_args, **_kwargs):
        if failure == "aws":
            raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "User arn:aws:iam::123:role/x "
                               "is not authorized on table ProjectsTable"}}, "Query")
        raise RuntimeError("db password hunter2 at /var/task/app.py")

    monkeypatch.setattr(projects_domain, "list_projects", boom)
    request_id, reply = send("projects", "Projects-ListProjects", token=key)
    assert reply.status == 500, reply
    assert reply.error == {"code": "INTERNAL_ERROR", "message": "The server failed to handle the request.",
                           "details": {}}
    assert reply.json["meta"]["request_id"] == request_id
    for leak in ("hunter2", "RuntimeError", "Traceback", 'File "', "arn:aws", "AccessDenied", "ProjectsTable"):
        assert leak not in reply.text
    assert all(name in reply.headers for name in RATE_HEADERS)


@pytest.mark.parametrize("where", ["route", "admission"])
@pytest.mark.parametrize("failure", ["read_timeout", "connect_timeout", "throttled"])
def test_a_datastore_that_does_not_answer_in_time_is_503_with_retry_after(stack, monkeypatch, where, failure):
    """After the client's own retries, a datastore that is out of reach is an outage (503, try again
    after Retry-After), never a 500 nor a crash of the function (the gateway's 502)."""
    from botocore.exceptions import ClientError, ConnectTimeoutError, ReadTimeoutError

    from svc_core.auth import rate_limit
    _, key = stack.tenant_with_key()

    def stalled(*_args, **_kwargs):
        if failure == "read_timeout":
            raise ReadTimeoutError(endpoint_url="http://dynamodb.us-east-1.amazonaws.com/")
        if failure == "connect_timeout":
            raise ConnectTimeoutError(endpoint_url="http://dynamodb.us-east-1.amazonaws.com/")
        raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate of requests exceeds"}},
                          "TransactWriteItems")

    if where == "route":
        monkeypatch.setattr(projects_domain, "create_project", stalled)
    else:
        monkeypatch.setattr(rate_limit, "consume", stalled)
    request_id, reply = send("projects", "Projects-CreateProject", token=key, body={"name": "A"})
    assert reply.status == 503, reply
    assert reply.error["code"] == "SERVICE_UNAVAILABLE" and reply.error["details"] == {"retryAfterSeconds": 5}
    assert reply.headers["retry-after"] == "5"
    assert reply.json["meta"]["request_id"] == request_id
    for leak in ("Timeout", "Throttling", "amazonaws", "Traceback"):
        assert leak not in reply.text


# ---- logs ----------------------------------------------------------------------------------

class _CurrentStdout:
    """Writes to whatever sys.stdout is at the time (capsys swaps it between test phases)."""

    def write(self, text: str) -> int:
        return sys.stdout.write(text)

    def flush(self) -> None:
        sys.stdout.flush()


@pytest.fixture
def log_lines(capsys, monkeypatch):
    """The JSON lines the handlers log, read from stdout with capsys. The Logger's handler bound
    the stdout of import time, so it is pointed at the current one for this test."""
    monkeypatch.setattr(logger.registered_handler, "stream", _CurrentStdout())
    capsys.readouterr()

    def read() -> list[dict]:
        out = capsys.readouterr().out
        return [json.loads(line) for line in out.splitlines() if line.strip()]
    return read


def test_no_credential_reaches_a_log_line_over_a_whole_cycle(stack, monkeypatch, log_lines):
    tenant, admin = stack.tenant_with_key()
    sent: dict[str, str] = {}
    created = call("api_keys", "ApiKeys-CreateKey", token=admin,
                   body={"name": "logged", "type": "cli", "environment": "Staging"}).data
    first = created["key"]
    rid, reply = send("projects", "Projects-ListProjects", token=first)
    assert reply.status == 200
    sent[rid] = tenant
    rotated = call("api_keys", "ApiKeys-RotateKey", token=admin, path_params={"id": created["id"]},
                   body={"overlapSeconds": 0}).data
    second = rotated["key"]
    token, _ = tokens.mint(subject="usr_log", tenant_id=tenant, scopes=["projects:read"], credential="user")
    basic = "Basic c3VwZXI6c2VjcmV0LXBhc3N3b3Jk"
    attempts = [
        ("projects", "Projects-ListProjects", {"token": second}, 200),
        ("projects", "Projects-ListProjects", {"token": token}, 200),
        ("projects", "Projects-CreateProject", {"token": second, "body": {"name": "", "description": second}}, 400),
        ("api_keys", "ApiKeys-CreateKey", {"token": admin, "body": {"name": first, "type": second}}, 400),
        ("projects", "Projects-ListProjects", {"token": second, "query": {"cursor": second}}, 400),
        ("projects", "Projects-ListProjects", {"token": second, "query": {"limit": token}}, 400),
        ("projects", "Projects-ListProjects", {"token": first}, 401),
        ("projects", "Projects-ListProjects", {"token": token[:-4] + "AAAA"}, 401),
        ("projects", "Projects-ListProjects", {"headers": {"Authorization": basic}}, 401),
    ]
    for function, name, kwargs, status in attempts:
        rid, reply = send(function, name, **kwargs)
        assert reply.status == status, (name, reply)
        sent[rid] = tenant if status != 401 else None

    def boom(*_a, **_k):
        raise RuntimeError(f"failed for {second} with Bearer {token} and {basic}")
    monkeypatch.setattr(projects_domain, "list_projects", boom)
    rid, reply = send("projects", "Projects-ListProjects", token=second)
    assert reply.status == 500
    sent[rid] = tenant
    assert call("api_keys", "ApiKeys-RevokeKey", token=admin, path_params={"id": created["id"]}).status == 200

    lines = log_lines()
    assert lines, "the handlers logged nothing"
    secrets = [admin, first, second, token, basic, "c3VwZXI6c2VjcmV0LXBhc3N3b3Jk"]
    secrets += [s[8:40] for s in (admin, first, second)] + [token.split(".")[1], token.split(".")[2]]
    for line in lines:
        text = json.dumps(line)
        for secret in secrets:
            assert secret not in text, line
        assert "Bearer" not in text and "bearer" not in text.lower().replace("bearerauth", "")
        assert not re.search(r"eyJ[0-9A-Za-z_-]+\.[0-9A-Za-z_-]+", text), line
        assert not re.search(r"svc_(sdk|cli|ci|int|mkt)_[0-9A-Za-z]{8}", text), line

    by_request: dict[str, list[dict]] = {}
    for line in lines:
        by_request.setdefault(line.get("request_id"), []).append(line)
    for rid, tenant_id in sent.items():
        assert rid in by_request, f"no log line carries request {rid}"
        assert all(line.get("tenant_id") == tenant_id for line in by_request[rid]), by_request[rid]
    assert any(line["message"] == "unhandled error" and line.get("tenant_id") == tenant for line in lines)
