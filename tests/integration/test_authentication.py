"""Authentication: API key format checks before any read, service JWTs and the attacks on
them, signing-key rotation, the public JWKS, and the Authorization header's forms."""

from __future__ import annotations

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from svc_core.auth import key_format, signing_keys, tokens
from svc_core.platform.config import settings
from tests.support.auth_helpers import (
    Clock,
    DynamoCalls,
    active_public_pem,
    high_s,
    hs256,
    payload_of,
    put_signing_document,
    service_claims,
    signed,
    signing_document,
    unsigned,
    with_payload,
)
from tests.support.functions import call

READ = ["projects:read"]


def projects_with(token=None, **kwargs):
    return call("projects", "Projects-ListProjects", token=token, **kwargs)


def assert_401(reply):
    assert reply.status == 401, reply
    assert reply.error["code"] == "UNAUTHORIZED"
    assert reply.json["meta"]["request_id"]


# ---- API keys: format first, database second -----------------------------------------------

def _flip(char: str) -> str:
    return "A" if char != "A" else "B"


def malformed_keys() -> dict[str, str]:
    good = key_format.generate("sdk")
    return {
        "checksum_off_by_one_char": good[:-1] + _flip(good[-1]),
        "random_part_changed": good[:10] + _flip(good[10]) + good[11:],
        "type_swapped": "svc_cli_" + good[len("svc_sdk_"):],
        "unknown_type": "svc_xyz_" + good[len("svc_sdk_"):],
        "too_short": good[:-2],
        "too_long": good + "A",
        "not_base62": good[:12] + "-" + good[13:],
        "prefix_only": "svc_sdk_",
        "upper_case_prefix": "SVC_sdk_" + good[len("svc_sdk_"):],
    }


@pytest.mark.parametrize("name", sorted(malformed_keys()))
def test_a_malformed_key_is_401_before_any_read_of_the_keys_table(stack, name):
    stack.tenant_with_key()  # the table holds keys; none of them may be looked at
    value = malformed_keys()[name]
    with DynamoCalls(stack) as calls:
        reply = projects_with(value)
    assert_401(reply)
    assert calls.on(settings().api_keys_table) == []
    assert calls.on(settings().rate_limits_table)  # the recorder was listening: the 401 was counted


def test_a_well_formed_unknown_key_is_401_after_looking_it_up(stack):
    """The control of the test above: a key that passes the checksum is read from the table."""
    stack.tenant_with_key()
    with DynamoCalls(stack) as calls:
        reply = projects_with(key_format.generate("mkt"))
    assert_401(reply)
    assert "GetItem" in calls.on(settings().api_keys_table)



def test_an_api_keys_first_request_reads_no_signing_key_and_writes_its_last_use(stack, monkeypatch):
    """An API key becomes a Principal from its own record: no token is minted, so the signing
    keys are never read; its last use is written while its tenant's policy is read."""
    from svc_core.adapters import secrets_cache
    from svc_core.auth import authenticate, tenant_policy
    from svc_core.platform import parallel
    tenant, key = stack.tenant_with_key()
    authenticate._key_cache.clear()
    tenant_policy.forget()
    read = []
    monkeypatch.setattr(secrets_cache, "get_json_secret",
                        lambda secret_id, real=secrets_cache.get_json_secret, **kw: read.append(secret_id)
                        or real(secret_id, **kw))
    overlapped = []
    monkeypatch.setattr(parallel, "both", lambda first, second, real=parallel.both:
                        overlapped.append(first.__qualname__) or real(first, second))
    with DynamoCalls(stack) as calls:
        reply = projects_with(key)
    assert reply.status == 200, reply
    assert settings().signing_keys_secret_id not in read
    assert [q for q in overlapped if q.startswith("_load.")] == ["_load.<locals>.<lambda>"]  # touch with policy read
    assert calls.on(settings().api_keys_table) == ["GetItem", "TransactWriteItems", "TransactWriteItems"]  # last use
    assert calls.on(settings().tenants_table) == ["GetItem"]       # read once, then from the cache


