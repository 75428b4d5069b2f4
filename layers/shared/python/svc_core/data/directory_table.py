"""The global directory (partition pk, sort sk): a DynamoDB global table replicated to every cell's
region, so it holds routing facts only, never a tenant's content nor an e-mail address in clear
(docs/regions-and-storage.md, "The global directory", says why each attribute may cross borders).

- (TENANT#<tenant id>, HOME): homeRegion, secondaryRegion (absent when none), status ("active").
- (USER#<user id>, HOME): homeRegion, the cell holding the account (profile, e-mail claim, sessions).
- (USER#<user id>, MEMBER#<tenant id>): tenantId. A membership exists; its role is the tenant's content.
- (EMAIL#<keyed hash>, EMAIL): userId. The keyed hash is auth.authenticate.email_hash of the address
  (an HMAC under the API-key pepper of email_key_text): the directory can be searched by an address
  one knows, never read back into addresses. Written on the condition that it does not exist, so an
  address is claimed once across every cell (a user of an identity provider, whose e-mail claims
  nothing in the users table, has none).
- (KEY#<secret hash>, KEY): tenantId, keyId, notAfter (absent: no end). One item per live value of
  an API key, keyed by the HMAC the API keys table stores (auth.authenticate.hash_key); a rotation's
  earlier values keep theirs, with their end, until a later change of the key drops them. A value
  past its notAfter (expired, or its overlap over) is dead though its item may linger: readers check it.
Every item has updatedAt (ISO, milliseconds) and writtenIn (the region whose cell wrote it): the
replication between cells applies the latest write by updatedAt.

Writes are entries for the TransactWriteItems of the change they record (as audit entries are), so
the directory and the cell's own tables change together or not at all.
"""

from __future__ import annotations

from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import values
from svc_core.contracts import cells
from svc_core.data.common import ConditionFailed, conditional
from svc_core.data.table import Table
from svc_core.platform import timeutil

_TABLE = Table("directory_table", ("pk", "sk"), private=("pk", "sk"))
ACTIVE = "active"


def _written() -> dict[str, str]:
    return {"updatedAt": timeutil.iso(timeutil.now()), "writtenIn": cells.here()}


def _put(pk: str, sk: str, fields: dict[str, Any], **condition: Any) -> dict[str, Any]:
    """A Put entry of one item; attributes whose value is None are left out (absent, not null)."""
    record = {"pk": pk, "sk": sk, **{k: v for k, v in fields.items() if v is not None}, **_written()}
    return _TABLE.put_entry(record, **condition)


def email_key_text(email: str) -> str:
    """What the keyed hash of an address is taken of: its normalised form (contracts.email_address),
    tagged so that no other HMAC under the same pepper (an API key's) can equal it."""
    from svc_core.contracts import email_address  # on first use: the key functions' start does without it
    return "email:" + email_address.normalise(email)


# ---- entries for the transaction of the change they record ---------------------------------------

def tenant_entry(tenant_id: str, home_region: str, secondary_region: str | None = None) -> dict[str, Any]:
    return _put(f"TENANT#{tenant_id}", "HOME", {"homeRegion": home_region, "secondaryRegion": secondary_region,
                                                "status": ACTIVE})


def user_entries(user_id: str, email_hash: str | None, home_region: str) -> list[dict[str, Any]]:
    """The user's home, and the claim of their address's keyed hash (only if no user has it: the
    transaction fails otherwise). email_hash None: a user whose address claims nothing (identity provider)."""
    entries = [_put(f"USER#{user_id}", "HOME", {"homeRegion": home_region})]
    if email_hash is not None:
        entries.append(_put(f"EMAIL#{email_hash}", "EMAIL", {"userId": user_id},
                            ConditionExpression="attribute_not_exists(pk)"))
    return entries


def membership_entry(user_id: str, tenant_id: str) -> dict[str, Any]:
    return _put(f"USER#{user_id}", f"MEMBER#{tenant_id}", {"tenantId": tenant_id})


def membership_removal_entry(user_id: str, tenant_id: str) -> dict[str, Any]:
    return _TABLE.delete_entry(_TABLE.key(f"USER#{user_id}", f"MEMBER#{tenant_id}"))


def key_entry(secret_hash: str, tenant_id: str, key_id: str, not_after: int | None = None) -> dict[str, Any]:
    return _put(f"KEY#{secret_hash}", "KEY", {"tenantId": tenant_id, "keyId": key_id, "notAfter": not_after})


def key_removal_entry(secret_hash: str) -> dict[str, Any]:
    return _TABLE.delete_entry(_TABLE.key(f"KEY#{secret_hash}", "KEY"))


# ---- reads ------------------------------------------------------------------------------------------

def tenant_home(tenant_id: str) -> dict[str, Any] | None:
    """{homeRegion, secondaryRegion?, status, updatedAt, writtenIn}; None: the tenant is not in the directory."""
    return _TABLE.get(f"TENANT#{tenant_id}", "HOME")


def user_home(user_id: str) -> dict[str, Any] | None:
    """{homeRegion, updatedAt, writtenIn}; None: the user is not in the directory."""
    return _TABLE.get(f"USER#{user_id}", "HOME")


