"""The document's rules for webhook URLs, webhook secrets and secret values are the API's rules:
what the committed OpenAPI document allows (read by jsonschema_rs, the validator schemathesis
uses) the API accepts, and what it refuses the API refuses, drawn by hypothesis from the
document's own patterns and from strings around them."""

from __future__ import annotations

import base64
import json
import socket
import string
from pathlib import Path

import jsonschema_rs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from svc_core.adapters import endpoint_guard, webhook_url
from svc_core.domain import webhooks
from svc_core.domain.fields import webhooks as webhook_fields
from svc_core.domain.fields.secrets import MAX_VALUE_CHARS
from svc_core.domain.models.secrets import SecretCreate, SecretUpdate
from svc_core.domain.models.webhooks import WebhookRotate
from svc_core.domain.webhook_delivery import secret_key
from svc_core.platform.errors import ValidationFailed

DOCUMENT = json.loads((Path(__file__).resolve().parents[2] / "functions/meta/openapi.json").read_text())
SCHEMAS = DOCUMENT["components"]["schemas"]
URL_SCHEMA = SCHEMAS["WebhookCreate"]["properties"]["url"]
SECRET_SCHEMA = SCHEMAS["WebhookCreate"]["properties"]["secret"]
VALUE_SCHEMA = SCHEMAS["SecretCreate"]["properties"]["value"]
RULES = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def documented(schema: dict, value: str) -> bool:
    return jsonschema_rs.validator_for(schema).is_valid(value)


def url_accepted(url: str) -> bool:
    try:
        webhooks.check_url(url)
    except ValidationFailed as refused:
        [problem] = refused.details["fields"]
        assert problem["field"] == "url" and problem["code"], problem
        return False
    return True


# ---- webhook URLs ---------------------------------------------------------------------------

def test_the_document_carries_the_rule_the_api_applies():
    assert URL_SCHEMA["pattern"] == webhook_url.PATTERN and URL_SCHEMA["maxLength"] == webhook_url.MAX_URL
    assert SCHEMAS["WebhookUpdate"]["properties"]["url"]["pattern"] == webhook_url.PATTERN
    for schema in (SECRET_SCHEMA, SCHEMAS["WebhookRotate"]["properties"]["secret"]):
        assert [form["pattern"] for form in schema["anyOf"]] == [webhook_fields.WHSEC_PATTERN,
                                                                  webhook_fields.PLAIN_SECRET_PATTERN]


@RULES
@given(st.from_regex(webhook_url.PATTERN, fullmatch=True).filter(lambda u: len(u) <= webhook_url.MAX_URL))
def test_every_url_the_document_allows_is_registered_and_names_no_address(url):
    assert documented(URL_SCHEMA, url)
    assert url_accepted(url)
    _scheme, host, port = endpoint_guard.parse(url, allow_query=True)
    assert 1 <= port <= 65535
    with pytest.raises(OSError):  # no spelling of an IPv4 address that a resolver would take as one
        socket.inet_aton(host)
    assert host.rsplit(".", 1)[-1] not in webhook_url.LOCAL_NAMES


URLISH = st.builds(
    lambda scheme, host, port, rest: f"{scheme}://{host}{port}{rest}",
    st.sampled_from(["https", "http", "HTTPS", "ftp"]),
    st.one_of(st.sampled_from(["hooks.example.com", "a.b", "127.0.0.1", "127.1", "0x7f000001", "[::1]", "localhost",
                               "api.localhost", "x.LOCAL", "hooks", "a-.example.com", "u@hooks.example.com",
                               "8.8.8.8", "h.internal", "1.example.2com", "xn--bcher-kva.example"]),
              st.text(string.ascii_letters + string.digits + ".-_@[]:", min_size=1, max_size=20)),
    st.sampled_from(["", ":443", ":0", ":65535", ":65536", ":0443", ":", ":x"]),
    st.one_of(st.sampled_from(["", "/", "/hook?token=abc", "?a=b", "/#frag", "/é", "/a b", "/\n"]),
              st.text(max_size=12)))


@RULES
@given(URLISH)
def test_a_url_is_registered_exactly_when_the_document_allows_it(url):
    assert url_accepted(url) == documented(URL_SCHEMA, url) == webhook_url.allowed(url)


@pytest.mark.parametrize("url, code", [
    ("https://127.0.0.1/hook", "loopback"), ("https://[::ffff:10.0.0.1]/", "private"),
    ("https://169.254.169.254/latest", "metadata_service"), ("https://8.8.8.8/", "ip_address"),
    ("https://127.1/", "host"), ("https://0x7f000001/", "host"), ("https://2130706433/", "host"),
    ("https://localhost/", "local_name"), ("https://api.localhost:8443/", "local_name"), ("https://a.Internal/", "local_name"),
    ("http://hooks.example.com/", "scheme"), ("https://hooks.example.com/#f", "malformed"),
    ("https://user@hooks.example.com/", "malformed"), ("https://hooks.example.com:65536/", "port"),
    ("https://hooks.example.com/\u00e9", "malformed"),
])
def test_each_refusal_says_why(url, code):
    with pytest.raises(ValidationFailed) as refused:
        webhooks.check_url(url)
    assert refused.value.details["fields"][0]["code"] == code
    assert not documented(URL_SCHEMA, url)


