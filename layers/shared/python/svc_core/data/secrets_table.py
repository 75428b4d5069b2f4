"""The secrets table: partition tenantId, sort sk. Two kinds of item per secret:

    SECRET#<id>             the secret: id (`sec_` + a ULID, so reverse order is newest first), name,
                            description, version, the value sealed (svc_core/adapters/sealing.py, never in
                            clear), created_at, updated_at
    NAME#<name lower-cased> the claim of its name: secretId

A secret and its name claim are written and deleted together in one transaction, each write
conditional, so a name is used at most once per tenant (case-insensitively) and a change is
made only to the version the caller read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from svc_core.adapters.dynamo import from_item, values
from svc_core.data.common import read_item, transact
from svc_core.data.table import Table

SECRET, NAME = "SECRET#", "NAME#"
# A list reads these: the sealed value stays in the table.
_TABLE = Table("secrets_table", ("tenantId", "sk"), private=("tenantId", "sk"),
               listed=("id", "name", "description", "version", "created_at", "updated_at"))


def _secret_key(tenant_id: str, secret_id: str) -> dict[str, Any]:
    return _TABLE.key(tenant_id, SECRET + secret_id)


def _name_key(tenant_id: str, name: str) -> dict[str, Any]:
    return _TABLE.key(tenant_id, NAME + name.lower())


def get(tenant_id: str, secret_id: str) -> dict[str, Any] | None:
    """The secret with its sealed value, or None."""
    return _TABLE.get(tenant_id, SECRET + secret_id)


def id_of_name(tenant_id: str, name: str) -> str | None:
    """The id of the secret that holds this name (any case), or None."""
    claim = read_item(_TABLE.name, _name_key(tenant_id, name), from_item)
    return claim["secretId"] if claim else None


def list_for_tenant(tenant_id: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """Newest first, after the secret id `after` (the last of the previous page, or any position)."""
    return _TABLE.page(tenant_id, limit, after, prefix=SECRET)


def create(tenant_id: str, secret: dict[str, Any], answer: dict[str, Any] | None = None,
           also: Sequence[dict[str, Any]] = ()) -> None:
    """Store the secret and claim its name; ConditionFailed (nothing stored) when the name is taken.
    `answer`: the request's answer (never the value), kept with the write (common.transact); `also`:
    more items of the transaction (the audit entry)."""
    transact([
        _TABLE.put_entry({"tenantId": tenant_id, "sk": SECRET + secret["id"], **secret},
                         ConditionExpression="attribute_not_exists(sk)"),
        _TABLE.put_entry({"tenantId": tenant_id, "sk": NAME + secret["name"].lower(), "secretId": secret["id"]},
                         ConditionExpression="attribute_not_exists(sk)"),
        *also,
    ], answer=answer)


def replace(tenant_id: str, secret: dict[str, Any], seen_version: int, seen_updated_at: str,
            also: Sequence[dict[str, Any]] = ()) -> None:
    """Store the new state if the stored one is still the one the caller read (else ConditionFailed),
    with `also` (the audit entry) in the same transaction."""
    transact([
        _TABLE.put_entry({"tenantId": tenant_id, "sk": SECRET + secret["id"], **secret},
                         ConditionExpression="version = :v AND updated_at = :u",
                         ExpressionAttributeValues=values(v=seen_version, u=seen_updated_at)),
        *also,
    ])


def delete(tenant_id: str, secret_id: str, name: str, seen_version: int, seen_updated_at: str,
           also: Sequence[dict[str, Any]] = ()) -> None:
    """Delete the secret and free its name, both or neither (ConditionFailed), with `also`."""
    transact([
        _TABLE.delete_entry(_secret_key(tenant_id, secret_id), ConditionExpression="version = :v AND updated_at = :u",
                            ExpressionAttributeValues=values(v=seen_version, u=seen_updated_at)),
        _TABLE.delete_entry(_name_key(tenant_id, name), ConditionExpression="secretId = :id",
                            ExpressionAttributeValues=values(id=secret_id)),
        *also,
    ])
