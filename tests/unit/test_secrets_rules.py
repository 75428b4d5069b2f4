"""Tenant secrets without AWS: the body rules (sizes in UTF-8 bytes, names) and the domain over an
in-memory table, with a local stand-in for KMS that binds the same encryption context."""

from __future__ import annotations

import copy
import json

import pytest
from pydantic import ValidationError

from svc_core.adapters import sealing
from svc_core.auth.context import TenantContext
from svc_core.auth.principal import Principal
from svc_core.data.common import ConditionFailed
from svc_core.domain import tenant_secrets
from svc_core.domain.models.secrets import SecretCreate, SecretUpdate
from svc_core.platform.errors import Conflict, NotFound


def ctx(tenant="ten_A"):
    principal = Principal(subject="key_x", tenant_id=tenant, scopes=frozenset({"secrets:read", "secrets:write"}),
                          credential="api_key", token_id="jti")
    return TenantContext(tenant_id=tenant, principal=principal, request_id="req")


class MemorySecrets:
    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], dict] = {}

    def get(self, tenant_id, secret_id):
        row = self.rows.get((tenant_id, "SECRET#" + secret_id))
        return copy.deepcopy(row) if row else None

    def id_of_name(self, tenant_id, name):
        row = self.rows.get((tenant_id, "NAME#" + name.lower()))
        return row["secretId"] if row else None

    def create(self, tenant_id, record, answer=None, also=()):
        if (tenant_id, "NAME#" + record["name"].lower()) in self.rows:
            raise ConditionFailed()
        self.rows[(tenant_id, "SECRET#" + record["id"])] = copy.deepcopy(record)
        self.rows[(tenant_id, "NAME#" + record["name"].lower())] = {"secretId": record["id"]}

    def replace(self, tenant_id, record, seen_version, seen_updated_at, also=()):
        current = self.rows.get((tenant_id, "SECRET#" + record["id"]))
        if not current or (current["version"], current["updated_at"]) != (seen_version, seen_updated_at):
            raise ConditionFailed()
        self.rows[(tenant_id, "SECRET#" + record["id"])] = copy.deepcopy(record)


@pytest.fixture(autouse=True)
def local_sealing(monkeypatch):
    """seal/unseal without KMS: the 'ciphertext' records its context and opens only with it."""
    def seal(plaintext, context):
        return {"alg": sealing.ALGORITHM, "ciphertext": plaintext[::-1].hex(), "context": json.dumps(context)}

    def unseal(sealed, context):
        if sealed["context"] != json.dumps(context):
            raise sealing.Unsealable()
        return bytes.fromhex(sealed["ciphertext"])[::-1]
    monkeypatch.setattr(sealing, "seal", seal)
    monkeypatch.setattr(sealing, "unseal", unseal)


@pytest.mark.parametrize("value,ok", [
    ("ab" * 8192, True), ("ab" * 8192 + "a", False),
    ("😀" * 16384, True), ("😀" * 16384 + "a", False),    # characters, not bytes: 64 KiB of UTF-8 at most
    ("", False), ("x\ud800", False),
    ("\x00" * 64, False), ("\x00 \x00\n", False), ("\u3000\ufeff\x1c\x85", False),
    ("a", True), ("a" * 64, True), ("\x00a", True), (" \u3000x\n", True),
])
def test_the_value_is_1_to_16384_characters_not_all_blank(value, ok):
    for build in (lambda: SecretCreate(name="N", value=value), lambda: SecretUpdate(value=value)):
        if ok:
            assert build().value == value
        else:
            with pytest.raises(ValidationError) as refused:
                build()
            assert [e["loc"] for e in refused.value.errors()] == [("value",)]
            if value:  # the reason never repeats the value
                assert all(value[:20] not in e["msg"] for e in refused.value.errors())


@pytest.mark.parametrize("name,ok", [
    ("A", True), ("_", True), ("a" * 128, True), ("OPENAI_API_KEY", True), ("db.password-2", True),
    ("", False), ("9LIVES", False), (".env", False), ("a" * 129, False), ("has space", False),
    ("tab\t", False), ("new\n", False), ("naïve", False), ("a/b", False),
])
def test_names(name, ok):
    if ok:
        assert SecretCreate(name=name, value="v1").name == name
    else:
        with pytest.raises(ValidationError):
            SecretCreate(name=name, value="v1")


def test_an_update_sends_something_and_never_renames():
    with pytest.raises(ValidationError):
        SecretUpdate()
    with pytest.raises(ValidationError):
        SecretUpdate(name="NEW")
    assert SecretUpdate(description=None).model_fields_set == {"description"}


def test_lifecycle_versions_and_reveal_over_a_memory_table():
    store = MemorySecrets()
    made = tenant_secrets.create_secret(ctx(), SecretCreate(name="Token", value="one"), store)
    assert made["version"] == 1 and "value" not in made and "sealed" not in made
    with pytest.raises(Conflict) as taken:
        tenant_secrets.create_secret(ctx(), SecretCreate(name="TOKEN", value="two"), store)
    assert taken.value.details["fields"] == [{"field": "name", "in": "body", "reason": "already used"}]
    same = tenant_secrets.update_secret(ctx(), made["id"], SecretUpdate(description="d"), store)
    assert same["version"] == 1 and same["updated_at"] > made["updated_at"]
    newer = tenant_secrets.update_secret(ctx(), made["id"], SecretUpdate(value="two"), store)
    assert newer["version"] == 2 and newer["description"] == "d"
    assert tenant_secrets.reveal("ten_A", "token", store) == "two" == tenant_secrets.reveal("ten_A", made["id"], store)
    for tenant, name in (("ten_B", "token"), ("ten_B", made["id"]), ("ten_A", "nope"), ("ten_A", "bad name")):
        with pytest.raises(NotFound):
            tenant_secrets.reveal(tenant, name, store)
    with pytest.raises(NotFound):
        tenant_secrets.get_secret(ctx("ten_B"), made["id"], store)


def test_a_version_read_before_a_concurrent_change_is_a_conflict():
    store = MemorySecrets()
    made = tenant_secrets.create_secret(ctx(), SecretCreate(name="T", value="one"), store)
    real_replace = store.replace

    def someone_else_first(tenant_id, record, seen_version, seen_updated_at, **options):
        row = store.rows[(tenant_id, "SECRET#" + record["id"])]
        row["version"] += 1
        return real_replace(tenant_id, record, seen_version, seen_updated_at, **options)
    store.replace = someone_else_first
    with pytest.raises(Conflict):
        tenant_secrets.update_secret(ctx(), made["id"], SecretUpdate(value="two"), store)