def test_a_keys_last_use_is_written_only_when_the_one_recorded_is_old_enough(stack, monkeypatch):
    """A container's first request of a key writes its last use unless the key's record says it
    was written less than LAST_USED_STEP ago (by any container)."""
    from svc_core.auth import authenticate, tenant_policy
    from svc_core.data import api_keys_table
    clock = Clock(monkeypatch)
    tenant = stack.new_tenant()
    made = stack.new_key(tenant)
    key = made["key"]

    def first_request_writes() -> bool:
        authenticate._key_cache.clear()  # as a new container
        tenant_policy.forget()
        with DynamoCalls(stack) as calls:
            assert projects_with(key).status == 200
        return "TransactWriteItems" in calls.on(settings().api_keys_table)

    assert first_request_writes()
    written = int(clock.value)
    clock.travel(api_keys_table.LAST_USED_STEP - 1)
    assert not first_request_writes()
    assert api_keys_table.get(tenant, made["id"])["lastUsedAt"] == written
    clock.travel(1)
    assert first_request_writes()
    assert api_keys_table.get(tenant, made["id"])["lastUsedAt"] == written + api_keys_table.LAST_USED_STEP
    principal = next(cached.principal for (_function, hashed), cached in authenticate._key_cache.items()
                     if hashed == authenticate.hash_key(key))
    assert (principal.tenant_id, principal.credential) == (tenant, "api_key")
    assert principal.scopes and principal.subject.startswith("key_")

# ---- service JWTs --------------------------------------------------------------------------

def test_a_valid_service_jwt_is_accepted_and_scoped_to_its_tenant(stack):
    tenant, key = stack.tenant_with_key()
    other, other_key = stack.tenant_with_key()
    made = call("projects", "Projects-CreateProject", token=key, body={"name": "Mine"}).data
    call("projects", "Projects-CreateProject", token=other_key, body={"name": "Theirs"})
    token, lifetime = tokens.mint(subject="usr_alice", tenant_id=tenant, scopes=READ, credential="user")
    assert lifetime == 900
    listed = projects_with(token)
    assert listed.status == 200, listed
    assert [p["id"] for p in listed.data["items"]] == [made["id"]]
    denied = call("projects", "Projects-CreateProject", token=token, body={"name": "No"})
    assert denied.status == 403 and denied.error["details"]["requiredScope"] == "projects:write"
    # the tenant comes only from the token: a tenant header changes nothing
    switched = projects_with(token, headers={"X-Tenant-Id": other})
    assert [p["id"] for p in switched.data["items"]] == [made["id"]]


def test_a_hand_signed_token_with_correct_claims_is_accepted(stack):
    """The control of the attacks below: the helpers make tokens the service accepts."""
    tenant, _ = stack.tenant_with_key()
    assert projects_with(signed(service_claims(tenant, READ))).status == 200


ALG_NONE = ["none", "None", "NONE", "nOnE"]


@pytest.mark.parametrize("alg", ALG_NONE)
def test_alg_none_in_any_spelling_is_401(stack, alg):
    tenant, _ = stack.tenant_with_key()
    kid = signing_keys.current().active_kid
    claims = service_claims(tenant, READ)
    assert_401(projects_with(unsigned({"alg": alg, "typ": "at+jwt", "kid": kid}, claims)))
    assert_401(projects_with(unsigned({"alg": alg, "typ": "at+jwt"}, claims)))
    # an ES256 signature pasted under alg none is no better
    real = signed(claims)
    assert_401(projects_with(f"{unsigned({'alg': alg, 'typ': 'at+jwt', 'kid': kid}, claims)}{real.split('.')[2]}"))


@pytest.mark.parametrize("header_extra", [{}, {"typ": "at+jwt"}])
def test_hs256_signed_with_the_public_key_is_401(stack, header_extra):
    tenant, _ = stack.tenant_with_key()
    kid = signing_keys.current().active_kid
    pem = active_public_pem()
    claims = service_claims(tenant, READ)
    for secret in (pem, pem.strip()):
        assert_401(projects_with(hs256({"alg": "HS256", "kid": kid, **header_extra}, claims, secret)))