def test_a_name_is_not_resolved_at_registration(monkeypatch):
    def never(host, port):
        raise AssertionError("resolved at registration")
    monkeypatch.setattr(endpoint_guard, "resolve", never)
    webhooks.check_url("https://nowhere.example.com/hook")   # may resolve later: deliveries will tell


# ---- webhook secrets ------------------------------------------------------------------------

def secret_accepted(text: str) -> bool:
    try:
        WebhookRotate(secret=text)
    except ValidationError:
        return False
    return True


@RULES
@given(st.from_regex(webhook_fields.WHSEC_PATTERN, fullmatch=True))
def test_every_documented_whsec_secret_is_taken_and_keys_24_to_64_bytes(text):
    assert documented(SECRET_SCHEMA, text) and secret_accepted(text)
    assert 24 <= len(secret_key(text)) <= 64


@RULES
@given(st.from_regex(webhook_fields.PLAIN_SECRET_PATTERN, fullmatch=True).map(lambda t: (t + "A" * 32)[:256]))
def test_every_documented_plain_secret_is_taken_and_keys_its_utf8_bytes(text):
    assert documented(SECRET_SCHEMA, text) and secret_accepted(text)
    assert secret_key(text) == text.encode()


@RULES
@given(st.binary(min_size=0, max_size=80), st.sampled_from(["whsec_", "WHSEC_", "Whsec_", "whsec", ""]),
       st.sampled_from(["", "=", "A", " "]))
def test_a_prefixed_secret_is_taken_exactly_when_the_document_allows_it(raw, prefix, tail):
    text = prefix + base64.b64encode(raw).decode() + tail
    assert secret_accepted(text) == documented(SECRET_SCHEMA, text) == webhook_fields.is_secret(text)
    if prefix == "whsec_" and not tail:
        assert secret_accepted(text) == (24 <= len(raw) <= 64)


@RULES
@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x7F) | st.sampled_from("éwhsecWHSEC_"),
               min_size=0, max_size=300))
def test_any_text_is_a_secret_exactly_when_the_document_allows_it(text):
    assert secret_accepted(text) == documented(SECRET_SCHEMA, text) == webhook_fields.is_secret(text)


# ---- secret values --------------------------------------------------------------------------

def value_accepted(text: str) -> bool:
    """As the API takes it: the body rules (svc_core/http/json_body.py: no NUL in any string), then the model."""
    from svc_core.http import json_body
    from svc_core.platform.errors import ValidationFailed
    try:
        json_body.parse(json.dumps({"value": text}))
        SecretUpdate(value=text)
    except (ValidationError, ValidationFailed):
        return False
    return True


BLANKISH = st.sampled_from(" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f"
                           "\u3000\ufeff\x00\u180e\u200b")


# Unicode text: a lone surrogate is no UTF-8 (a body can hold one only as an escape, which
# svc_core/json_body.py refuses whatever the field; its own tests show it), nor can a validator read it.
TEXT_CHARACTERS = st.characters(exclude_categories=("Cs",))


@RULES
@given(st.one_of(st.text(BLANKISH, max_size=40), st.text(TEXT_CHARACTERS, max_size=40),
                 st.tuples(st.text(BLANKISH, max_size=10), TEXT_CHARACTERS, st.text(BLANKISH, max_size=10))
                 .map("".join)))
def test_a_value_is_taken_exactly_when_the_document_allows_it(text):
    assert value_accepted(text) == documented(VALUE_SCHEMA, text)


def test_python_whitespace_is_blank_in_the_documented_pattern():
    for code in range(0x110000):
        if chr(code).isspace():
            assert not documented(VALUE_SCHEMA, chr(code)) and not value_accepted(chr(code)), hex(code)


def test_any_documented_secret_body_fits_the_body_limit_escaped_as_much_as_json_can():
    from svc_core.platform.config import settings as deployment
    assert VALUE_SCHEMA["maxLength"] == MAX_VALUE_CHARS
    value = "\U0001F600" * MAX_VALUE_CHARS
    body = {"name": "N" * 128, "value": value, "description": "\U0001F600" * 500}
    SecretCreate(**body)
    assert len(json.dumps(body, ensure_ascii=True).encode()) < deployment().max_body_bytes
    assert len(value.encode("utf-8")) <= 64 * 1024
