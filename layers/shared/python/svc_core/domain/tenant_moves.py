"""Moving a tenant between cells (docs/regions-and-storage.md, "Moving a tenant between cells").

POST /regions/migrations/{tenantId} records the move in the directory (TENANT#<id>, MOVE) and queues it;
TenantMoveFunction, in the tenant's current cell, runs its steps, each idempotent and recorded before the
next begins, so a worker that dies resumes from the last step recorded (a table copied, the files):
1. copying: every item of the tenant, table by table (contracts.tenant_items says whose each item is),
   into the new cell's tables, its sealed values' data keys sealed again under the new cell's key; every
   object under the tenant's prefixes of the bucket;
2. verifying: each table's items in both cells, compared by a checksum of each (what differs is copied
   again, what the new cell has more is deleted there): writes go on meanwhile;
3. switching: writes are paused (the tenant item's `move.phase` "frozen": non-GET requests answer 503
   tenant_moving), the worker waits until every container has seen it (tenant_policy's cache) and the
   old cell's outbox has published the tenant's last events, copies and verifies again (now exactly
   equal), then homes the tenant in the new cell in every cell's replica of the directory: the new
   cell serves it, the old one answers 421;
4. cleaning: the old cell's webhook deliveries of the tenant go to the new cell (domain/cell_handoff.py:
   from the switch on, a message of the tenant on the old cell's queues is sent on to the new cell's with
   its attempts and schedule, writing nothing there). Once every run of the delivery and fan-out functions
   that began before the switch has ended (their Timeout), the deliveries hidden for a retry are brought
   back at once (their waits recorded with their receipt handles) so they are sent on, the dead letters of
   the tenant are carried to the new cell's dead-letter queues, what the old cell's deliveries recorded
   after the switch is added to the new cell's, and every item and object of the tenant in the old cell
   is deleted. `done` only then: the old cell holds and writes nothing of the tenant any more.
The tenant reads throughout; writes pause from the freeze to the switch (writesPausedMs).
Not moved: the accounts of the tenant's members (a user's home is their own cell), the cell's rate
counters, the outbox (its events are published by the old cell before the switch; the new cell's
outbox carries what comes after) and idempotency records (a create retried across the move runs again).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable
from typing import Any

from svc_core.adapters import sealing
from svc_core.adapters.dynamo import to_item
from svc_core.auth.context import TenantContext
from svc_core.contracts import cells, regions
from svc_core.contracts.tenant_items import OBJECT_PREFIXES, TABLE_RULES, Owner
from svc_core.data import cell_queues, cell_tables, directory_table, tenant_move_queue
from svc_core.data.cell_tables import Place
from svc_core.data.common import ConditionFailed, transact
from svc_core.data.webhook_deliveries_table import DELIVERED_PREFIX, WAITING_PREFIX
from svc_core.domain import audit
from svc_core.domain.cell_handoff import peer
from svc_core.domain.tenant_access import own_tenant
from svc_core.platform import timeutil
from svc_core.platform.config import settings
from svc_core.platform.errors import Conflict, NotFound, ValidationFailed

STATUSES = ("pending", "copying", "verifying", "switching", "cleaning", "done", "failed")
# Copied in this order: the webhooks before their deliveries (whose marks name only the webhook), the
# tenant item first (the new cell then knows it is arriving and sends its requests back until the switch).
NOT_COPIED = ("OutboxTable", "IdempotencyTable", "RateLimitsTable", "SessionsTable", "CliSessionsTable")
COPIED = ("TenantsTable", *sorted(t for t in TABLE_RULES if t not in (*NOT_COPIED, "TenantsTable",
                                                                        "WebhookDeliveriesTable")),
          "WebhookDeliveriesTable")
DELETED = (*COPIED[1:], "OutboxTable", "IdempotencyTable", "TenantsTable")  # the tenant item last
FROZEN, ARRIVING, MOVED = "frozen", "arriving", "moved"
DELIVERIES = "WebhookDeliveriesTable"
DEAD_LETTER_QUEUES = (cell_queues.DELIVERY_DEAD_LETTERS, cell_queues.EVENT_DEAD_LETTERS)
DEAD_LETTER_HOLD_SECONDS = 120   # another tenant's dead letter, hidden while the move reads past it
FINAL_SYNC_ATTEMPTS = 3
LEASE_SECONDS = 900   # a run's hold on its move: the worker's timeout (a run that died lets the next one in after it)
MAX_ATTEMPTS = 5   # runs of a move that failed before it is given up (before its switch only)


# ---- the API ------------------------------------------------------------------------------------

def _view(move: dict[str, Any]) -> dict[str, Any]:
    return {**{key: move.get(key) for key in ("tenantId", "status", "fromRegion", "toRegion", "files",
                                              "writesPausedMs", "startedAt", "finishedAt", "error", "runs")},
            "tables": move.get("tables") or {}}


def start_move(ctx: TenantContext, tenant_id: str, to_region: str) -> dict[str, Any]:
    tenant = own_tenant(ctx, tenant_id)
    here = cells.here()
    if not cells.multi_cell():
        raise Conflict("This deployment has a single cell: there is no other cell to move the tenant to.",
                       {"resource": "migration", "reason": "single_cell"})
    if not cells.allows(to_region):
        raise ValidationFailed("The region has no cell in this deployment (GET /regions marks available the "
                               "regions with one).", {"fields": [{"field": "toRegion", "in": "body",
                                                                  "reason": f"{to_region} has no cell"}]})
    if to_region == here:
        raise Conflict(f"The tenant's data already lives in {here}.", {"resource": "migration", "reason": "same_region",
                                                                       "homeRegion": here})
    prefs = tenant.get("regionPreferences") or {}
    if prefs.get("secondaryRegion") == to_region:
        raise Conflict(f"{to_region} holds the tenant's secondary copy: fail over to it (an operator), or name "
                       "another secondary region first.", {"resource": "migration", "reason": "secondary_region"})
    if prefs.get("dataResidencyRequired") and regions.REGIONS[to_region].jurisdiction != prefs.get("dataResidencyRegion"):
        raise Conflict(f"{to_region} lies outside the tenant's data residency region {prefs.get('dataResidencyRegion')}.",
                       {"resource": "migration", "reason": "outside_residency"})
    resources = directory_table.cell_resources(to_region)
    # Its webhook queues too: the tenant's deliveries are sent on there from the switch.
    if resources is None or not all((resources.get("queues") or {}).get(q) for q in cell_queues.WEBHOOK_QUEUES):
        raise Conflict(f"The cell in {to_region} has not published its resources yet; retry shortly.",
                       {"resource": "migration", "reason": "cell_unknown"})
    now = timeutil.iso(timeutil.now())
    move = {"tenantId": tenant_id, "status": "pending", "fromRegion": here, "toRegion": to_region,
            "files": {"copied": 0}, "writesPausedMs": None, "startedAt": now, "finishedAt": None, "error": None}
    try:
        directory_table.start_tenant_move(tenant_id, move)
    except ConditionFailed:
        raise Conflict("A move of this tenant is under way (GET /regions/migrations/:tenantId).",
                       {"resource": "migration", "reason": "move_under_way"}) from None
    transact([audit.entry(tenant_id, "tenant.move_started", "tenant", tenant_id, ctx=ctx,
                          changes={"homeRegion": {"from": here, "to": to_region}})])
    tenant_move_queue.send(tenant_id)
    return _view(move)


def get_move(ctx: TenantContext, tenant_id: str) -> dict[str, Any]:
    own_tenant(ctx, tenant_id)
    move = directory_table.tenant_move(tenant_id)
    if move is None:
        raise NotFound("The tenant has not been moved.", {"resource": "migration", "id": tenant_id})
    return _view(move)


def publish_cell(endpoints: dict[str, str] | None = None) -> dict[str, Any]:
    """This cell's resources into the directory, where a cell moving a tenant here reads them."""
    place = cell_tables.here(endpoints)
    view = place.view()
    directory_table.put_cell_resources(place.region, {k: v for k, v in view.items() if k != "region"})
    return view


