"""A tenant's content kept in its secondary cell, and the failover to it (docs/regions-and-storage.md,
"The secondary region and failover").

A tenant whose plan has the feature names a `secondaryRegion` with a cell; the directory's HOME item
carries it, so every cell knows where the tenant's copy lives.
- The seed (TenantMoveFunction of the home cell, a "replica" job of TenantMoveQueue) copies every item
  and object of the tenant as a move's copy does (sealed values' data keys sealed again by the
  secondary's key), twice (the second pass takes what changed during the first), and records the
  copy's state in the directory (TENANT#<id>, REPLICA). It also deletes the copies of a cell that is
  no longer the tenant's secondary.
- From then on every change is carried as it happens: the home cell's TenantMoveFunction reads the
  stream of each table a move copies and writes each change of a tenant with a secondary into the
  same table there (put or delete, in the stream's order, per item); every object written or deleted
  under the tenant's prefix is copied or deleted by its bucket's event. The replication lag (RPO) is
  the stream's and the function's time: the benchmark measures it (docs/benchmarks.md).
- In the secondary cell the tenant's item carries `move.phase = "replica"`: its requests are answered
  421 to the home (the directory), so a copy is never served while the home is.
- A failover (`python -m ops tenants failover TENANT_ID`, run against the secondary cell: the home may
  be gone) homes the tenant in the secondary in the directory, its secondary becoming the old home, and
  clears the mark: the secondary serves it at once; the old cell, once it reads the directory again,
  answers 421 (tenant_policy compares its home with the directory); what the old cell had not carried
  over when it was lost is the RPO. The new home then carries its changes to the old one, and a seed
  queued by the failover makes the old cell's copy equal again once it answers.
Not carried: what a move does not move (outbox, idempotency records, rate counters, sign-ins), the
members' accounts (a user's home is their own cell), delivery marks of webhooks (no tenant on them),
and the audit exports (kept a day, made again on request).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from svc_core.adapters.dynamo import to_item
from svc_core.contracts import cells
from svc_core.contracts.tenant_items import TABLE_RULES, object_owner
from svc_core.data import cell_tables, directory_table, tenant_move_queue
from svc_core.data.cell_tables import Place
from svc_core.data.common import transact
from svc_core.domain import audit, tenant_moves
from svc_core.domain.tenant_moves import COPIED, Mover, plain_item
from svc_core.platform import timeutil

REPLICA = "replica"   # the phase of the tenant item's move mark in its secondary cell
SEEDING, CURRENT, STALE, FAILED = "seeding", "current", "stale", "failed"
_peers: dict[str, Place] = {}


def _home(tenant_id: str, known: dict[str, dict[str, Any] | None] | None = None) -> dict[str, Any] | None:
    """The tenant's directory entry, read afresh (once per batch of changes: `known`). Never kept longer:
    a cell that kept it past a failover would carry the new home's changes back to it."""
    if known is not None and tenant_id in known:
        return known[tenant_id]
    home = directory_table.tenant_home(tenant_id)
    if known is not None:
        known[tenant_id] = home
    return home


def _peer(region: str) -> Place:
    if region not in _peers:
        _peers[region] = tenant_moves.peer(region)
    return _peers[region]


def secondary_of(home: dict[str, Any] | None) -> str | None:
    """The region this cell carries the tenant's changes to: its secondary, when this cell is its home
    and the secondary has a cell (None otherwise: nothing to carry from here)."""
    if home is None or home.get("homeRegion") != cells.here():
        return None
    secondary = home.get("secondaryRegion")
    if not secondary or secondary == cells.here() or not cells.allows(secondary):
        return None
    return secondary


def for_replica(table: str, raw: dict[str, Any], tenant_id: str, target: Place) -> dict[str, Any]:
    """An item of the home cell as the secondary stores it: sealed values rewrapped, the tenant item
    marked as the copy (the secondary answers its requests 421 to the home)."""
    raw = tenant_moves.rewrapped(table, raw, tenant_id, target)
    if table == "TenantsTable":
        raw = {**raw, "move": to_item({"m": {"phase": REPLICA, "homeRegion": cells.here()}})["m"]}
    return raw


