"""Storage configuration and the live check of a BYOS bucket, against real servers on loopback:
moto's S3 server with request authentication on (for s3, and for r2 and gcs, which speak the
same API), Azurite for azure, a closed port and a server that never answers. The handlers run
against the session's emulator (DynamoDB, KMS).

bad_credentials is real: the authenticating moto server refuses a wrong secret
(SignatureDoesNotMatch) and an unknown key (InvalidAccessKeyId); a user without a policy gets
AccessDenied. Azurite answers a wrong account key with 403 AuthorizationFailure (Azure itself
answers AuthenticationFailed, mapped to bad_credentials: see the unit tests), and the client
refuses to sign with a key that is not base64 (bad_credentials).
"""

from __future__ import annotations

import io
import json
import logging
import secrets
import socket

import pytest

from svc_core.adapters import sealing
from tests.support.fake_keys import access_key_id
from tests.support.projects import assert_error, bad_fields
from tests.support.regions import (
    get_storage,
    put_storage,
    routing_info,
    tenant_item,
    tenant_on,
    validate,
)
from tests.support.stack import provisioned_stack
from tests.support.storage_servers import AuthS3, Azurite, SilentServer, closed_port_endpoint

BYOS_VIEW = {"tenantId", "storageMode", "platformRegion", "byosProvider", "byosEndpoint", "byosBucket", "byosRegion",
             "byosAccessKeySet", "byosSecretKeySet", "byosAccessKeyLast4", "isDefault", "updated_at"}


@pytest.fixture(scope="module")
def stack(emulator):
    yield from provisioned_stack(emulator)


def s3_body(server: AuthS3, bucket: str, provider: str = "s3", **changes):
    body = {"storageMode": "byos", "byosProvider": provider, "byosEndpoint": server.endpoint, "byosBucket": bucket,
            "byosAccessKey": server.admin.access_key, "byosSecretKey": server.admin.secret_key}
    if provider == "s3":
        body["byosRegion"] = "us-east-1"
    return {**body, **changes}


def azure_body(server: Azurite, container: str, **changes):
    return {"storageMode": "byos", "byosProvider": "azure", "byosEndpoint": server.endpoint, "byosBucket": container,
            "byosAccessKey": server.account, "byosSecretKey": server.key, **changes}


def steps_of(reply):
    assert reply.status == 200, reply
    return [(s["step"], s["ok"], s.get("reason")) for s in reply.data["steps"]]


PASSED = [("write", True, None), ("read", True, None), ("delete", True, None)]


# ---- platform storage ----------------------------------------------------------------------

def test_platform_storage_defaults_to_the_primary_region(stack):
    tenant, key = tenant_on(stack, "starter")
    reply = get_storage(key, tenant)
    assert reply.status == 200, reply
    assert set(reply.data) == BYOS_VIEW
    assert reply.data == {"tenantId": tenant, "storageMode": "platform", "platformRegion": "us-east-1",
                          "byosProvider": None, "byosEndpoint": None, "byosBucket": None, "byosRegion": None,
                          "byosAccessKeySet": False, "byosSecretKeySet": False, "byosAccessKeyLast4": None,
                          "isDefault": True, "updated_at": None}
    reply = put_storage(key, tenant, {"storageMode": "platform"})
    assert reply.status == 200 and reply.data["platformRegion"] == "us-east-1" and not reply.data["isDefault"]
    reply = put_storage(key, tenant, {"storageMode": "platform", "platformRegion": "eu-west-2"})
    assert reply.data["platformRegion"] == "eu-west-2" and get_storage(key, tenant).data == reply.data