# ---- what is the tenant's, and its fingerprint ------------------------------------------------

def plain(attr: dict[str, Any]) -> Any:
    """An attribute as stored, in Python: numbers as their text (a move compares and copies items it does
    not interpret, some with fractions), binary as bytes."""
    (kind, value), = attr.items()
    if kind == "M":
        return {k: plain(v) for k, v in value.items()}
    if kind == "L":
        return [plain(v) for v in value]
    if kind == "NULL":
        return None
    if kind in ("SS", "NS", "BS"):
        return sorted(value)
    return value


def plain_item(raw: dict[str, Any]) -> dict[str, Any]:
    return {k: plain(v) for k, v in raw.items()}


def cell_local(table: str, raw: dict[str, Any]) -> bool:
    """An item of the tenant that belongs to its cell's own queues and is never copied: a delivery's
    wait (the receipt handle of a message hidden on this cell's delivery queue)."""
    return table == DELIVERIES and raw.get("attemptKey", {}).get("S", "").startswith(WAITING_PREFIX)


def message_tenant(queue: str, body: str) -> str | None:
    """The tenant of a message of a webhook dead-letter queue: a delivery's (or a replay step's), or the
    event's of the bus's envelope; None for a message of another shape (left where it is)."""
    try:
        message = json.loads(body)
        if queue == cell_queues.EVENT_DEAD_LETTERS:
            return message["detail"]["tenantId"]
        return (message.get("replayStep") or message)["tenantId"]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def owns(table: str, tenant_id: str, webhooks: set[str]) -> Callable[[dict[str, Any]], bool]:
    """Whether an item (as stored) of the table is the tenant's."""
    rule = TABLE_RULES[table]

    def test(raw: dict[str, Any]) -> bool:
        owner = rule.owner(plain_item(raw))
        if owner is not None and owner.kind == "webhook":
            return owner.id in webhooks
        return owner == Owner("tenant", tenant_id)
    return test