class ReplicaSync(Mover):
    """A move's copy and checks, made into the secondary: the copies keep the tenant's home."""

    def __init__(self, tenant_id: str, target: Place) -> None:
        super().__init__({"tenantId": tenant_id, "status": "copying"}, cell_tables.here(), target)
        self.home = cells.here()

    def prepared(self, table: str, raw: dict[str, Any]) -> dict[str, Any]:
        return for_replica(table, raw, self.tenant_id, self.target)

    def save(self, **changes: Any) -> None:
        self.move.update(changes)   # a seed's state is the REPLICA item (seed below), not a move's


# ---- the seed, and the copies of a former secondary ----------------------------------------------

def run_job(tenant_id: str, drop_region: str | None = None) -> str:
    """A "replica" job of TenantMoveQueue: the copies of `drop_region` deleted (a former secondary),
    then the current secondary seeded. Its state after: seeded, none, or not_home."""
    home = _home(tenant_id)
    if home is None or home.get("homeRegion") != cells.here():
        return "not_home"   # moved or failed over since it was queued: the new home seeds its own secondary
    secondary = secondary_of(home)
    if drop_region and drop_region not in (secondary, cells.here()) and cells.allows(drop_region):
        ReplicaSync(tenant_id, _peer(drop_region)).delete_copies()
    if secondary is None:
        if drop_region:
            directory_table.save_tenant_replica(tenant_id, {"region": None, "status": None,
                                                            "droppedAt": timeutil.iso(timeutil.now())})
        return "none"
    seed(tenant_id, secondary)
    return "seeded"


def seed(tenant_id: str, region: str) -> dict[str, Any]:
    """Every item and object of the tenant made equal in the secondary (two passes), its counts recorded."""
    started = time.monotonic()
    record = {"region": region, "status": SEEDING, "startedAt": timeutil.iso(timeutil.now())}
    directory_table.save_tenant_replica(tenant_id, record)
    sync = ReplicaSync(tenant_id, _peer(region))
    try:
        for _pass in range(2):
            tables = {}
            for table in COPIED:
                if secondary_of(_home(tenant_id)) != region:
                    return {**record, "status": "abandoned"}   # failed over, moved or changed meanwhile
                tables[table] = sync.sync_table(table)
            sync.sync_files()
        differing = _differing(sync)
    except Exception as exc:
        directory_table.save_tenant_replica(tenant_id, {**record, "status": FAILED,
                                                        "error": f"{type(exc).__name__}: {exc}"[:500]})
        raise
    # Current: every item was copied, and what changes from now on is carried. `differing` names what a
    # comparison still found unequal (a tenant's traffic changes items meanwhile: a key's last use, usage).
    record.update(status=CURRENT, seededAt=timeutil.iso(timeutil.now()), differing=differing,
                  seedMs=round((time.monotonic() - started) * 1000),
                  items={table: done["count"] for table, done in tables.items()})
    directory_table.save_tenant_replica(tenant_id, record)
    return record


def _differing(sync: ReplicaSync, rounds: int = 3, pause: float = 0.5) -> list[str]:
    """The tables (and "files") still unequal after a few rounds, each a moment apart, of copying what
    differs from a fresh read: a change made during the copy may reach the secondary through the stream
    before the copy's older read of it does, and is put right here. [] when both copies are equal."""
    differing = [table for table in COPIED if not sync.verify_table(table)]
    if not sync.files_equal():
        differing.append("files")
    for _round in range(rounds - 1):
        if not differing:
            break
        time.sleep(pause)
        for table in differing:
            if table == "files":
                sync.sync_files()
            else:
                sync.sync_table(table)
        differing = [table for table in differing if not (sync.files_equal() if table == "files"
                                                          else sync.verify_table(table))]
    return differing