def _attacks(tenant: str) -> dict[str, str]:
    other_key = ec.generate_private_key(ec.SECP256R1())
    valid = tokens.mint(subject="usr_x", tenant_id=tenant, scopes=READ, credential="user")[0]
    return {
        "unknown_kid": signed(service_claims(tenant, READ), kid="sig_doesnotexist", private=other_key),
        "right_kid_wrong_key": signed(service_claims(tenant, READ), private=other_key),
        "wrong_iss": signed(service_claims(tenant, READ, iss="https://evil.example")),
        "wrong_aud": signed(service_claims(tenant, READ, aud="another-api")),
        "no_aud": signed(service_claims(tenant, READ, aud=None)),
        "missing_typ": signed(service_claims(tenant, READ), typ=None),
        "typ_jwt": signed(service_claims(tenant, READ), typ="JWT"),
        "typ_id_token": signed(service_claims(tenant, READ), typ="id+jwt"),
        "missing_tid": signed(service_claims(tenant, READ, tid=None)),
        "missing_scopes": signed(service_claims(tenant, READ, scopes=None)),
        "tid_not_a_string": signed(service_claims(tenant, READ, tid=["ten_a", "ten_b"])),
        "scopes_not_a_list": signed(service_claims(tenant, READ, scopes="projects:read")),
        "missing_exp": signed(service_claims(tenant, READ, exp=None)),
        "missing_jti": signed(service_claims(tenant, READ, jti=None)),
        "exp_not_a_number": signed(service_claims(tenant, READ, exp="tomorrow")),
        "not_yet_valid": signed(service_claims(tenant, READ, nbf=int(payload_of(valid)["iat"]) + 3600)),
        "tampered_scopes": with_payload(valid, {**payload_of(valid), "scopes": ["projects:read", "projects:write"]}),
        "tampered_tenant": with_payload(valid, {**payload_of(valid), "tid": "ten_01J00000000000000000000000"}),
        "signature_stripped": valid.rsplit(".", 1)[0] + ".",
        "garbage": "not-a-jwt",
        "two_parts": ".".join(valid.split(".")[:2]),
        "high_s_signature": high_s(valid),
        "signature_too_long": f"{valid}AAAA",
    }


ATTACKS = ["unknown_kid", "right_kid_wrong_key", "wrong_iss", "wrong_aud", "no_aud", "missing_typ", "typ_jwt",
           "typ_id_token", "missing_tid", "missing_scopes", "tid_not_a_string", "scopes_not_a_list",
           "missing_exp", "missing_jti", "exp_not_a_number", "not_yet_valid", "tampered_scopes",
           "tampered_tenant", "signature_stripped", "garbage", "two_parts", "high_s_signature", "signature_too_long"]


@pytest.mark.parametrize("attack", ATTACKS)
def test_jwt_attacks_are_401(stack, attack):
    tenant, _ = stack.tenant_with_key()
    attacks = _attacks(tenant)
    assert sorted(attacks) == sorted(ATTACKS)
    assert_401(projects_with(attacks[attack]))


def test_the_high_s_twin_of_a_valid_signature_is_401_though_ecdsa_accepts_it(stack):
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
    tenant, _ = stack.tenant_with_key()
    valid = tokens.mint(subject="usr_x", tenant_id=tenant, scopes=READ, credential="user")[0]
    twin = high_s(valid)
    public = signing_keys.current().public[signing_keys.current().active_kid]
    for token in (valid, twin):  # both verify mathematically: the twin is no forgery, only malleated
        signing_input, _, signature = token.rpartition(".")
        raw = jwt.utils.base64url_decode(signature)
        public.verify(encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")),
                      signing_input.encode(), ec.ECDSA(hashes.SHA256()))
    assert projects_with(valid).status == 200
    refused = projects_with(twin)
    assert_401(refused)
    assert "low-s" in refused.error["message"]


def test_an_expired_token_is_401(stack, monkeypatch):
    tenant, _ = stack.tenant_with_key()
    clock = Clock(monkeypatch)
    clock.travel(-3600)
    old, _ = tokens.mint(subject="usr_x", tenant_id=tenant, scopes=READ, credential="user")
    clock.travel(900 + 10)  # 10 s after its exp, past the 5 s leeway
    reply = projects_with(old)
    assert_401(reply)
    assert "expired" in reply.error["message"]
    clock.travel(-20)  # 10 s before exp: still good, so it was the time that failed it
    assert projects_with(old).status == 200


# ---- signing-key rotation ------------------------------------------------------------------