def test_bad_platform_configurations_are_400_and_change_nothing(stack):
    tenant, key = tenant_on(stack, "growth")
    before = tenant_item(tenant)
    cases = [({"storageMode": "platform", "platformRegion": "mars-1"}, {"platformRegion"}),
             ({"storageMode": "platform", "platformRegion": "ap-northeast-1"}, {"platformRegion"}),
             ({"storageMode": "platform", "byosBucket": "b-1", "byosProvider": "s3"}, {"byosBucket", "byosProvider"}),
             ({"storageMode": "cloud"}, {"storageMode"}),
             ({"platformRegion": "us-east-1"}, {"storageMode"}),
             ({"storageMode": "platform", "extra": 1}, {"extra"})]
    for body, fields in cases:
        assert fields <= bad_fields(put_storage(key, tenant, body)), body
    assert tenant_item(tenant) == before


def test_platform_storage_stays_inside_the_data_residency_region(stack):
    from tests.support.regions import patch_prefs
    tenant, key = tenant_on(stack, "starter")
    assert patch_prefs(key, tenant, {"primaryRegion": "eu-west-1", "dataResidencyRequired": True,
                                     "dataResidencyRegion": "eu"}).status == 200
    # The body is valid; the stored preferences are what it conflicts with.
    details = assert_error(put_storage(key, tenant, {"storageMode": "platform", "platformRegion": "us-east-1"}),
                           409, "CONFLICT")
    assert {p["field"] for p in details["fields"]} == {"platformRegion"}
    assert details["current"] == {"dataResidencyRequired": True, "dataResidencyRegion": "eu"}
    assert put_storage(key, tenant, {"storageMode": "platform"}).data["platformRegion"] == "eu-west-1"


# ---- BYOS configuration --------------------------------------------------------------------

def test_byos_needs_the_plan_that_includes_it(stack):
    for plan in ("free", "starter"):
        tenant, key = tenant_on(stack, plan)
        before = tenant_item(tenant)
        body = {"storageMode": "byos", "byosProvider": "s3", "byosBucket": "acme-1", "byosRegion": "us-east-1",
                "byosAccessKey": access_key_id(), "byosSecretKey": "x" * 40}
        for reply in (put_storage(key, tenant, body), validate(key, tenant, body)):
            assert assert_error(reply, 403, "FORBIDDEN") == {"feature": "byos", "requiredPlan": "growth",
                                                            "currentPlan": plan}
        assert tenant_item(tenant) == before


@pytest.mark.parametrize("provider, missing", [
    ("s3", {"byosBucket", "byosRegion"}),
    ("r2", {"byosEndpoint", "byosBucket"}),
    ("gcs", {"byosEndpoint", "byosBucket"}),
    ("azure", {"byosEndpoint", "byosBucket"}),
])
def test_each_provider_names_every_field_it_misses(stack, provider, missing):
    tenant, key = tenant_on(stack, "growth")
    before = tenant_item(tenant)
    assert bad_fields(put_storage(key, tenant, {"storageMode": "byos", "byosProvider": provider})) == missing
    assert bad_fields(put_storage(key, tenant, {"storageMode": "byos"})) == {"byosProvider"}
    assert tenant_item(tenant) == before


def test_bucket_names_follow_the_providers_rules(stack):
    tenant, key = tenant_on(stack, "growth")
    keys = {"byosAccessKey": access_key_id(), "byosSecretKey": "s" * 40}
    assert bad_fields(put_storage(key, tenant, {"storageMode": "byos", "byosProvider": "azure",
                                                "byosEndpoint": "https://acct.blob.core.windows.net",
                                                "byosBucket": "two--hyphens", **keys})) == {"byosBucket"}
    assert bad_fields(put_storage(key, tenant, {"storageMode": "byos", "byosProvider": "s3", "byosRegion": "us-east-1",
                                                "byosBucket": "under_score", **keys})) == {"byosBucket"}
    reply = put_storage(key, tenant, {"storageMode": "byos", "byosProvider": "gcs", "byosBucket": "under_score",
                                      "byosEndpoint": "https://storage.googleapis.com", **keys})
    assert reply.status == 200, reply