# ---- the changes as they happen -------------------------------------------------------------------

def _logical_tables() -> dict[str, str]:
    return {name: logical_id for logical_id, name in cell_tables.here().tables.items()}


def table_of(event_source_arn: str) -> str | None:
    """The logical id of the table a stream record comes from (arn:...:table/<name>/stream/<label>)."""
    name = event_source_arn.split(":table/", 1)[-1].split("/stream/", 1)[0]
    return _logical_tables().get(name)


def tenant_of(table: str, raw: dict[str, Any]) -> str | None:
    owner = TABLE_RULES[table].owner(plain_item(raw))
    return owner.id if owner is not None and owner.kind == "tenant" else None


def _is_copy(table: str, image: dict[str, Any] | None) -> bool:
    """A tenant item marked as another cell's copy: never carried on (it came from the home)."""
    move = (image or {}).get("move", {}).get("M", {}) if table == "TenantsTable" else {}
    return move.get("phase", {}).get("S") in (REPLICA, tenant_moves.ARRIVING)


def carry_record(record: dict[str, Any], known: dict[str, dict[str, Any] | None] | None = None) -> float | None:
    """One stream record carried to the tenant's secondary: its age in seconds when carried, None when
    it is no tenant's with a secondary here."""
    table = table_of(record.get("eventSourceARN", ""))
    if table not in COPIED:
        return None
    change = record["dynamodb"]
    image = change.get("NewImage") or change.get("OldImage")
    tenant_id = tenant_of(table, image) if image else None
    if tenant_id is None or _is_copy(table, change.get("NewImage")) or tenant_moves.cell_local(table, image):
        return None   # a delivery's wait names this cell's queue: never copied
    secondary = secondary_of(_home(tenant_id, known))
    if secondary is None:
        return None
    target = _peer(secondary)
    if record["eventName"] == "REMOVE":
        cell_tables.delete_all(target, table, [change["Keys"]])
    else:
        cell_tables.put_all(target, table, [for_replica(table, change["NewImage"], tenant_id, target)])
    created = change.get("ApproximateCreationDateTime")
    return max(0.0, time.time() - float(created)) if created is not None else 0.0


def carry_records(records: Iterable[dict[str, Any]]) -> tuple[list[float], str | None]:
    """Stream records in their order: the ages of those carried, and the sequence number of the first
    that failed (the batch resumes there: later changes of an item never overtake earlier ones)."""
    ages: list[float] = []
    known: dict[str, dict[str, Any] | None] = {}
    for record in records:
        try:
            age = carry_record(record, known)
        except Exception:
            return ages, record["dynamodb"]["SequenceNumber"]
        if age is not None:
            ages.append(age)
    return ages, None


def carry_object(key: str) -> bool:
    """An object of the bucket written or deleted: its current state made the secondary's (read again
    here, so events out of order or twice leave the same result). Whether it was the tenant's to carry."""
    owner = object_owner(key)
    if owner is None or owner.kind != "tenant" or not key.startswith("tenants/"):
        return False   # audit exports are not carried: kept a day, made again on request
    secondary = secondary_of(_home(owner.id))
    if secondary is None:
        return False
    here, target = cell_tables.here(), _peer(secondary)
    if cell_tables.has_object(here, key):
        cell_tables.copy_object(here, target, key)
    else:
        cell_tables.delete_object(target, key)
    return True


# ---- the failover ---------------------------------------------------------------------------------

class NotSecondary(Exception):
    """The tenant cannot be failed over to this cell (its message says why)."""


