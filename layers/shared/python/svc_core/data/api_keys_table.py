"""The API keys table.

Two kinds of item:
- KEY#<id>: the key's record (name, type, environment, scopes, tenant, creator, times, the
  secrets it has, each {hash, notAfter}). Only these carry `id`, so the byTenant index (tenantId, id) lists
  keys and nothing else.
- SECRET#<hash>: looked up by the HMAC of a presented key; carries what authentication needs
  (key id, tenant, scopes), `notAfter`, the end of that secret's life (a rotated-out
  secret lives on for the overlap, which a later rotation's overlap may shorten; a revoked key's
  secrets end at once), and `lastUsedAt` (with `lastUsedIp`), a
  copy of the key's written with it (touch), so the read that authenticates a key also tells
  whether its last use needs writing.
The key value itself is never stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import values
from svc_core.contracts import rotation
from svc_core.data import rate_limits_table
from svc_core.data.common import query_page, transact
from svc_core.data.table import Table

BY_TENANT_INDEX = "byTenant"
_TABLE = Table("api_keys_table", ("pk",), private=("pk",))


def create(record: dict[str, Any], secret_hash: str, also: Sequence[dict[str, Any]] = ()) -> None:
    """Store the key and its secret, with `also` (the audit entry) in the same transaction."""
    secret = _secret_record(record, secret_hash, record.get("expiresAt"), generation(record))
    transact([
        _TABLE.put_entry({"pk": f"KEY#{record['id']}", **record}, ConditionExpression="attribute_not_exists(pk)"),
        _TABLE.put_entry(secret, ConditionExpression="attribute_not_exists(pk)"),
        *also,
    ])


def generation(record: dict[str, Any]) -> int:
    """Which value of its key a secret (or a key's current one) is: 1 for the first, one more at each
    rotation. Records written before generations were kept read as 1."""
    return int(record.get("generation") or 1)


def _secret_record(record: dict[str, Any], secret_hash: str, not_after: int | None, gen: int) -> dict[str, Any]:
    return {"pk": f"SECRET#{secret_hash}", "keyId": record["id"], "tenantId": record["tenantId"],
            "scopes": record["scopes"], "type": record["type"], "environment": record["environment"],
            "notAfter": not_after, "generation": gen}


def find_secret(secret_hash: str) -> dict[str, Any] | None:
    return _TABLE.get(f"SECRET#{secret_hash}")


def get(tenant_id: str, key_id: str) -> dict[str, Any] | None:
    record = _TABLE.get(f"KEY#{key_id}")
    if not record or record["tenantId"] != tenant_id:
        return None  # another tenant's key is as absent as a missing one
    return record


def live_check_entry(key_id: str) -> dict[str, Any]:
    """A TransactWriteItems entry that writes nothing: the transaction holds only while the key is
    not revoked (a change it allowed, made as it is revoked, is not made)."""
    return {"ConditionCheck": {"TableName": _TABLE.name, "Key": _TABLE.key(f"KEY#{key_id}"),
                               "ConditionExpression": "attribute_exists(pk) AND attribute_not_exists(revokedAt)"}}


def list_for_tenant(tenant_id: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """Newest first, after the key id `after` (the last of the previous page, or any position)."""
    query = {"TableName": _TABLE.name, "IndexName": BY_TENANT_INDEX,
             "KeyConditionExpression": "tenantId = :t", "ExpressionAttributeValues": values(t=tenant_id),
             "ScanIndexForward": False, "Limit": limit}
    # The index's key and the table's, as a key record with that id would have them.
    start = {"tenantId": {"S": tenant_id}, "id": {"S": after}, "pk": {"S": f"KEY#{after}"}} if after else None
    return query_page(query, start, _TABLE.public)


# lastUsedAt is written when the one recorded is at least this old (seconds): a key's first
# request in a container then usually writes nothing (docs/authentication.md).
LAST_USED_STEP = 300


def touch_due(secret: dict[str, Any], now: int) -> bool:
    """Whether the key's last use, as its secret's record (find_secret) says, is due to be written."""
    return now - (secret.get("lastUsedAt") or 0) >= LAST_USED_STEP


def touch(key_id: str, secret_hash: str, now: int, source_ip: str | None = None) -> None:
    """Record the key's last use, when and from which address (API Gateway's sourceIp; None when
    unknown), on its record (what the API shows) and on the secret's (what authentication reads),
    in one round trip."""
    aws.client("dynamodb").transact_write_items(TransactItems=[
        {"Update": {"TableName": _TABLE.name, "Key": _TABLE.key(pk),
                    "UpdateExpression": "SET lastUsedAt = :now, lastUsedIp = :ip",
                    "ConditionExpression": "attribute_exists(pk)",
                    "ExpressionAttributeValues": values(now=now, ip=source_ip or None)}}
        for pk in (f"KEY#{key_id}", f"SECRET#{secret_hash}")
    ])


def revoke(record: dict[str, Any], now: int, also: Sequence[dict[str, Any]] = ()) -> None:
    """Mark the key revoked, end all its secrets, and mark its rate-limit counter revoked (with
    `also`, the audit entry, in the same transaction)."""
    writes = [{"Update": {
        "TableName": _TABLE.name, "Key": _TABLE.key(f"KEY#{record['id']}"),
        "UpdateExpression": "SET revokedAt = :now",
        "ConditionExpression": "tenantId = :t AND attribute_not_exists(revokedAt)",
        "ExpressionAttributeValues": values(now=now, t=record["tenantId"]),
    }}]
    for secret in record["secrets"]:
        if secret["notAfter"] is None or secret["notAfter"] > now:
            writes.append(_end_secret(secret["hash"], now))
    writes.append(rate_limits_table.revoke_item(record["id"], now))
    transact([*writes, *also])


def _end_secret(secret_hash: str, not_after: int) -> dict[str, Any]:
    return {"Update": {
        "TableName": _TABLE.name, "Key": _TABLE.key(f"SECRET#{secret_hash}"),
        "UpdateExpression": "SET notAfter = :na",
        "ConditionExpression": "attribute_exists(pk) AND (attribute_not_exists(notAfter) OR notAfter >= :na)",
        "ExpressionAttributeValues": values(na=not_after),
    }}


def rotate(record: dict[str, Any], new_hash: str, hint: str, earlier_end_by: int, now: int,
           also: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """Give the key a new secret; every earlier live one (the current one and those still in an
    overlap) lives on until earlier_end_by at the latest, on the record's list and on its own item
    (contracts/rotation.py). The list keeps only live secrets: those that end now are dropped from it.
    When they all end now, the key's rate-limit counter is marked too (rate_limits_table), so a
    value that a container cached before the rotation is refused on its next request there as well.

    `also`: more items of the same transaction (the audit entry). Returns the updated record;
    ConditionFailed when the key changed meanwhile.
    """
    new = {"hash": new_hash, "notAfter": record.get("expiresAt"), "hint": hint}
    new_secrets = rotation.rotated(record["secrets"], new, now, earlier_end_by, "notAfter")
    before = {s["hash"]: s.get("notAfter") for s in record["secrets"]}
    lowered = [s for s in rotation.capped(record["secrets"], now, earlier_end_by, "notAfter")
               if s["notAfter"] != before[s["hash"]]]
    new_generation = generation(record) + 1
    updated = {**record, "hint": hint, "rotatedAt": now, "secrets": new_secrets, "generation": new_generation}
    ended_now = [rate_limits_table.end_values_before_item(record["id"], new_generation, now)] \
        if earlier_end_by <= now else []
    transact([
        {"Update": {
            "TableName": _TABLE.name, "Key": _TABLE.key(f"KEY#{record['id']}"),
            "UpdateExpression": "SET hint = :hint, rotatedAt = :now, secrets = :new, generation = :gen",
            "ConditionExpression": "tenantId = :t AND attribute_not_exists(revokedAt) AND secrets = :old",
            "ExpressionAttributeValues": values(hint=hint, now=now, new=new_secrets, gen=new_generation,
                                                t=record["tenantId"], old=record["secrets"]),
        }},
        _TABLE.put_entry(_secret_record(record, new_hash, record.get("expiresAt"), new_generation),
                         ConditionExpression="attribute_not_exists(pk)"),
        *(_end_secret(s["hash"], s["notAfter"]) for s in lowered),
        *ended_now,
        *also,
    ])
    return updated