def _is_sealed(attr: Any) -> bool:
    return isinstance(attr, dict) and "M" in attr and attr["M"].get("alg") == {"S": sealing.ALGORITHM}


def _without_keys_sealed(attr: Any) -> Any:
    """The attribute with every sealed data key left out: a copy's data key is sealed again under the
    new cell's key, the ciphertext itself is the same."""
    if isinstance(attr, dict) and "M" in attr:
        sealed = _is_sealed(attr)
        return {"M": {k: _without_keys_sealed(v) for k, v in attr["M"].items() if not (sealed and k == "encryptedKey")}}
    if isinstance(attr, dict) and "L" in attr:
        return {"L": [_without_keys_sealed(v) for v in attr["L"]]}
    return attr


def _with_home(table: str, raw: dict[str, Any], region: str) -> dict[str, Any]:
    """The tenant item homed in `region` (its primary region too); other items as they are."""
    if table != "TenantsTable":
        return raw
    raw = {**raw, "homeRegion": {"S": region}}
    prefs = raw.get("regionPreferences")
    if isinstance(prefs, dict) and "M" in prefs:
        raw["regionPreferences"] = {"M": {**prefs["M"], "primaryRegion": {"S": region}}}
    return raw


def as_compared(table: str, raw: dict[str, Any], to_region: str) -> dict[str, Any]:
    """What of an item (as stored) a copy must keep: the item, without its sealed data keys, and for
    the tenant item without the move's own mark and with the new home (both cells' copies alike)."""
    record = {k: _without_keys_sealed(v) for k, v in raw.items() if not (table == "TenantsTable" and k == "move")}
    return _with_home(table, record, to_region)


