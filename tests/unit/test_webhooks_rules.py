"""Webhook subscriptions without AWS: the Standard Webhooks secret rule, the events list, the
rotation of secrets (overlaps, expiry), and URLs with a query string through the SSRF guard."""

from __future__ import annotations

import base64

import pytest
from pydantic import ValidationError

from svc_core.domain import webhooks
from svc_core.domain.webhooks import WebhookCreate, WebhookRotate, WebhookUpdate, rotated_secrets, secret_problem
from svc_core.endpoint_guard import EndpointRefused, check


def whsec(size: int) -> str:
    return "whsec_" + base64.b64encode(bytes(range(size))).decode()


@pytest.mark.parametrize("size", [24, 25, 26, 32, 48, 63, 64])
def test_secrets_of_24_to_64_bytes_pass(size):
    assert secret_problem(whsec(size)) is None
    assert WebhookCreate(url="https://hooks.example.com", events=["*"], secret=whsec(size)).secret == whsec(size)


@pytest.mark.parametrize("text, says", [
    (whsec(23), "it encodes 23"),
    (whsec(16), "it encodes 16"),
    (whsec(65), "it encodes 65"),
    ("whsec_", "it encodes 0"),
    (base64.b64encode(bytes(32)).decode(), "must start with whsec_"),
    ("WHSEC_" + base64.b64encode(bytes(32)).decode(), "must start with whsec_"),
    ("whsec_" + base64.urlsafe_b64encode(b"\xfb\xff" * 16).decode(), "standard base64"),  # - and _
    ("whsec_" + base64.b64encode(bytes(33)).decode() + "A", "standard base64"),                 # bad length
    ("whsec_" + base64.b64encode(bytes(31)).decode().rstrip("="), "standard base64"),          # padding left out
    ("whsec_" + "A" * 20 + " " + "A" * 23, "standard base64"),
])
def test_weak_or_malformed_secrets_are_refused(text, says):
    assert says in secret_problem(text)
    with pytest.raises(ValidationError) as refused:
        WebhookCreate(url="https://hooks.example.com", events=["*"], secret=text)
    assert [e["loc"] for e in refused.value.errors()] == [("secret",)]
    assert all(text not in e["msg"] for e in refused.value.errors())  # the API answers msg only


def test_a_generated_secret_is_32_random_bytes_in_the_standard_form():
    made = {webhooks.generate_secret() for _ in range(20)}
    assert len(made) == 20
    for text in made:
        assert secret_problem(text) is None and len(base64.b64decode(text[6:])) == 32


def test_events_are_known_names_or_star_each_once():
    def events(names):
        return WebhookCreate(url="https://h.example.com", events=names, secret=whsec(32)).events
    assert events(["project.created", "project.deleted", "project.created"]) == ["project.created", "project.deleted"]
    assert events(["project.created", "*"]) == ["*"]
    for bad in ([], ["webhook.test"], ["project.exploded"], ["Project.Created"], ["*"] * 10, "project.created"):
        with pytest.raises(ValidationError):
            events(bad)


def test_the_bodies_refuse_unknown_fields_nulls_and_empty_patches():
    with pytest.raises(ValidationError):
        WebhookCreate(url="https://h.example.com", events=["*"])  # the secret is required
    with pytest.raises(ValidationError):
        WebhookCreate(url="https://h.example.com", events=["*"], secret=whsec(32), enabled=False)
    with pytest.raises(ValidationError):
        WebhookUpdate()
    for field in ("url", "events", "enabled"):
        with pytest.raises(ValidationError):
            WebhookUpdate(**{field: None})
    assert WebhookUpdate(description=None).model_fields_set == {"description"}
    assert WebhookRotate().overlapSeconds == 86400 and WebhookRotate(overlapSeconds=0.0).overlapSeconds == 0
    for overlap in (-1, 604801, True, "60"):
        with pytest.raises(ValidationError):
            WebhookRotate(overlapSeconds=overlap)


def test_the_url_must_be_unicode_and_at_most_2048_characters():
    ok = "https://hooks.example.com/" + "a" * (2048 - 26)
    assert WebhookCreate(url=ok, events=["*"], secret=whsec(32)).url == ok
    for bad in (ok + "a", "https://hooks.example.com/\ud800", "ftp://hooks.example.com", "https://a b.example.com"):
        with pytest.raises(ValidationError):
            WebhookCreate(url=bad, events=["*"], secret=whsec(32))


