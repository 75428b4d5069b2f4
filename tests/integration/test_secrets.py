"""Tenant secrets end to end: the handler fed real API Gateway events, on the moto server
(DynamoDB and KMS).

Metadata in every answer and never the value; values stored only sealed, opening for their own
tenant, secret and version only; sizes counted in UTF-8 bytes; bad input and duplicate names
refused naming the field with nothing stored; another tenant's ids and credentials answered
as missing on every endpoint; no value in any log line.
"""

from __future__ import annotations

import base64
import json
import re
import sys

import pytest

from svc_core.contracts.cursors import id_cursor
from tests.support.functions import call
from tests.support.projects import assert_envelope, assert_error
from tests.support.stack import provisioned_stack

SECRET_ID = re.compile(r"^sec_[0-9A-HJKMNP-TV-Z]{26}$")
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
FIELDS = {"id", "name", "description", "version", "created_at", "updated_at"}
MISSING_ID = "sec_01JD2Q7ZB6V8S3K4X9W2M5N7PA"
LIMIT = 16384   # characters of a value


@pytest.fixture(scope="module")
def stack(emulator):
    yield from provisioned_stack(emulator)


@pytest.fixture(scope="module")
def kept(stack) -> dict:
    """A tenant with one secret, shared by the tests of refused requests (each checks that its
    request changed nothing of it)."""
    tenant, key = stack.tenant_with_key()
    return {"tenant": tenant, "key": key, "secret": made(key, name="KEPT", value="v1")}


# ---- calling the service -----------------------------------------------------------------

def api(event: str, token: str, **kwargs):
    return call("secrets", f"Secrets-{event}", token=token, **kwargs)


def create(token, **body):
    return api("CreateSecret", token, body=body)


def made(token, **body) -> dict:
    reply = create(token, **body)
    assert reply.status == 201, reply
    return reply.data


def get(token, secret_id):
    return api("GetSecret", token, path_params={"id": secret_id})


def patch(token, secret_id, body=None, **kwargs):
    return api("UpdateSecret", token, path_params={"id": secret_id}, body=body, **kwargs)


def delete(token, secret_id):
    return api("DeleteSecret", token, path_params={"id": secret_id})


def listed(token, **query):
    return api("ListSecrets", token, query={k: str(v) for k, v in query.items()} or None)


def fields_of(reply) -> list[dict]:
    return assert_error(reply, 400, "VALIDATION_ERROR")["fields"]


def items(tenant_id: str) -> list[dict]:
    """Every item of a tenant in the secrets table, as stored."""
    from svc_core.adapters import aws
    from svc_core.platform.config import settings
    pages = aws.client("dynamodb").get_paginator("query").paginate(
        TableName=settings().secrets_table, ConsistentRead=True, KeyConditionExpression="tenantId = :t",
        ExpressionAttributeValues={":t": {"S": tenant_id}})
    return [i for page in pages for i in page["Items"]]


def snapshot(*tenant_ids: str) -> list[str]:
    return sorted(json.dumps(i, sort_keys=True) for t in tenant_ids for i in items(t))


def reveal(tenant_id: str, name_or_id: str) -> str:
    from svc_core.domain import tenant_secrets
    return tenant_secrets.reveal(tenant_id, name_or_id)


def user_token(tenant_id: str, role: str) -> str:
    from svc_core.auth import tokens
    from svc_core.auth.roles import ROLE_SCOPES
    from svc_core.platform import ids
    token, _ = tokens.mint(subject=ids.new_id("usr"), tenant_id=tenant_id, scopes=ROLE_SCOPES[role],
                           credential="user")
    return token


# ---- the life of a secret ----------------------------------------------------------------