def test_keys_are_sealed_never_answered_kept_while_the_place_stays_and_dropped_with_platform(stack, s3):
    tenant, key = tenant_on(stack, "growth")
    bucket = s3.new_bucket()
    body = s3_body(s3, bucket)
    reply = put_storage(key, tenant, body)
    assert reply.status == 200, reply
    assert reply.data == {"tenantId": tenant, "storageMode": "byos", "platformRegion": None, "byosProvider": "s3",
                          "byosEndpoint": s3.endpoint, "byosBucket": bucket, "byosRegion": "us-east-1",
                          "byosAccessKeySet": True, "byosSecretKeySet": True,
                          "byosAccessKeyLast4": s3.admin.access_key[-4:], "isDefault": False,
                          "updated_at": reply.data["updated_at"]}
    assert get_storage(key, tenant).data == reply.data
    # The item holds the keys only sealed, bound to this tenant.
    stored = tenant_item(tenant)["storage"]
    text = json.dumps(stored)
    assert s3.admin.access_key not in text and s3.admin.secret_key not in text
    assert set(stored["byosCredentials"]) == {"alg", "encryptedKey", "nonce", "ciphertext"}
    context = {"purpose": "byos-credentials", "tenantId": tenant}
    assert json.loads(sealing.unseal(stored["byosCredentials"], context)) == \
        {"accessKey": s3.admin.access_key, "secretKey": s3.admin.secret_key}
    with pytest.raises(sealing.Unsealable):
        sealing.unseal(stored["byosCredentials"], {**context, "tenantId": "ten_someone_else"})
    # Leaving both keys out keeps them while provider, endpoint and bucket stay (the region may change).
    kept = put_storage(key, tenant, {k: v for k, v in body.items() if k not in ("byosAccessKey", "byosSecretKey")})
    assert kept.status == 200 and kept.data["byosAccessKeySet"] is True
    assert tenant_item(tenant)["storage"]["byosCredentials"] == stored["byosCredentials"]
    assert steps_of(validate(key, tenant)) == PASSED
    # Another bucket without keys: 409 (no keys stored for that place), naming both keys and the stored
    # place; nothing changes.
    before = tenant_item(tenant)
    moved = {k: v for k, v in body.items() if k not in ("byosAccessKey", "byosSecretKey")}
    details = assert_error(put_storage(key, tenant, {**moved, "byosBucket": "another-bucket"}), 409, "CONFLICT")
    assert {p["field"] for p in details["fields"]} == {"byosAccessKey", "byosSecretKey"}
    assert details["current"] == {"storageMode": "byos", "byosProvider": "s3", "byosEndpoint": s3.endpoint,
                                  "byosBucket": bucket, "byosAccessKeySet": True}
    assert bad_fields(put_storage(key, tenant, {**moved, "byosAccessKey": access_key_id()})) == \
        {"byosSecretKey"}
    assert tenant_item(tenant) == before
    # Platform storage drops them.
    assert put_storage(key, tenant, {"storageMode": "platform"}).status == 200
    assert "byosCredentials" not in tenant_item(tenant)["storage"]
    assert put_storage(key, tenant, {k: v for k, v in body.items()
                                     if k not in ("byosAccessKey", "byosSecretKey")}).status == 409


# ---- validation against real servers -------------------------------------------------------

@pytest.mark.parametrize("provider", ["s3", "r2", "gcs"])
def test_validation_writes_reads_and_deletes_on_each_s3_api_provider(stack, s3, provider):
    tenant, key = tenant_on(stack, "growth")
    bucket = s3.new_bucket()
    assert put_storage(key, tenant, s3_body(s3, bucket, provider)).status == 200
    reply = validate(key, tenant)
    assert steps_of(reply) == PASSED
    data = reply.data
    assert data["ok"] is True and data["source"] == "stored"
    assert (data["byosProvider"], data["byosEndpoint"], data["byosBucket"]) == (provider, s3.endpoint, bucket)
    assert all(isinstance(s["latencyMs"], int) and s["latencyMs"] >= 0 for s in data["steps"])
    assert s3.keys_in(bucket) == []  # the probe object is gone