def failover(tenant_id: str) -> dict[str, Any]:
    """Home the tenant in this cell, its secondary (run here: the home cell may be gone). Idempotent:
    run again after it succeeded, it answers the same home (and clears a mark a late copy left)."""
    here = cells.here()
    home = directory_table.tenant_home(tenant_id)
    if home is None:
        raise NotSecondary(f"{tenant_id} is not in the directory")
    old = home.get("homeRegion")
    replica = directory_table.tenant_replica(tenant_id) or {}
    place, key = cell_tables.here(), {"id": {"S": tenant_id}}
    if old == here and home.get("failedOverAt"):
        _become_home(place, key, home.get("secondaryRegion"))
        return {"tenantId": tenant_id, "fromRegion": home.get("failedOverFrom"), "toRegion": here,
                "failedOverAt": home.get("failedOverAt"), "replicaStatus": replica.get("status"), "already": True}
    if home.get("secondaryRegion") != here:
        raise NotSecondary(f"{here} is not the secondary region of {tenant_id} (its home: {old}, its secondary: "
                           f"{home.get('secondaryRegion')})")
    if cell_tables.get(place, "TenantsTable", key) is None:
        raise NotSecondary(f"{here} holds no copy of {tenant_id} (its seed has not run)")
    moment = timeutil.now()
    # The directory first: from now on this cell's replica routes the tenant here, and every other cell's
    # that answers is told at once (the old home, in a drill, stops carrying its changes here); the
    # global table brings it to the others, a lost region's included once it returns.
    entry = {k: v for k, v in home.items() if k not in ("updatedAt", "writtenIn")}
    entry.update(homeRegion=here, secondaryRegion=old, failedOverAt=timeutil.iso(moment), failedOverFrom=old)
    item = directory_table.home_item(tenant_id, entry)
    cell_tables.put_all(place, cell_tables.DIRECTORY, [item])
    for region in cells.cells():
        if region != here:
            try:
                cell_tables.put_all(_peer(region), cell_tables.DIRECTORY, [item])
            except Exception:   # that cell is away: the global table carries it there when it returns
                pass
    _become_home(place, key, old)
    transact([audit.entry(tenant_id, "tenant.failed_over", "tenant", tenant_id, now=moment,
                          changes={"homeRegion": {"old": old, "new": here},
                                   "secondaryRegion": {"old": here, "new": old}})])
    directory_table.save_tenant_replica(tenant_id, {"region": old, "status": STALE,
                                                    "since": timeutil.iso(moment), "failedOverFrom": old})
    tenant_move_queue.send_job(tenant_id, "replica")   # the old cell's copy made equal once it answers
    return {"tenantId": tenant_id, "fromRegion": old, "toRegion": here, "failedOverAt": timeutil.iso(moment),
            "replicaStatus": replica.get("status"), "already": False}


def _become_home(place: Place, key: dict[str, Any], secondary: str | None) -> None:
    """This cell's copy of the tenant made the tenant: no mark, homed here, its preferences saying so."""
    here = cells.here()
    tenant = cell_tables.get(place, "TenantsTable", key) or {}
    names, values = {"#m": "move", "#h": "homeRegion"}, {":h": {"S": here}}
    update = "REMOVE #m SET #h = :h"
    if isinstance(tenant.get("regionPreferences"), dict) and "M" in tenant["regionPreferences"]:
        names.update({"#p": "regionPreferences", "#pr": "primaryRegion", "#sr": "secondaryRegion"})
        values[":s"] = {"S": secondary} if secondary else {"NULL": True}
        update += ", #p.#pr = :h, #p.#sr = :s"
    cell_tables.update(place, "TenantsTable", key, UpdateExpression=update, ExpressionAttributeNames=names,
                       ExpressionAttributeValues=values, ConditionExpression="attribute_exists(id)")


def replica_view(tenant_id: str) -> dict[str, Any]:
    """What an operator reads of the tenant's copy: the directory's home and the REPLICA record."""
    home = directory_table.tenant_home(tenant_id) or {}
    return {"tenantId": tenant_id, "homeRegion": home.get("homeRegion"),
            "secondaryRegion": home.get("secondaryRegion"), "replica": directory_table.tenant_replica(tenant_id)}