def digest(table: str, raw: dict[str, Any], to_region: str) -> str:
    text = json.dumps(as_compared(table, raw, to_region), sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def item_key(raw: dict[str, Any], key_names: Iterable[str]) -> str:
    return json.dumps({k: raw[k] for k in key_names}, sort_keys=True)


def checksum(digests: dict[str, str]) -> str:
    """One table's: of every item's key and digest, in key order."""
    return hashlib.sha256("\n".join(f"{k} {digests[k]}" for k in sorted(digests)).encode()).hexdigest()


def differences(source: dict[str, str], target: dict[str, str]) -> tuple[list[str], list[str]]:
    """The keys to copy (missing or different in the target) and to delete there (not in the source)."""
    return sorted(k for k, d in source.items() if target.get(k) != d), sorted(k for k in target if k not in source)


# ---- sealed values: their data keys sealed again under the new cell's key ----------------------

def sealed_places(table: str, raw: dict[str, Any], tenant_id: str) -> list[tuple[dict[str, Any], str, dict[str, str]]]:
    """(the map holding a sealed value, its attribute, its context) of every sealed value of the item
    (as stored): each area's module says its context (imported here only when a move runs)."""
    from svc_core.domain.agent_runs import _seal_context as run_context
    from svc_core.domain.storage import _credentials_context as storage_context
    from svc_core.domain.tenant_secrets import _context as secret_context
    from svc_core.domain.webhooks import _context as webhook_context

    record = plain_item(raw)
    found: list[tuple[dict[str, Any], str, dict[str, str]]] = []
    if table == "SecretsTable" and _is_sealed(raw.get("sealed")):
        found.append((raw, "sealed", secret_context(tenant_id, record["id"], int(record["version"]))))
    elif table == "WebhooksTable":
        for secret in (raw.get("secrets") or {}).get("L", []):
            if _is_sealed(secret.get("M", {}).get("sealed")):
                found.append((secret["M"], "sealed", webhook_context(tenant_id, record["id"])))
    elif table == "RunsTable" and _is_sealed(raw.get("conversation")):
        found.append((raw, "conversation", run_context(tenant_id, record["id"])))
    elif table == "OAuthConnectionsTable" and _is_sealed(raw.get("tokens")):
        found.append((raw, "tokens", {"tenantId": tenant_id, "connectionId": record["id"]}))
    elif table == "TenantsTable" and _is_sealed((raw.get("storage") or {}).get("M", {}).get("byosCredentials")):
        found.append((raw["storage"]["M"], "byosCredentials", storage_context(tenant_id)))
    return found


def rewrapped(table: str, raw: dict[str, Any], tenant_id: str, target: Place) -> dict[str, Any]:
    """The item with its sealed values' data keys sealed by the other cell's key (a copy: the source's
    item stays as read)."""
    if table not in ("SecretsTable", "WebhooksTable", "RunsTable", "OAuthConnectionsTable", "TenantsTable"):
        return raw
    raw = json.loads(json.dumps(raw))
    for holder, name, context in sealed_places(table, raw, tenant_id):
        sealed = {k: v["S"] for k, v in holder[name]["M"].items()}
        holder[name] = to_item({"v": sealing.rewrap(sealed, context, target.client("kms"), target.data_key)})["v"]
    return raw


def for_target(table: str, raw: dict[str, Any], tenant_id: str, target: Place) -> dict[str, Any]:
    """The item as the new cell stores it: its sealed values rewrapped, and the tenant item arriving
    (the new cell sends its requests back until the switch)."""
    raw = rewrapped(table, raw, tenant_id, target)
    if table == "TenantsTable":
        raw = _with_home(table, raw, target.region)
        raw["move"] = to_item({"m": {"phase": ARRIVING, "fromRegion": cells.here()}})["m"]
    return raw


# ---- the steps ------------------------------------------------------------------------------------

class Mover:
    """One run of the worker over a move (the directory's MOVE item); `save` records progress."""

    def __init__(self, move: dict[str, Any], source: Place, target: Place, *, sleep=time.sleep,
                 clock=time.monotonic) -> None:
        self.move, self.source, self.target = move, source, target
        self.home = target.region if target else ""   # where the copies say the tenant lives (a move: the new cell)
        self.tenant_id = move["tenantId"]
        self.sleep, self.clock = sleep, clock
        self._webhooks: set[str] | None = None

    def save(self, **changes: Any) -> None:
        self.move.update(changes)
        directory_table.save_tenant_move(self.tenant_id, self.move)

    # -- items --
    def webhooks(self) -> set[str]:
        if self._webhooks is None:
            test = owns("WebhooksTable", self.tenant_id, set())
            self._webhooks = {raw["id"]["S"] for raw in self._items(self.source, "WebhooksTable", test)}
        return self._webhooks

    def _items(self, place: Place, table: str, test: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        return [raw for raw in cell_tables.scan(place, table) if test(raw)]

    def fingerprints(self, place: Place, table: str, *, every: bool = False) -> dict[str, tuple[str, dict[str, Any]]]:
        """The tenant's items of the table in a cell: key -> (digest, item); those a copy carries,
        or every one."""
        keys = cell_tables.key_names(place, table)
        test = owns(table, self.tenant_id, self.webhooks())
        return {item_key(raw, keys): (digest(table, raw, self.home), raw)
                for raw in self._items(place, table, test) if every or not cell_local(table, raw)}

    def prepared(self, table: str, raw: dict[str, Any]) -> dict[str, Any]:
        """An item of the old cell as the new one stores it."""
        return for_target(table, raw, self.tenant_id, self.target)

    def sync_table(self, table: str) -> dict[str, Any]:
        """Make the new cell's copy of the table equal to the old one's: {copied, deleted, count, checksum}."""
        source, target = self.fingerprints(self.source, table), self.fingerprints(self.target, table)
        copy, extra = differences({k: v[0] for k, v in source.items()}, {k: v[0] for k, v in target.items()})
        cell_tables.put_all(self.target, table, [self.prepared(table, source[k][1]) for k in copy])
        cell_tables.delete_all(self.target, table, [json.loads(k) for k in extra])
        return {"copied": len(copy), "deleted": len(extra), "count": len(source),
                "checksum": checksum({k: v[0] for k, v in source.items()})}

    def verify_table(self, table: str) -> bool:
        source, target = self.fingerprints(self.source, table), self.fingerprints(self.target, table)
        return checksum({k: v[0] for k, v in source.items()}) == checksum({k: v[0] for k, v in target.items()})

    # -- files --
    def sync_files(self) -> int:
        copied = 0
        for prefix in OBJECT_PREFIXES:
            prefix = f"{prefix}{self.tenant_id}/"
            source, target = cell_tables.objects(self.source, prefix), cell_tables.objects(self.target, prefix)
            for key, etag in source.items():
                if target.get(key) != etag:
                    cell_tables.copy_object(self.source, self.target, key)
                    copied += 1
            for key in target:
                if key not in source:
                    cell_tables.delete_every_version(self.target, key)
        return copied

    def files_equal(self) -> bool:
        return all(cell_tables.objects(self.source, f"{p}{self.tenant_id}/") ==
                   cell_tables.objects(self.target, f"{p}{self.tenant_id}/") for p in OBJECT_PREFIXES)

    # -- the run --
    def run(self) -> None:
        self.save(runs=int(self.move.get("runs") or 0) + 1)
        step = self.move["status"]
        if step in ("pending", "copying"):
            self.save(status="copying")
            self.copy()
            step = "verifying"
        if step == "verifying":
            self.save(status="verifying")
            for table in COPIED:
                self.sync_table(table)
            self.sync_files()
            step = "switching"
        if step == "switching":
            self.switch()
            step = "cleaning"
        if step == "cleaning":
            self.clean()

    def copy(self) -> None:
        tables = self.move.setdefault("tables", {})
        for table in COPIED:
            if (tables.get(table) or {}).get("copied") is not None:
                continue   # recorded: copied by an earlier run
            started = time.monotonic()
            done = self.sync_table(table)
            tables[table] = {"copied": done["count"], "verified": None, "copiedInRun": self.move["runs"],
                             "copyMs": round((time.monotonic() - started) * 1000)}
            self.save(tables=tables)
        if not self.move.get("files", {}).get("done"):
            self.sync_files()
            copied = sum(len(cell_tables.objects(self.source, f"{p}{self.tenant_id}/")) for p in OBJECT_PREFIXES)
            self.save(files={"copied": copied, "done": True})

    def _tenant_key(self) -> dict[str, Any]:
        return {"id": {"S": self.tenant_id}}

    def switch(self) -> None:
        self.save(status="switching")
        if not self.move.get("frozenAt"):
            cell_tables.update(self.source, "TenantsTable", self._tenant_key(), UpdateExpression="SET #m = :m",
                               ExpressionAttributeNames={"#m": "move"},
                               ExpressionAttributeValues={":m": to_item({"m": {"phase": FROZEN,
                                                                               "toRegion": self.target.region}})["m"]})
            self.save(frozenAt=timeutil.iso(timeutil.now()), frozenAtMs=round(time.time() * 1000))
        # Every container has read the tenant's policy since the freeze (it keeps it this long), so
        # none accepts a write any more; then the old cell's outbox publishes what was written before.
        waited = time.time() - int(self.move["frozenAtMs"]) / 1000
        self.sleep(max(0.0, settings().tenant_policy_cache_seconds + 1 - waited))
        self.wait_for_outbox()
        tables = self.move["tables"]
        for table in COPIED:
            for _attempt in range(FINAL_SYNC_ATTEMPTS):
                done = self.sync_table(table)
                # The deliveries' copy is of this moment: the old cell's deliveries record on until the
                # clean-up, whose sweep adds what they wrote.
                if table == DELIVERIES or self.verify_table(table):
                    break
            else:
                raise RuntimeError(f"{table}: the copy still differs after {FINAL_SYNC_ATTEMPTS} attempts")
            tables[table] = {**tables.get(table, {}), "copied": done["count"], "verified": done["count"],
                             "checksum": done["checksum"]}
        self.sync_files()
        if not self.files_equal():
            raise RuntimeError("the files differ after the final copy")
        files = sum(len(cell_tables.objects(self.target, f"{p}{self.tenant_id}/")) for p in OBJECT_PREFIXES)
        self.save(tables=tables, files={"copied": files, "verified": files, "done": True})
        # The switch: the new cell's tenant item loses its mark, the old one's says moved, and every
        # cell's replica of the directory homes the tenant in the new cell.
        cell_tables.update(self.target, "TenantsTable", self._tenant_key(), UpdateExpression="REMOVE #m",
                           ExpressionAttributeNames={"#m": "move"})
        cell_tables.update(self.source, "TenantsTable", self._tenant_key(), UpdateExpression="SET #m.phase = :p",
                           ExpressionAttributeNames={"#m": "move"}, ExpressionAttributeValues={":p": {"S": MOVED}})
        home = directory_table.tenant_home(self.tenant_id) or {"status": directory_table.ACTIVE}
        item = directory_table.home_item(self.tenant_id, {k: v for k, v in home.items()
                                                         if k not in ("updatedAt", "writtenIn")}
                                         | {"homeRegion": self.target.region})
        for place in (self.target, self.source):
            cell_tables.put_all(place, cell_tables.DIRECTORY, [item])
        switched_ms = round(time.time() * 1000)
        self.save(status="cleaning", writesPausedMs=switched_ms - int(self.move["frozenAtMs"]),
                  switchedAt=timeutil.iso(switched_ms / 1000), switchedAtMs=switched_ms)

    def wait_for_outbox(self) -> None:
        """Until every event of the tenant in the old cell's outbox is in its event log (published)."""
        deadline = self.clock() + settings().tenant_move_outbox_drain_seconds
        while True:
            pending = self.unpublished()
            if not pending:
                return
            if self.clock() > deadline:
                raise RuntimeError(f"{len(pending)} events of the tenant were not published in time")
            self.sleep(0.5)

    def unpublished(self) -> list[str]:
        test = owns("OutboxTable", self.tenant_id, set())
        outbox = [raw["id"]["S"] for raw in self._items(self.source, "OutboxTable", test)]
        logged = {raw["id"]["S"] for raw in self._items(self.source, "EventsTable",
                                                                  owns("EventsTable", self.tenant_id, set()))}
        return [event_id for event_id in outbox if event_id not in logged]

    def deliveries_here(self) -> tuple[dict[str, dict[str, Any]], int]:
        """The old cell's deliveries of the tenant: those waiting hidden for a retry (key -> the wait:
        receiptHandle, attempt, dueAt), and how many are sending now (a claim whose lease runs)."""
        test = owns(DELIVERIES, self.tenant_id, self.webhooks())
        keys, now = cell_tables.key_names(self.source, DELIVERIES), time.time()
        waiting, sending = {}, 0
        for raw in self._items(self.source, DELIVERIES, test):
            record, key = plain_item(raw), item_key(raw, keys)
            attempt_key = str(record.get("attemptKey", ""))
            if attempt_key.startswith(WAITING_PREFIX):
                waiting[key] = record
            elif attempt_key.startswith(DELIVERED_PREFIX) and record.get("state") == "sending" \
                    and float(record.get("leaseUntil") or 0) > now:
                sending += 1
        return waiting, sending

    def send_deliveries_on(self) -> int:
        """Bring the tenant's deliveries hidden for a retry in the old cell back at once: the delivery
        function sends each on to the new cell with its schedule (and ends its wait here). Until none
        waits or sends here; how many were brought back."""
        deadline = self.clock() + settings().tenant_move_delivery_drain_seconds
        released: dict[str, bool] = {}
        while True:
            waiting, sending = self.deliveries_here()
            for key, wait in waiting.items():
                if key not in released:
                    released[key] = cell_queues.release(self.source, cell_queues.DELIVERIES, wait["receiptHandle"])
            # A handle that no longer holds its message: received again since (being sent on now) or gone.
            pending = [key for key in waiting if released[key]]
            if not pending and not sending:
                return sum(released.values())
            if self.clock() > deadline:
                raise RuntimeError(f"{len(pending)} deliveries of the tenant still wait in the old cell and {sending} "
                                   f"are sending there after {settings().tenant_move_delivery_drain_seconds:.0f} s")
            self.sleep(1.0)

    def carry_dead_letters(self) -> int:
        """The tenant's messages of the old cell's webhook dead-letter queues, onto the new cell's (an
        operator's redrive happens there now); how many. Other tenants' are left as they were."""
        carried = 0
        for queue in DEAD_LETTER_QUEUES:
            others = []
            for message in cell_queues.receive_all(self.source, queue, DEAD_LETTER_HOLD_SECONDS):
                if message_tenant(queue, message.body) == self.tenant_id:
                    cell_queues.send(self.target, queue, message.body)
                    cell_queues.delete(self.source, queue, message.receipt_handle)
                    carried += 1
                else:
                    others.append(message.receipt_handle)
            for handle in others:
                cell_queues.release(self.source, queue, handle)
        return carried

    def sweep_deliveries(self) -> int:
        """Add to the new cell what the old cell's deliveries recorded after the switch's copy: an item
        the new cell lacks, and an event's delivered mark (the receiver has it). An item both hold stays
        the new cell's (the home writes on); nothing of the new cell is deleted. How many were added."""
        source, target = self.fingerprints(self.source, DELIVERIES), self.fingerprints(self.target, DELIVERIES)
        added = [raw for key, (fingerprint, raw) in source.items()
                 if key not in target or (raw.get("state", {}).get("S") == "delivered" and target[key][0] != fingerprint)]
        cell_tables.put_all(self.target, DELIVERIES, [self.prepared(DELIVERIES, raw) for raw in added])
        return len(added)

    def give_up(self) -> None:
        """The move failed before its switch: the old cell serves on (writes again), the new cell's
        copies are deleted."""
        cell_tables.update(self.source, "TenantsTable", self._tenant_key(), UpdateExpression="REMOVE #m",
                           ExpressionAttributeNames={"#m": "move"})
        self.delete_copies()
        self.save(status="failed", finishedAt=timeutil.iso(timeutil.now()))

    def delete_copies(self) -> None:
        """Every item and object of the tenant in the other cell: its copies, and what that cell wrote
        itself while it was the tenant's home (a former home dropped as a secondary: its outbox and
        idempotency records), the tenant item last."""
        # The counters a request sent to that cell wrote (answered 421 there): found by key id, before the keys go.
        cell_tables.delete_all(self.target, "RateLimitsTable", self.rate_limit_keys(self.target))
        for table in DELETED:
            cell_tables.delete_all(self.target, table, [json.loads(k) for k in self.fingerprints(self.target, table,
                                                                                                every=True)])
        for prefix in OBJECT_PREFIXES:
            cell_tables.delete_every_version(self.target, f"{prefix}{self.tenant_id}/")

    def rate_limit_keys(self, place: Place | None = None) -> list[dict[str, Any]]:
        """The keys of the tenant's counters and marks in a cell's rate-limits table (the old cell's, or
        `place`'s): its own (tenant#, streams#tenant#) and its API keys' (a revoked key's mark has no
        end). A move copies none: counters start again in the new cell, and a key's revocation is in
        its own item there."""
        place = place or self.source
        test = owns("ApiKeysTable", self.tenant_id, set())
        key_ids = {raw["id"]["S"] for raw in self._items(place, "ApiKeysTable", test)
                   if raw.get("pk", {}).get("S", "").startswith("KEY#")}
        rule = TABLE_RULES["RateLimitsTable"].owner
        wanted = {Owner("tenant", self.tenant_id), *(Owner("api_key", key_id) for key_id in key_ids)}
        return [{"pk": raw["pk"]} for raw in cell_tables.scan(place, "RateLimitsTable")
                if rule(plain_item(raw)) in wanted]

    def clean(self) -> None:
        self.save(status="cleaning")
        # Every run of the delivery and fan-out functions that began before the switch (and read the
        # tenant as homed here) has ended by then; later ones send the tenant's messages on.
        switched = int(self.move.get("switchedAtMs") or time.time() * 1000) / 1000
        self.sleep(max(0.0, switched + settings().tenant_move_delivery_grace_seconds - time.time()))
        sent_on = self.send_deliveries_on()
        dead_letters = self.carry_dead_letters()
        swept = self.sweep_deliveries()
        self.save(deliveries={"sentOn": sent_on, "deadLetters": dead_letters, "recordsAdded": swept})
        webhooks = self.webhooks()
        counters = self.rate_limit_keys()  # before the keys' items go: the counters are found by key id
        cell_tables.delete_all(self.source, "RateLimitsTable", counters)
        for table in DELETED:
            test = owns(table, self.tenant_id, webhooks)
            keys = cell_tables.key_names(self.source, table)
            cell_tables.delete_all(self.source, table, [{k: raw[k] for k in keys}
                                                        for raw in self._items(self.source, table, test)])
        for prefix in OBJECT_PREFIXES:
            cell_tables.delete_every_version(self.source, f"{prefix}{self.tenant_id}/")
        self.save(status="done", finishedAt=timeutil.iso(timeutil.now()), error=None)


def run(tenant_id: str, *, sleep=time.sleep) -> str | None:
    """The worker's step over the tenant's move (a message of TenantMoveQueue): its status after."""
    move = directory_table.tenant_move(tenant_id)
    if move is None or move.get("status") in ("done", "failed") or move.get("fromRegion") != cells.here():
        return move and move.get("status")
    now_ms = round(time.time() * 1000)
    if not directory_table.claim_tenant_move(tenant_id, now_ms, now_ms + LEASE_SECONDS * 1000):
        return "running"   # another run holds it (a message received twice, or one sent to resume it)
    move = directory_table.tenant_move(tenant_id)
    mover = Mover({**move, "tenantId": tenant_id}, cell_tables.here(), peer(move["toRegion"]), sleep=sleep)
    try:
        mover.run()
        mover.save(leaseUntil=None)
    except Exception as exc:
        attempts = int(mover.move.get("attempts") or 0) + 1
        mover.save(attempts=attempts, error=f"{type(exc).__name__}: {exc}"[:500], leaseUntil=None)
        if attempts >= MAX_ATTEMPTS and mover.move["status"] != "cleaning":
            mover.give_up()
            return "failed"
        raise   # the message comes back after its visibility timeout: the run resumes from the step recorded
    return mover.move["status"]