def test_validation_on_azure(stack, azurite):
    tenant, key = tenant_on(stack, "enterprise")
    container = azurite.new_container()
    assert put_storage(key, tenant, azure_body(azurite, container)).status == 200
    reply = validate(key, tenant)
    assert steps_of(reply) == PASSED and reply.data["ok"] is True
    assert azurite.blobs_in(container) == []
    # Azurite answers a wrong (well-formed) account key 403 AuthorizationFailure; a key that is
    # not base64 is refused by the client before sending.
    wrong = validate(key, tenant, azure_body(azurite, container, byosSecretKey="d3Jvbmcga2V5"))
    assert steps_of(wrong) == [("write", False, "access_denied")]
    assert wrong.data["steps"][0]["providerCode"] == "AuthorizationFailure"
    malformed = validate(key, tenant, azure_body(azurite, container, byosSecretKey="not-base64!"))
    assert steps_of(malformed) == [("write", False, "bad_credentials")]
    missing = validate(key, tenant, azure_body(azurite, "no-such-container"))
    assert steps_of(missing) == [("write", False, "no_such_bucket")]
    assert missing.data["steps"][0]["providerCode"] == "ContainerNotFound"


def test_validation_reports_what_the_user_can_act_on(stack, s3, setting):
    tenant, key = tenant_on(stack, "growth")
    bucket = s3.new_bucket()
    assert put_storage(key, tenant, s3_body(s3, bucket)).status == 200
    before = tenant_item(tenant)
    cases = [
        (s3_body(s3, bucket, byosSecretKey="wrong-secret-key-0000000000"), "bad_credentials", "SignatureDoesNotMatch"),
        (s3_body(s3, bucket, byosAccessKey=access_key_id()), "bad_credentials", "InvalidAccessKeyId"),
        (s3_body(s3, bucket, byosAccessKey=s3.nobody.access_key, byosSecretKey=s3.nobody.secret_key),
         "access_denied", "AccessDenied"),
        (s3_body(s3, "no-such-bucket"), "no_such_bucket", "NoSuchBucket"),
        (s3_body(s3, bucket, byosEndpoint=closed_port_endpoint()), "unreachable", None),
    ]
    for body, reason, code in cases:
        reply = validate(key, tenant, body)
        assert steps_of(reply) == [("write", False, reason)], (body, reply)
        step = reply.data["steps"][0]
        assert step.get("providerCode") == code and step["message"]
        assert reply.data["ok"] is False and reply.data["source"] == "body"
    silent = SilentServer()
    try:
        setting("STORAGE_PROBE_READ_TIMEOUT_SECONDS", "0.3")
        reply = validate(key, tenant, s3_body(s3, bucket, byosEndpoint=silent.endpoint))
        assert steps_of(reply) == [("write", False, "timeout")]
    finally:
        silent.stop()
    assert tenant_item(tenant) == before  # a configuration sent to validate is never stored


def test_validating_platform_storage(stack):
    tenant, key = tenant_on(stack, "growth")
    # nothing to validate is a state of the tenant: 409 with the stored mode
    assert assert_error(validate(key, tenant), 409, "CONFLICT") == {"resource": "storage", "storageMode": "platform"}
    # a platform body is not what the document accepts here
    assert bad_fields(validate(key, tenant, {"storageMode": "platform"})) == {"storageMode"}


# ---- SSRF ----------------------------------------------------------------------------------