def test_create_read_list_update_delete_answer_metadata_only(stack):
    tenant, key = stack.tenant_with_key()
    value, newer = "sk-live-" + "a1" * 20, "sk-live-" + "b2" * 20
    reply = create(key, name="OPENAI_API_KEY", value=value, description="for the agents")
    assert reply.status == 201, reply
    assert_envelope(reply)
    secret = reply.data
    assert set(secret) == FIELDS and SECRET_ID.match(secret["id"])
    assert (secret["name"], secret["description"], secret["version"]) == ("OPENAI_API_KEY", "for the agents", 1)
    assert ISO_UTC.match(secret["created_at"]) and secret["updated_at"] == secret["created_at"]
    assert get(key, secret["id"]).data == secret
    assert listed(key).data == {"items": [secret], "nextCursor": None}

    described = patch(key, secret["id"], {"description": None})
    assert described.status == 200, described
    assert described.data["description"] is None and described.data["version"] == 1
    assert described.data["updated_at"] > secret["updated_at"]
    assert reveal(tenant, secret["id"]) == value

    renewed = patch(key, secret["id"], {"value": newer, "description": "rotated"})
    assert renewed.status == 200, renewed
    assert renewed.data["version"] == 2 and renewed.data["description"] == "rotated"
    assert renewed.data["created_at"] == secret["created_at"] and renewed.data["name"] == secret["name"]
    assert get(key, secret["id"]).data == renewed.data
    assert reveal(tenant, secret["id"]) == newer and reveal(tenant, "openai_api_key") == newer

    deleted = delete(key, secret["id"])
    assert deleted.status == 200 and deleted.data == {"id": secret["id"], "deleted": True}
    assert_error(get(key, secret["id"]), 404, "RESOURCE_NOT_FOUND")
    assert listed(key).data == {"items": [], "nextCursor": None}
    assert items(tenant) == []  # the secret and its name claim
    assert made(key, name="openai_api_key", value="v1")["version"] == 1  # the name is free again
    for text in (described.text, renewed.text, deleted.text, reply.text):
        assert value not in text and newer not in text and "sealed" not in text


def test_the_table_holds_ciphertext_that_opens_only_for_its_tenant_secret_and_version(stack):
    from svc_core.adapters import aws, sealing
    from svc_core.domain import tenant_secrets
    from svc_core.platform.config import settings
    tenant, key = stack.tenant_with_key()
    other_tenant, other_key = stack.tenant_with_key()
    value = "correct horse battery staple"
    secret = made(key, name="DB_PASSWORD", value=value)
    first = [i for i in items(tenant) if i["sk"]["S"].startswith("SECRET#")][0]
    assert patch(key, secret["id"], {"value": value + "!"}).status == 200
    stored = items(tenant)
    assert sorted(i["sk"]["S"] for i in stored) == ["NAME#db_password", f"SECRET#{secret['id']}"]
    raw = json.dumps(stored)
    assert value not in raw and base64.b64encode(value.encode()).decode() not in raw
    [current] = [i for i in stored if i["sk"]["S"].startswith("SECRET#")]
    sealed = {k: v["S"] for k, v in current["sealed"]["M"].items()}
    assert sealed["alg"] == sealing.ALGORITHM

    own = {"purpose": "tenant-secret", "tenantId": tenant, "secretId": secret["id"], "version": "2"}
    assert sealing.unseal(sealed, own).decode() == value + "!"
    kms = aws.client("kms")
    for wrong in ({**own, "tenantId": other_tenant}, {**own, "secretId": MISSING_ID}, {**own, "version": "1"},
                  {k: v for k, v in own.items() if k != "purpose"}):
        with pytest.raises(sealing.Unsealable):
            sealing.unseal(sealed, wrong)
        with pytest.raises(Exception) as refused:
            kms.decrypt(CiphertextBlob=base64.b64decode(sealed["encryptedKey"]), EncryptionContext=wrong)
        assert aws.error_code(refused.value) == "InvalidCiphertextException"

    # Copied into another tenant's secret, or an old version put back: it does not open.
    theirs = made(other_key, name="DB_PASSWORD", value="theirs")
    ddb = aws.client("dynamodb")
    ddb.update_item(TableName=settings().secrets_table,
                    Key={"tenantId": {"S": other_tenant}, "sk": {"S": f"SECRET#{theirs['id']}"}},
                    UpdateExpression="SET sealed = :s", ExpressionAttributeValues={":s": current["sealed"]})
    with pytest.raises(sealing.Unsealable):
        reveal(other_tenant, theirs["id"])
    ddb.update_item(TableName=settings().secrets_table, Key={"tenantId": current["tenantId"], "sk": current["sk"]},
                    UpdateExpression="SET sealed = :s", ExpressionAttributeValues={":s": first["sealed"]})
    with pytest.raises(sealing.Unsealable):
        reveal(tenant, secret["id"])
    # reveal finds nothing of another tenant's, by id or by name.
    from svc_core.platform.errors import NotFound
    for name_or_id in (secret["id"], "db_password", "no_such_name", "not a name", "sec_x"):
        with pytest.raises(NotFound):
            tenant_secrets.reveal(stack.new_tenant(), name_or_id)