def secret(created, expires=None):
    return {"sealed": {"n": created}, "created_at": str(created), "expiresAt": expires}


def test_a_rotation_puts_the_new_secret_first_and_ends_the_others_after_the_overlap():
    now = 1_000_000.4
    current = secret(1)
    rotated = rotated_secrets([current], secret(2), now, 3600)
    assert rotated == [secret(2), {**current, "expiresAt": 1_003_600}]
    # A second rotation inside the overlap: three sign; a shorter overlap shortens the older one too.
    again = rotated_secrets(rotated, secret(3), now + 10, 60)
    assert again == [secret(3), {**secret(2), "expiresAt": 1_000_070}, {**current, "expiresAt": 1_000_070}]
    longer = rotated_secrets(rotated, secret(3), now + 10, 7200)
    assert [s["expiresAt"] for s in longer] == [None, 1_007_210, 1_003_600]
    # overlap 0 ends every previous secret now; expired ones never come back.
    assert rotated_secrets(again, secret(4), now + 20, 0) == [secret(4)]
    assert rotated_secrets(rotated, secret(4), 1_003_600, 86400) == [secret(4), {**secret(2), "expiresAt": 1_090_000}]


def test_live_secrets_are_the_current_one_and_those_in_their_overlap():
    kept = [secret(3), secret(2, 200), secret(1, 100)]
    assert webhooks.live_secrets(kept, 99.9) == kept
    assert webhooks.live_secrets(kept, 100) == kept[:2]
    assert webhooks.live_secrets(kept, 500) == kept[:1]


def test_a_webhook_url_may_carry_a_query_a_storage_endpoint_may_not():
    target = check("https://8.8.8.8/hook?token=abc&x=1", allow_loopback=False, allow_query=True)
    assert (target.host, target.port) == ("8.8.8.8", 443)
    with pytest.raises(EndpointRefused) as refused:
        check("https://8.8.8.8/hook?token=abc", allow_loopback=False)
    assert refused.value.code == "malformed"
    for url in ("https://8.8.8.8/#frag", "https://u:p@8.8.8.8/?x=1", "https://8.8.8.8/?a=b#c"):
        with pytest.raises(EndpointRefused) as refused:
            check(url, allow_loopback=False, allow_query=True)
        assert refused.value.code == "malformed"
    with pytest.raises(EndpointRefused) as refused:
        check("https://10.0.0.1/?token=x", allow_loopback=False, allow_query=True)
    assert refused.value.code == "private"


def test_a_port_must_be_1_to_65535_in_digits():
    for url in ("https://8.8.8.8:0/", "https://8.8.8.8:00/", "https://8.8.8.8:65536/", "https://8.8.8.8:x/",
                "https://8.8.8.8:+1/", "https://8.8.8.8:\u0663/", "https://[2001:4860::8888]:0/"):
        with pytest.raises(EndpointRefused) as refused:
            check(url, allow_loopback=False)
        assert refused.value.code == "port", url
        assert "1 to 65535" in refused.value.reason
    assert check("https://8.8.8.8:65535/", allow_loopback=False).port == 65535
    assert check("https://8.8.8.8:/", allow_loopback=False).port == 443  # empty: the scheme's default


def test_check_url_names_the_url_field_and_the_code(monkeypatch):
    from svc_core.errors import ValidationFailed
    for url, code in (("https://169.254.169.254/latest", "metadata_service"), ("http://8.8.8.8/", "scheme"),
                      ("https://u@8.8.8.8/", "malformed"), ("http://127.0.0.1:8080/", "loopback")):
        with pytest.raises(ValidationFailed) as refused:
            webhooks.check_url(url)
        [problem] = refused.value.details["fields"]
        assert (problem["field"], problem["in"], problem["code"]) == ("url", "body", code)
        assert problem["reason"].startswith("the URL ")
    monkeypatch.setenv("ALLOW_LOOPBACK_ENDPOINTS", "true")
    from svc_core.config import settings
    settings.cache_clear()
    webhooks.check_url("http://127.0.0.1:8080/hook?x=1")
    with pytest.raises(ValidationFailed):
        webhooks.check_url("http://8.8.8.8/")