@pytest.mark.parametrize("endpoint, code", [
    ("http://169.254.169.254/latest/meta-data", "metadata_service"),
    ("https://169.254.169.254", "metadata_service"),
    ("https://10.0.0.8", "private"),
    ("https://192.168.1.1:9000", "private"),
    ("https://172.16.5.4", "private"),
    ("https://100.64.0.1", "shared_address_space"),
    ("https://169.254.1.1", "link_local"),
    ("https://[fe80::1]", "link_local"),
    ("https://[fd12:3456::1]", "unique_local"),
    ("https://[::ffff:10.0.0.1]", "private"),
    ("https://[::ffff:169.254.169.254]", "metadata_service"),
    ("https://0.0.0.0", "unspecified"),
    ("https://[::]", "unspecified"),
    ("https://user:pw@storage.example.com", "malformed"),
    ("http://8.8.8.8", "scheme"),
])
def test_endpoints_that_point_inside_are_refused_before_any_connection(stack, endpoint, code):
    tenant, key = tenant_on(stack, "growth")
    before = tenant_item(tenant)
    body = {"storageMode": "byos", "byosProvider": "r2", "byosEndpoint": endpoint, "byosBucket": "acme-1",
            "byosAccessKey": access_key_id(), "byosSecretKey": "s" * 40}
    for reply in (put_storage(key, tenant, body), validate(key, tenant, body)):
        details = assert_error(reply, 400, "VALIDATION_ERROR")
        [problem] = details["fields"]
        assert (problem["field"], problem["code"]) == ("byosEndpoint", code), reply
    assert tenant_item(tenant) == before


def test_loopback_is_allowed_only_by_the_development_setting(stack, s3, setting):
    tenant, key = tenant_on(stack, "growth")
    bucket = s3.new_bucket()
    assert put_storage(key, tenant, s3_body(s3, bucket)).status == 200  # the tests' stack allows loopback
    setting("ALLOW_LOOPBACK_ENDPOINTS", "false")
    # A name is not resolved, so `localhost` is refused by its text, as any one-label name.
    for endpoint, code in ((s3.endpoint, "loopback"), (s3.endpoint.replace("127.0.0.1", "localhost"), "malformed"),
                           ("https://127.0.0.2", "loopback"), ("https://[::1]", "loopback")):
        reply = put_storage(key, tenant, s3_body(s3, bucket, byosEndpoint=endpoint))
        assert assert_error(reply, 400, "VALIDATION_ERROR")["fields"][0]["code"] == code, endpoint
    # The stored configuration is checked again before connecting: not connected, and said why.
    reply = validate(key, tenant)
    assert steps_of(reply) == [("write", False, "endpoint_refused")]
    assert "loopback" in reply.data["steps"][0]["message"]


def _resolves(host: str) -> bool:
    try:
        return bool(socket.getaddrinfo(host, 443))
    except OSError:
        return False


def test_a_put_resolves_no_name_and_answers_alike_whatever_it_would_resolve_to(stack, setting, monkeypatch):
    """What a name the pattern refuses resolves to is no business of a PUT: the answer for this
    machine's own name (loopback here, as /etc/hosts says) is the one for a name that resolves
    nowhere, and no lookup is made (the validation route, which connects, is the only one that
    resolves, and only names the pattern accepts)."""
    setting("ALLOW_LOOPBACK_ENDPOINTS", "false")  # as in a deployed stack
    tenant, key = tenant_on(stack, "growth")
    before = tenant_item(tenant)
    here, nowhere = socket.gethostname(), f"nowhere-{secrets.token_hex(4)}"
    assert _resolves(here) and _resolves("localhost") and not _resolves(nowhere)
    names = {here, "localhost", nowhere, f"{here}.internal", f"{nowhere}.internal"}
    looked_up = []
    real = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):
        if host in names:  # the service's own calls (to the emulator) go on unobserved
            looked_up.append(host)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    answers = {}
    for name in sorted(names):
        body = {"storageMode": "byos", "byosProvider": "r2", "byosEndpoint": f"https://{name}", "byosBucket": "acme-1",
                "byosAccessKey": access_key_id(), "byosSecretKey": "s" * 40}
        for route, reply in (("put", put_storage(key, tenant, body)), ("validate", validate(key, tenant, body))):
            details = assert_error(reply, 400, "VALIDATION_ERROR")
            answers[(route, name)] = details["fields"]
    assert looked_up == []
    assert all(fields == answers[("put", nowhere)] for fields in answers.values()), answers
    assert [(f["field"], f["code"]) for f in answers[("put", nowhere)]] == [("byosEndpoint", "malformed")]
    assert tenant_item(tenant) == before