# ---- sizes and bad input -----------------------------------------------------------------

@pytest.mark.parametrize("value", [
    "ab" * (LIMIT // 2),               # 16,384 one-byte characters
    "éè" * (LIMIT // 2),               # two bytes each
    "€" * (LIMIT - 1) + "a",           # three bytes each, and one
    "😀😁" * (LIMIT // 2),             # four bytes each: 64 KiB of UTF-8
    "x",                               # one character is enough
    "a" * 40,                          # repeated characters are a value like any other
], ids=["ascii", "2-byte", "3-byte", "4-byte", "one-character", "one-repeated"])
def test_a_value_of_up_to_16384_characters_is_kept_exactly(stack, value):
    assert len(value) <= LIMIT
    tenant, key = stack.tenant_with_key()
    secret = made(key, name="BIG", value=value)
    assert reveal(tenant, secret["id"]) == value
    assert patch(key, secret["id"], {"value": value[::-1]}).status == 200
    assert reveal(tenant, "big") == value[::-1]


def test_the_largest_value_escaped_as_far_as_json_goes_fits_the_body_limit(stack):
    """16,384 characters of four UTF-8 bytes, each sent as a \\uXXXX\\uXXXX pair (12 bytes): the
    largest body the document allows is still under 256 KiB, so never 413."""
    tenant, key = stack.tenant_with_key()
    value = "\U0001F600" * LIMIT
    raw = json.dumps({"name": "N" * 128, "value": value, "description": "\U0001F600" * 500}, ensure_ascii=True)
    assert len(raw) > 190_000
    reply = api("CreateSecret", key, raw_body=raw)
    assert reply.status == 201, reply
    assert reveal(tenant, reply.data["id"]) == value


@pytest.mark.parametrize("value, reason", [
    ("\u3000 " * 8, "is blank"), ("\t\r\n\ufeff\x85", "is blank"),
    # The body parser refuses a NUL anywhere before the secret's own rule is reached.
    ("\x00" * 32, "NUL"), (" \x00\n\x00\t ", "NUL")],
    ids=["whitespace", "other-blanks", "nul-bytes", "nul-and-whitespace"])
def test_a_blank_value_is_400_on_value_and_stores_nothing(kept, value, reason):
    before = snapshot(kept["tenant"])
    for reply in (create(kept["key"], name="PLACEHOLDER", value=value),
                  patch(kept["key"], kept["secret"]["id"], {"value": value})):
        [problem] = fields_of(reply)
        assert problem["field"] == "value" and reason in problem["reason"], reply
    assert snapshot(kept["tenant"]) == before


@pytest.mark.parametrize("value", [
    "a" * (LIMIT + 1),
    "é" * LIMIT + "a",
    "😀" * (LIMIT + 1),
], ids=["ascii", "2-byte", "4-byte"])
def test_a_value_over_16384_characters_is_400_on_value_and_stores_nothing(kept, value):
    before = snapshot(kept["tenant"])
    for reply in (create(kept["key"], name="TOO_BIG", value=value),
                  patch(kept["key"], kept["secret"]["id"], {"value": value})):
        [problem] = fields_of(reply)
        assert problem["field"] == "value" and problem["in"] == "body"
        assert value[:64] not in reply.text
    assert snapshot(kept["tenant"]) == before


@pytest.mark.parametrize("body,field", [
    ({"value": "v1"}, "name"),
    ({"name": "A"}, "value"),
    ({"name": "", "value": "v1"}, "name"),
    ({"name": "1ABC", "value": "v1"}, "name"),
    ({"name": "-ABC", "value": "v1"}, "name"),
    ({"name": "MY KEY", "value": "v1"}, "name"),
    ({"name": "a/b", "value": "v1"}, "name"),
    ({"name": "clé", "value": "v1"}, "name"),
    ({"name": "ABC\n", "value": "v1"}, "name"),
    ({"name": "A" * 129, "value": "v1"}, "name"),
    ({"name": 5, "value": "v1"}, "name"),
    ({"name": "A", "value": ""}, "value"),
    ({"name": "A", "value": 123}, "value"),
    ({"name": "A", "value": None}, "value"),
    ({"name": "A", "value": "v1", "description": "d" * 501}, "description"),
    ({"name": "A", "value": "v1", "description": 1}, "description"),
    ({"name": "A", "value": "v1", "version": 3}, "version"),
    ({"name": "A", "value": "v1", "id": MISSING_ID}, "id"),
])
def test_bad_create_bodies_are_400_naming_the_field_and_store_nothing(kept, body, field):
    before = snapshot(kept["tenant"])
    reply = create(kept["key"], **body)
    assert field in [f["field"] for f in fields_of(reply)], reply
    assert snapshot(kept["tenant"]) == before


def test_names_and_descriptions_at_their_limits_are_accepted(stack):
    _, key = stack.tenant_with_key()
    for name in ("A" * 128, "_", "a.b-c_D9", "x"):
        assert made(key, name=name, value="v1", description="d" * 500)["name"] == name


@pytest.mark.parametrize("body,field", [
    ({}, "body"),
    ({"name": "RENAMED"}, "name"),
    ({"value": None}, "value"),
    ({"value": ""}, "value"),
    ({"description": "d" * 501}, "description"),
    ({"value": "v1", "version": 7}, "version"),
])
def test_bad_patch_bodies_are_400_and_change_nothing(kept, body, field):
    before = snapshot(kept["tenant"])
    reply = patch(kept["key"], kept["secret"]["id"], body)
    assert field in [f["field"] for f in fields_of(reply)], reply
    assert snapshot(kept["tenant"]) == before


def test_a_lone_surrogate_is_400_not_a_server_error(kept):
    before = snapshot(kept["tenant"])
    for raw, field in (('{"name": "A", "value": "x\\ud800y"}', "value"),
                       ('{"name": "A", "value": "v1", "description": "\\udfff"}', "description")):
        assert field in [f["field"] for f in fields_of(api("CreateSecret", kept["key"], raw_body=raw))]
    assert field in [f["field"] for f in fields_of(api("UpdateSecret", kept["key"], raw_body=raw,
                                                       path_params={"id": kept["secret"]["id"]}))]
    assert snapshot(kept["tenant"]) == before


def conflict_fields(reply) -> list[dict]:
    return assert_error(reply, 409, "CONFLICT")["fields"]


def test_a_name_already_used_in_the_tenant_whatever_its_case_is_409_and_changes_nothing(stack):
    tenant, key = stack.tenant_with_key()
    _, other_key = stack.tenant_with_key()
    kept = made(key, name="Stripe_Key", value="first")
    before = snapshot(tenant)
    for name in ("Stripe_Key", "STRIPE_KEY", "stripe_key"):
        reply = create(key, name=name, value="second", description="dup")
        assert conflict_fields(reply) == [{"field": "name", "in": "body", "reason": "already used"}]
        assert "first" not in reply.text and "second" not in reply.text
    assert snapshot(tenant) == before
    assert reveal(tenant, "stripe_key") == "first" and listed(key).data["items"] == [kept]
    assert made(other_key, name="STRIPE_KEY", value="theirs")["name"] == "STRIPE_KEY"  # per tenant


def test_two_creates_racing_for_one_name_store_one_secret(stack, monkeypatch):
    from svc_core.data import secrets_table
    tenant, key = stack.tenant_with_key()
    real_create = secrets_table.create

    def other_request_first(tenant_id, record, **options):
        # Another create of the same name commits between this one's check and its write.
        real_create(tenant_id, {**record, "id": "sec_01JD2Q7ZB6V8S3K4X9W2M5N7PB", "name": record["name"].upper()})
        real_create(tenant_id, record, **options)

    monkeypatch.setattr(secrets_table, "create", other_request_first)
    reply = create(key, name="token", value="mine")
    assert conflict_fields(reply) == [{"field": "name", "in": "body", "reason": "already used"}]
    assert sorted(i["sk"]["S"] for i in items(tenant)) == ["NAME#token", "SECRET#sec_01JD2Q7ZB6V8S3K4X9W2M5N7PB"]


def test_a_lost_update_is_409_and_leaves_the_concurrent_version(stack, monkeypatch):
    from svc_core.data import secrets_table
    tenant, key = stack.tenant_with_key()
    secret = made(key, name="ROTATED", value="v1")
    real_replace = secrets_table.replace
    seen = {}

    def concurrent_patch_first(tenant_id, record, seen_version, seen_updated_at, **options):
        if not seen:
            seen["winner"] = None  # the concurrent request itself goes straight through
            seen["winner"] = patch(key, secret["id"], {"value": "winner"})
        return real_replace(tenant_id, record, seen_version, seen_updated_at, **options)

    monkeypatch.setattr(secrets_table, "replace", concurrent_patch_first)
    loser = patch(key, secret["id"], {"value": "loser"})
    assert seen["winner"].status == 200 and seen["winner"].data["version"] == 2
    assert assert_error(loser, 409, "CONFLICT")["id"] == secret["id"]
    assert get(key, secret["id"]).data == seen["winner"].data
    assert reveal(tenant, secret["id"]) == "winner"


# ---- lists -------------------------------------------------------------------------------

def test_the_list_pages_newest_first_and_refuses_a_cursor_off_the_pattern(stack):
    _, key = stack.tenant_with_key()
    ids = [made(key, name=f"S{i}", value=f"v{i}")["id"] for i in range(3)]
    first = listed(key, limit=2)
    assert [s["id"] for s in first.data["items"]] == ids[:0:-1] and first.data["nextCursor"]
    second = listed(key, limit=2, cursor=first.data["nextCursor"])
    assert [s["id"] for s in second.data["items"]] == ids[:1] and second.data["nextCursor"] is None
    for cursor in ("bm90LWEtY3Vyc29y", base64.urlsafe_b64encode(b'{"after":"proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA"}')
                   .decode().rstrip("=")):
        assert [f["field"] for f in fields_of(listed(key, cursor=cursor))] == ["cursor"]
    for limit in (0, 101):
        assert_error(listed(key, limit=limit), 400, "VALIDATION_ERROR")


# ---- tenants, scopes, methods ------------------------------------------------------------

def test_another_tenants_secret_is_exactly_a_missing_one_on_every_endpoint(stack):
    tenant_a, key_a = stack.tenant_with_key()
    tenant_b, key_b = stack.tenant_with_key()
    theirs = made(key_a, name="A_SECRET", value="a-value", description="private")
    mine = made(key_b, name="B_SECRET", value="b-value")
    before = snapshot(tenant_a, tenant_b)
    attempts = (lambda sid: get(key_b, sid), lambda sid: patch(key_b, sid, {"value": "hijacked"}),
                lambda sid: patch(key_b, sid, {"description": "hijacked"}), lambda sid: delete(key_b, sid))
    for attempt in attempts:
        foreign, missing = attempt(theirs["id"]), attempt(MISSING_ID)
        assert assert_error(foreign, 404, "RESOURCE_NOT_FOUND") == {"id": theirs["id"], "resource": "secret"}
        assert json.loads(json.dumps(missing.error).replace(MISSING_ID, theirs["id"])) == foreign.error
        assert "A_SECRET" not in foreign.text and "private" not in foreign.text
    assert snapshot(tenant_a, tenant_b) == before
    assert listed(key_b).data["items"] == [mine]
    # A's secret is only a position in B's list (B's own, older ones follow: none); the last position, all of B's.
    assert listed(key_b, cursor=id_cursor(theirs["id"])).data["items"] == []
    assert listed(key_b, cursor=id_cursor("sec_7" + "Z" * 25)).data["items"] == [mine]
    # The same name is B's own to use; A's secret is untouched.
    assert made(key_b, name="A_SECRET", value="b-too")["name"] == "A_SECRET"
    assert get(key_a, theirs["id"]).data == theirs and reveal(tenant_a, "a_secret") == "a-value"
    assert reveal(tenant_b, "a_secret") == "b-too"


@pytest.mark.parametrize("bad_id", ["sec_123", "proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA", "..%2F..", "SEC_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
def test_a_malformed_id_is_404_with_that_id(stack, bad_id):
    _, key = stack.tenant_with_key()
    for reply in (get(key, bad_id), patch(key, bad_id, {"description": "x"}), delete(key, bad_id)):
        assert assert_error(reply, 404, "RESOURCE_NOT_FOUND")["id"] == bad_id


def test_scopes_read_and_write_and_the_roles(stack):
    tenant, key = stack.tenant_with_key()
    secret = made(key, name="SCOPED", value="v1")
    reader = stack.new_key(tenant, ["secrets:read"])["key"]
    writer = stack.new_key(tenant, ["secrets:write"])["key"]
    member, admin = user_token(tenant, "member"), user_token(tenant, "admin")
    before = snapshot(tenant)
    for token in (reader, member):
        for reply in (create(token, name="X", value="v1"), patch(token, secret["id"], {"value": "x1"}),
                      delete(token, secret["id"])):
            assert assert_error(reply, 403, "FORBIDDEN")["requiredScope"] == "secrets:write"
        assert get(token, secret["id"]).data == secret and listed(token).status == 200
    for reply in (get(writer, secret["id"]), get(writer, MISSING_ID), listed(writer)):
        assert assert_error(reply, 403, "FORBIDDEN")["requiredScope"] == "secrets:read"
    assert snapshot(tenant) == before
    assert patch(writer, secret["id"], {"description": "by the writer"}).status == 200
    assert patch(admin, secret["id"], {"value": "by an admin"}).data["version"] == 2
    assert_error(listed(stack.new_key(tenant, ["projects:read"])["key"]), 403, "FORBIDDEN")
    assert_error(listed("svc_sdk_notakey"), 401, "UNAUTHORIZED")


def test_other_methods_are_405(stack):
    _, key = stack.tenant_with_key()
    secret = made(key, name="M", value="v1")
    reply = api("GetSecret", key, path_params={"id": secret["id"]}, method="PUT", body={"value": "x1"})
    assert assert_error(reply, 405, "METHOD_NOT_ALLOWED")["allowed"] == ["DELETE", "GET", "PATCH"]
    reply = api("ListSecrets", key, method="DELETE")
    assert assert_error(reply, 405, "METHOD_NOT_ALLOWED")["allowed"] == ["GET", "POST"]
    assert reply.headers["allow"] == "GET, POST"


# ---- logs --------------------------------------------------------------------------------

class _CurrentStdout:
    def write(self, text: str) -> int:
        return sys.stdout.write(text)

    def flush(self) -> None:
        sys.stdout.flush()


def test_no_value_reaches_a_response_or_a_log_line(stack, monkeypatch, capsys, caplog):
    from svc_core.data import secrets_table
    from svc_core.platform.log import logger
    monkeypatch.setattr(logger.registered_handler, "stream", _CurrentStdout())
    capsys.readouterr()
    tenant, key = stack.tenant_with_key()
    values = [f"plain-{n}-Zq8xW3" for n in range(6)]
    replies = []
    secret = made(key, name="LOGGED", value=values[0], description="seen in logs")
    replies += [get(key, secret["id"]), listed(key), patch(key, secret["id"], {"value": values[1]}),
                create(key, name="LOGGED", value=values[2]),                      # duplicate name
                create(key, name="bad name", value=values[3]),                    # bad name
                create(key, name="BIG", value=values[4] * 2000),                  # too large
                patch(key, secret["id"], {"value": values[5], "name": "X"})]       # unknown field
    assert [r.status for r in replies] == [200, 200, 200, 409, 400, 400, 400]

    def fail(*_args, **_kwargs):
        raise RuntimeError("the store failed")
    monkeypatch.setattr(secrets_table, "replace", fail)
    replies.append(patch(key, secret["id"], {"value": values[0] + "-again"}))
    assert replies[-1].status == 500
    assert reveal(tenant, "logged") == values[1]
    delete(key, secret["id"])
    out = capsys.readouterr()
    logged = out.out + out.err + caplog.text
    lines = [json.loads(line) for line in out.out.splitlines() if line.startswith("{")]
    assert sum(1 for line in lines if line["message"] == "request") >= 10  # the handlers did log
    assert any(line["message"] == "unhandled error" and "the store failed" in line["exception"] for line in lines)
    for value in values:
        assert value not in logged
        assert all(value not in r.text for r in replies)