def test_a_rotated_key_keeps_verifying_until_retired(stack):
    tenant, _ = stack.tenant_with_key()
    old_kid = signing_keys.current().active_kid
    old_token, _ = tokens.mint(subject="usr_x", tenant_id=tenant, scopes=READ, credential="user")
    assert jwt.get_unverified_header(old_token)["kid"] == old_kid

    document = signing_keys.rotated(signing_document(stack))
    put_signing_document(stack, document)
    new_kid = next(k["kid"] for k in document["keys"] if k["status"] == "active")
    assert new_kid != old_kid
    new_token, _ = tokens.mint(subject="usr_x", tenant_id=tenant, scopes=READ, credential="user")
    assert jwt.get_unverified_header(new_token)["kid"] == new_kid
    assert projects_with(old_token).status == 200
    assert projects_with(new_token).status == 200
    assert {k["kid"] for k in call("meta", "Meta-Jwks").json["keys"]} == {old_kid, new_kid}

    for entry in document["keys"]:
        if entry["kid"] == old_kid:
            entry["status"] = "retired"
    put_signing_document(stack, document)
    assert_401(projects_with(old_token))
    assert projects_with(new_token).status == 200
    assert {k["kid"] for k in call("meta", "Meta-Jwks").json["keys"]} == {new_kid}


def test_every_rotation_is_picked_up_for_signing(stack):
    """Each new key set read from Secrets Manager is parsed anew (no stale parsed copy)."""
    tenant, _ = stack.tenant_with_key()
    for _ in range(6):
        document = signing_keys.rotated(signing_document(stack))
        document["keys"] = [k for k in document["keys"] if k["status"] == "active"] + [
            dict(k, status="retired") for k in document["keys"] if k["status"] != "active"]
        put_signing_document(stack, document)
        token, _ = tokens.mint(subject="usr_x", tenant_id=tenant, scopes=READ, credential="user")
        assert jwt.get_unverified_header(token)["kid"] == document["keys"][0]["kid"]
        assert projects_with(token).status == 200


# ---- the JWKS ------------------------------------------------------------------------------

def test_the_jwks_is_public_bare_and_verifies_service_tokens(stack):
    tenant, key = stack.tenant_with_key()
    for headers in ({}, {"Authorization": "Bearer not-even-a-token"}):
        reply = call("meta", "Meta-Jwks", headers=headers)
        assert reply.status == 200, reply
        assert set(reply.json) == {"keys"} and reply.json["keys"]
        assert not any(h.startswith("x-ratelimit") for h in reply.headers)
        assert reply.headers["x-request-id"]
    token, _ = tokens.mint(subject="usr_x", tenant_id=tenant, scopes=READ, credential="user")
    kid = jwt.get_unverified_header(token)["kid"]
    for entry in reply.json["keys"]:
        assert entry["kty"] == "EC" and entry["crv"] == "P-256" and entry["alg"] == "ES256" and entry["kid"]
        assert "d" not in entry  # never the private part
    entry = next(k for k in reply.json["keys"] if k["kid"] == kid)
    claims = jwt.decode(token, jwt.PyJWK(entry).key, algorithms=["ES256"], audience=settings().jwt_audience)
    assert claims["tid"] == tenant and claims["iss"] == settings().jwt_issuer


# ---- the Authorization header --------------------------------------------------------------

@pytest.mark.parametrize("headers", [
    {}, {"Authorization": ""}, {"Authorization": "Basic dXNlcjpwYXNzd29yZA=="}, {"Authorization": "Bearer"},
    {"Authorization": "Bearer    "}, {"Authorization": "Token {key}"}, {"Authorization": "{key}"},
    {"Authorization": "Basic {key}"},
])
def test_authorization_headers_that_are_refused(stack, headers):
    _, key = stack.tenant_with_key()
    headers = {k: v.format(key=key) for k, v in headers.items()}
    assert_401(projects_with(headers=headers))


@pytest.mark.parametrize("header", ["bearer {key}", "BEARER {key}", "Bearer {key}", "  Bearer   {key}  "])
def test_the_bearer_scheme_is_case_insensitive(stack, header):
    _, key = stack.tenant_with_key()
    assert projects_with(headers={"Authorization": header.format(key=key)}).status == 200
    assert projects_with(headers={"authorization": header.format(key=key)}).status == 200