# ---- secrets -------------------------------------------------------------------------------

def test_secrets_are_in_no_answer_and_no_log(stack, s3, caplog):
    from svc_core.platform.log import logger as service_logger
    caplog.set_level(logging.DEBUG)  # every library's DEBUG lines too (Powertools logs a route's arguments)
    service_lines = io.StringIO()
    handler = service_logger.registered_handler
    previous = handler.setStream(service_lines)
    try:
        tenant, key = tenant_on(stack, "growth")
        bucket = s3.new_bucket()
        secret = s3.admin.secret_key
        body = s3_body(s3, bucket)
        replies = [put_storage(key, tenant, body), get_storage(key, tenant), validate(key, tenant),
                   validate(key, tenant, body), validate(key, tenant, {**body, "byosSecretKey": secret + "x"}),
                   put_storage(key, tenant, {**body, "byosEndpoint": "https://10.1.2.3"}),
                   put_storage(key, tenant, {**body, "byosBucket": "No_Good"}),
                   put_storage(key, tenant, {**body, "byosSecretKey": secret + " with a space"}),
                   put_storage(key, tenant, {**body, "byosSecretKey": secret * 20}),  # too long
                   routing_info(key)]
    finally:
        handler.setStream(previous)
    assert [r.status for r in replies] == [200, 200, 200, 200, 200, 400, 400, 400, 400, 200]
    for text in [r.text for r in replies] + [json.dumps(r.raw.get("multiValueHeaders")) for r in replies]:
        assert secret not in text and s3.admin.access_key not in text
    # The service's own JSON lines name neither key...
    lines = service_lines.getvalue()
    assert '"message":"storage validated"' in lines
    assert secret not in lines and s3.admin.access_key not in lines
    # ...and no library's DEBUG line has the secret (botocore's name the access key id, as AWS does).
    assert secret not in caplog.text and secret[:12] not in caplog.text


def test_the_probe_connects_to_the_address_that_was_checked_not_to_the_name_again(stack, s3, azurite, monkeypatch):
    """A name is resolved once, checked, and the connection made to that address (with the name
    as Host and, over TLS, as the certificate's name): a second lookup, which a rebinding DNS
    server would answer with a private address, never happens. This test's resolver points the
    names at the servers on loopback; any other lookup of them (there is no DNS here) would fail."""
    from svc_core.adapters import endpoint_guard
    looked_up: list[str] = []
    names = {"s3.us-east-1.amazonaws.com", "blob.rebind.test"}  # moto takes the first as its own (path style)

    def resolver(host, port):
        looked_up.append(host)
        return ["127.0.0.1"] if host in names else endpoint_guard.socket.getaddrinfo(host, port)

    monkeypatch.setattr(endpoint_guard, "resolve", resolver)
    tenant, key = tenant_on(stack, "growth")
    bucket, container = s3.new_bucket(), azurite.new_container()
    s3_endpoint = s3.endpoint.replace("127.0.0.1", "s3.us-east-1.amazonaws.com")
    azure_endpoint = azurite.endpoint.replace("127.0.0.1", "blob.rebind.test")
    assert steps_of(validate(key, tenant, s3_body(s3, bucket, byosEndpoint=s3_endpoint))) == PASSED
    assert steps_of(validate(key, tenant, azure_body(azurite, container, byosEndpoint=azure_endpoint))) == PASSED
    assert looked_up == ["s3.us-east-1.amazonaws.com", "blob.rebind.test"]