def tenants_of_user(user_id: str) -> list[str]:
    """The ids of the tenants the user is a member of, in every cell (their MEMBER# items)."""
    found: list[str] = []
    request: dict[str, Any] = {"TableName": _TABLE.name, "KeyConditionExpression": "pk = :pk AND begins_with(sk, :m)",
                               "ExpressionAttributeValues": values(pk=f"USER#{user_id}", m="MEMBER#")}
    while True:
        answer = aws.client("dynamodb").query(**request)
        found += [item["sk"]["S"].removeprefix("MEMBER#") for item in answer.get("Items", [])]
        if not answer.get("LastEvaluatedKey"):
            return found
        request["ExclusiveStartKey"] = answer["LastEvaluatedKey"]


def user_by_email_hash(email_hash: str) -> dict[str, Any] | None:
    """{userId, homeRegion} of the user whose address has this keyed hash; None: no such user.
    homeRegion is None while the user's home item has not reached this region yet (a global table
    replicates item by item: the claim may arrive before the home written with it)."""
    claim = _TABLE.get(f"EMAIL#{email_hash}", "EMAIL")
    if claim is None:
        return None
    home = user_home(claim["userId"])
    return {"userId": claim["userId"], "homeRegion": home["homeRegion"] if home else None}


def key(secret_hash: str) -> dict[str, Any] | None:
    """{tenantId, keyId, notAfter?, updatedAt, writtenIn} of an API key's value; None: not in the directory."""
    return _TABLE.get(f"KEY#{secret_hash}", "KEY")


# ---- the backfill (ops directory backfill) ----------------------------------------------------------

def write_if_absent(entry: dict[str, Any]) -> bool:
    """Write a Put entry's item on its own unless an item with its key exists (a later write of the
    fact, from any cell, is never overwritten); whether it was written."""
    put = entry["Put"]
    try:
        conditional(aws.client("dynamodb").put_item, TableName=put["TableName"], Item=put["Item"],
                    ConditionExpression="attribute_not_exists(pk)")
    except ConditionFailed:
        return False
    return True



# ---- moves between cells (domain/tenant_moves.py) ----------------------------------------------------
# (CELL#<region>, RESOURCES): tables {logical id: name}, bucket, dataKey (and on the local stack the
#   endpoints of the cell's emulators): where a peer cell copies a moving tenant's items and files to.
# (TENANT#<tenant id>, MOVE): the tenant's latest move: status, fromRegion, toRegion, its progress
#   (counts per table, files), timings and error. Counts and regions only: nothing of the content.

def put_cell_resources(region: str, resources: dict[str, Any]) -> None:
    _TABLE.put({"pk": f"CELL#{region}", "sk": "RESOURCES", **resources, **_written()})


def cell_resources(region: str) -> dict[str, Any] | None:
    return _TABLE.get(f"CELL#{region}", "RESOURCES")


def tenant_move(tenant_id: str) -> dict[str, Any] | None:
    return _TABLE.get(f"TENANT#{tenant_id}", "MOVE")


def start_tenant_move(tenant_id: str, move: dict[str, Any]) -> None:
    """Record a new move unless one is under way (ConditionFailed): none, or the last one done or failed."""
    _TABLE.put({"pk": f"TENANT#{tenant_id}", "sk": "MOVE", **move, **_written()},
               ConditionExpression="attribute_not_exists(pk) OR #s IN (:done, :failed)",
               ExpressionAttributeNames={"#s": "status"},
               ExpressionAttributeValues={":done": {"S": "done"}, ":failed": {"S": "failed"}})


def save_tenant_move(tenant_id: str, move: dict[str, Any]) -> None:
    _TABLE.put({"pk": f"TENANT#{tenant_id}", "sk": "MOVE", **move, **_written()})


def home_item(tenant_id: str, home: dict[str, Any]) -> dict[str, Any]:
    """The tenant's HOME item as stored (DynamoDB's form), with a new updatedAt: written into every
    cell's replica at once by a move's switch, so no cell routes by the old home after it."""
    return _TABLE.put_entry({**home, "pk": f"TENANT#{tenant_id}", "sk": "HOME", **_written()})["Put"]["Item"]


def claim_tenant_move(tenant_id: str, now_ms: int, until_ms: int) -> bool:
    """Take the move's run until `until_ms` unless another run holds it (its lease not over): whether taken."""
    try:
        _TABLE.update(_TABLE.key(f"TENANT#{tenant_id}", "MOVE"), UpdateExpression="SET leaseUntil = :until",
                      ConditionExpression="attribute_exists(pk) AND (attribute_not_exists(leaseUntil) OR leaseUntil < :now)",
                      ExpressionAttributeValues={":until": {"N": str(until_ms)}, ":now": {"N": str(now_ms)}})
    except ConditionFailed:
        return False
    return True


# ---- the secondary region: its copy's state (domain/tenant_replicas.py) --------------------------

def tenant_replica(tenant_id: str) -> dict[str, Any] | None:
    """(TENANT#<id>, REPLICA): {region, status (seeding, current, failed), seededAt, ...}; None: never seeded."""
    return _TABLE.get(f"TENANT#{tenant_id}", "REPLICA")


def save_tenant_replica(tenant_id: str, replica: dict[str, Any]) -> None:
    _TABLE.put({"pk": f"TENANT#{tenant_id}", "sk": "REPLICA", **replica, **_written()})
