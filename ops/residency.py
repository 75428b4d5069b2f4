"""The residency audit: is every item, object and queued message of a tenant in a region the tenant allows?

    python -m ops residency audit --local 3000,3001          the local cells, by their gateways' ports
    python -m ops residency audit --stack svc-api-us --region us-east-1 --stack svc-api-eu --region eu-central-1
    python -m ops residency audit [...] --json               the summary and every finding as one JSON document
    python -m ops residency audit [...] --no-queues          leave the queues alone

Each cell is one deployment of template.yaml in one region. The audit scans every table of the
template in every cell (but the directory), each cell's files bucket (every version of every object),
each cell's queues (every visible message, read and given back: read_queue; --no-queues skips them) and
the global directory (every cell's replica, the latest version of each entry). For each item it finds
the owner by the table's rule in TABLE_RULES (a message: its queue's in QUEUE_RULES): a tenant, a user,
an id other items resolve (Links: a webhook's or an API key's tenant, a sign-in's or a user credential's
account and tenants, the account of an address), or nobody (the cell's own operational records). It
compares the cell's region with the owner's allowed regions from the directory: a tenant's home and
secondary region, a user's home. It reports:
- an item, object or queued message outside its owner's allowed regions (messages: one finding per
  queue and tenant, with how many);
- an item whose tenant (or user) has no entry in the directory;
- an item that no rule attributes (a shape the rules do not know);
- a directory entry with no home region, or a home (or secondary) outside the jurisdiction the
  tenant's residency requires (its regionPreferences: dataResidencyRequired, dataResidencyRegion).
It exits 1 when it reports anything, 0 when every item is in place.

The core (Audit, over the rules of svc_core/contracts/tenant_items.py) is plain Python over items; reading the cells (Cell,
scan_cells) is boto3's.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from svc_core.contracts import regions
from svc_core.contracts.tenant_items import (  # noqa: F401
    CELL,
    OBJECT_PREFIXES,
    OPAQUE,
    QUEUE_RULES,
    TABLE_RULES,
    Owner,
    Rule,
    message_owner,
    object_owner,
)

DIRECTORY = "DirectoryTable"


# ---- the audit over items ----------------------------------------------------------------------


@dataclass
class Directory:
    """The directory's routing facts the audit needs: tenants' and users' regions. Fed every cell's
    replica: an entry seen in several keeps its latest version (updatedAt), as a replica may lag."""
    tenants: dict[str, dict[str, Any]] = field(default_factory=dict)  # tenantId -> the HOME item
    users: dict[str, dict[str, Any]] = field(default_factory=dict)    # userId -> the HOME item
    keys: set[tuple[str, str]] = field(default_factory=set)

    @property
    def items(self) -> int:
        return len(self.keys)

    def add(self, item: dict[str, Any]) -> None:
        pk, sk = str(item.get("pk", "")), str(item.get("sk", ""))
        self.keys.add((pk, sk))
        kind, _, owner_id = pk.partition("#")
        entries = {"TENANT": self.tenants, "USER": self.users}.get(kind) if sk == "HOME" else None
        if entries is None:
            return
        known = entries.get(owner_id)
        if known is None or str(item.get("updatedAt", "")) >= str(known.get("updatedAt", "")):
            entries[owner_id] = item


    def allowed(self, owner: Owner) -> list[str] | None:
        """The regions the owner's items may be in; None when the directory does not know the owner."""
        home = (self.tenants if owner.kind == "tenant" else self.users).get(owner.id)
        if home is None:
            return None
        return [r for r in (home.get("homeRegion"), home.get("secondaryRegion")) if r]


@dataclass
class Links:
    """Whose the ids that some items name are, as the cells' other items say: a webhook's or an API key's
    tenant, a sign-in's user and the tenants it was used for, the account an address claims, each user's
    tenants. Fed every item (and the directory's) before the items naming those ids are placed:
    scan_cells reads LINKED_TABLES last."""
    webhooks: dict[str, str] = field(default_factory=dict)             # webhookId -> tenantId
    api_keys: dict[str, str] = field(default_factory=dict)             # keyId -> tenantId
    sessions: dict[str, tuple[str, set[str]]] = field(default_factory=dict)  # sessionId -> (userId, tenantIds)
    emails: dict[str, str] = field(default_factory=dict)               # normalised address -> userId
    memberships: dict[str, set[str]] = field(default_factory=dict)     # userId -> tenantIds

    def learn(self, table: str, item: dict[str, Any]) -> None:
        if table == "WebhooksTable" and item.get("id") and item.get("tenantId"):
            self.webhooks[item["id"]] = item["tenantId"]
        elif table == "ApiKeysTable" and item.get("tenantId"):
            key_id = item.get("keyId") or (item.get("id") if str(item.get("pk", "")).startswith("KEY#") else None)
            if key_id:
                self.api_keys[key_id] = item["tenantId"]
        elif table == "SessionsTable" and item.get("id") and item.get("userId"):
            tenants = {t for t in [item.get("tenantId"), *(item.get("tenantIds") or ())] if t}
            self.sessions[item["id"]] = (item["userId"], tenants)
        elif table == "UsersTable" and item.get("sk") == "EMAIL" and item.get("userId"):
            self.emails[str(item.get("pk", "")).removeprefix("EMAIL#")] = item["userId"]
        elif table == "UsersTable" and str(item.get("sk", "")).startswith("MEMBER#") and item.get("userId"):
            self._member(item["userId"], item.get("tenantId") or str(item["sk"])[len("MEMBER#"):])

    def learn_directory(self, item: dict[str, Any]) -> None:
        """The directory names a live key value's tenant and every membership, in every cell."""
        pk, sk = str(item.get("pk", "")), str(item.get("sk", ""))
        if sk == "KEY" and item.get("keyId") and item.get("tenantId"):
            self.api_keys.setdefault(item["keyId"], item["tenantId"])
        elif pk.startswith("USER#") and sk.startswith("MEMBER#"):
            self._member(pk[len("USER#"):], item.get("tenantId") or sk[len("MEMBER#"):])

    def _member(self, user_id: str, tenant_id: str) -> None:
        self.memberships.setdefault(user_id, set()).add(tenant_id)

    def owners(self, owner: Owner) -> list[Owner] | None:
        """The tenants and users whose regions may hold an item of this owner (any one of them will do);
        None when no item names whose the id is."""
        if owner.kind in ("tenant", "user"):
            return [owner]
        if owner.kind in ("webhook", "api_key"):
            tenant_id = (self.webhooks if owner.kind == "webhook" else self.api_keys).get(owner.id)
            return [Owner("tenant", tenant_id)] if tenant_id else None
        if owner.kind == "email":
            user_id = self.emails.get(owner.id)
            return [Owner("user", user_id)] if user_id else None
        if owner.kind == "session":
            found = self.sessions.get(owner.id)
            return self._signed_in(*found) if found else None
        if owner.kind == "user_credential":
            return self._signed_in(owner.id, set())
        return None

    def _signed_in(self, user_id: str, tenants: set[str]) -> list[Owner]:
        """A user's credential is counted where its requests went (a tenant's cell: the user may be a
        member from another cell) and revoked in the account's cell: either place is in place."""
        tenants = tenants | self.memberships.get(user_id, set())
        return [Owner("user", user_id), *(Owner("tenant", t) for t in sorted(tenants))]


@dataclass
class Finding:
    region: str   # the cell's, or "directory"
    where: str    # the table's or queue's logical id, "bucket", or DirectoryTable
    key: Any      # the item's key attributes, the object's key (and version), or a queue's {messages, messageIds}
    owner: str
    problem: str
    allowed: list[str] = field(default_factory=list)

    def view(self) -> dict[str, Any]:
        return {"region": self.region, "where": self.where, "key": self.key, "owner": self.owner,
                "problem": self.problem, "allowed": self.allowed}


@dataclass(frozen=True)
class Verdict:
    """What the audit makes of one thing: counted under a tally (the cell's own, not attributable...), or
    placed: its owner, and the problem when it is out of place."""
    tally: str | None = None    # a CellCount field
    owner: str = ""
    problem: str | None = None
    allowed: tuple[str, ...] = ()


@dataclass
class QueueCount:
    """One queue of one cell: the messages read, by owner (a tenant, a user, or a tally), and those that
    could not be read (in flight: a consumer's or a retry's hold; delayed)."""
    region: str
    queue: str
    read: int = 0
    not_read: int = 0
    by_owner: Counter[str] = field(default_factory=Counter)
    misplaced: dict[tuple[str, str, tuple[str, ...]], list[str]] = field(default_factory=dict)

    def view(self) -> dict[str, Any]:
        return {"region": self.region, "queue": self.queue, "read": self.read, "notRead": self.not_read,
                "byOwner": dict(sorted(self.by_owner.items()))}


@dataclass
class CellCount:
    region: str
    items: int = 0
    objects: int = 0
    messages: int = 0       # read from the cell's queues
    out_of_place: int = 0
    cell_records: int = 0   # the cell's own (no tenant's)
    opaque: int = 0         # not attributable by design (IdempotencyTable)
    unresolved: int = 0     # a rate-limit item whose credential or account no item names

    def view(self) -> dict[str, Any]:
        return {"region": self.region, "items": self.items, "objects": self.objects, "messages": self.messages,
                "outOfPlace": self.out_of_place,
                "cellRecords": self.cell_records, "notAttributable": self.opaque, "unresolved": self.unresolved}


class Audit:
    """Feed it the directory, then every cell's items and objects; it keeps the findings."""

    def __init__(self, directory: Directory, links: Links | None = None) -> None:
        self.directory = directory
        self.links = links or Links()
        self.cells: dict[str, CellCount] = {}
        self.findings: list[Finding] = []
        self.queues: list[QueueCount] = []
        self.residency: dict[str, dict[str, Any]] = {}  # tenantId -> its regionPreferences, from the tenants tables

    def _cell(self, region: str) -> CellCount:
        return self.cells.setdefault(region, CellCount(region))

    def item(self, region: str, table: str, item: dict[str, Any], key: dict[str, Any]) -> None:
        count = self._cell(region)
        count.items += 1
        self.links.learn(table, item)
        if table == "TenantsTable" and item.get("id"):
            self.residency[item["id"]] = item.get("regionPreferences") or {}
        rule = TABLE_RULES.get(table)
        self._place(count, table, key, rule.owner(item) if rule else None)

    def object(self, region: str, key: str, version: str | None = None) -> None:
        count = self._cell(region)
        count.objects += 1
        self._place(count, "bucket", {"key": key, "version": version} if version else key, object_owner(key))

    def message(self, queue: QueueCount, message_id: str, body: str) -> None:
        """One message read from a queue: counted by its tenant; out of place, kept for queue_findings."""
        count = self._cell(queue.region)
        count.messages += 1
        queue.read += 1
        verdict = self._judge(queue.region, message_owner(queue.queue, body))
        if verdict.tally is not None:
            queue.by_owner[verdict.tally] += 1
            return
        queue.by_owner[verdict.owner] += 1
        if verdict.problem is not None:
            queue.misplaced.setdefault((verdict.owner, verdict.problem, verdict.allowed), []).append(message_id)

    def queue_findings(self, queue: QueueCount) -> None:
        """A finding per tenant (and problem) of the queue's messages out of place: how many, and a few ids."""
        for (owner, problem, allowed), ids in queue.misplaced.items():
            self._find(self._cell(queue.region), queue.queue, {"messages": len(ids), "messageIds": ids[:5]},
                       owner, problem, list(allowed))
        self.queues.append(queue)

    def _place(self, count: CellCount, where: str, key: Any, owner: Owner | None) -> None:
        verdict = self._judge(count.region, owner)
        if verdict.tally is not None:
            setattr(count, verdict.tally, getattr(count, verdict.tally) + 1)
        elif verdict.problem is not None:
            self._find(count, where, key, verdict.owner, verdict.problem, list(verdict.allowed))

    def _judge(self, region: str, owner: Owner | None) -> Verdict:
        """Whose a thing in this region is and whether it may be here."""
        if owner is None:
            return Verdict(owner="?", problem="no rule finds its tenant")
        if owner is CELL or owner.kind == "cell":
            return Verdict(tally="cell_records")
        if owner.kind == "opaque":
            return Verdict(tally="opaque")
        owners = self.links.owners(owner)
        if owners is None:
            return self._unresolved(owner)
        label = _label(owner, owners)
        known = [allowed for o in owners if (allowed := self.directory.allowed(o)) is not None]
        allowed = tuple(dict.fromkeys(region for regions in known for region in regions))
        if not known:
            return Verdict(owner=label, problem=f"its {owners[0].kind} is in no directory")
        if region in allowed:
            return Verdict(owner=label)
        return Verdict(owner=label, problem="outside its allowed regions", allowed=allowed)

    @staticmethod
    def _unresolved(owner: Owner) -> Verdict:
        """An id no item resolves. A rate-limit item may outlive what it counts (a revoked sign-in's mark
        has no end, the sign-in's item expires) or count what never was (failed sign-ins to an address
        no account claims): counted, not found. A delivery mark's webhook is kept while it has marks:
        without one, no rule finds the owner."""
        if owner.kind == "webhook":
            return Verdict(owner="?", problem="no rule finds its tenant")
        return Verdict(tally="unresolved")

    def _find(self, count: CellCount, where: str, key: Any, owner: str, problem: str,
              allowed: list[str] | None = None) -> None:
        count.out_of_place += 1
        self.findings.append(Finding(count.region, where, key, owner, problem, allowed or []))

    def directory_problems(self) -> None:
        """The directory's own entries: a home for everyone, within the tenant's required jurisdiction."""
        for kind, homes in (("tenant", self.directory.tenants), ("user", self.directory.users)):
            for owner_id, home in homes.items():
                key = {"pk": home.get("pk"), "sk": home.get("sk")}
                region = home.get("homeRegion")
                if not region:
                    self._directory_finding(key, f"{kind} {owner_id}", "no home region")
                    continue
                if kind != "tenant":
                    continue
                prefs = self.residency.get(owner_id) or {}
                required = prefs.get("dataResidencyRegion") if prefs.get("dataResidencyRequired") else None
                for name in ("homeRegion", "secondaryRegion"):
                    placed = home.get(name)
                    known = regions.REGIONS.get(placed) if placed else None
                    if placed and known is None:
                        self._directory_finding(key, f"tenant {owner_id}", f"{name} {placed} is no region of the "
                                                                            "catalogue")
                    elif known is not None and required and known.jurisdiction != required:
                        self._directory_finding(key, f"tenant {owner_id}", f"{name} {placed} is outside the "
                                                f"required jurisdiction {required}")

    def _directory_finding(self, key: dict[str, Any], owner: str, problem: str) -> None:
        self.findings.append(Finding("directory", DIRECTORY, key, owner, problem))

    def summary(self, seconds: float | None = None) -> dict[str, Any]:
        scanned = sum(c.items + c.objects + c.messages for c in self.cells.values())
        report: dict[str, Any] = {
            "cells": [c.view() for c in self.cells.values()],
            "queues": [q.view() for q in self.queues],
            "directory": {"items": self.directory.items, "tenants": len(self.directory.tenants),
                          "users": len(self.directory.users)},
            "scanned": scanned,
            "outOfPlace": len(self.findings),
            "findings": [f.view() for f in self.findings],
        }
        if seconds is not None:
            report["seconds"] = round(seconds, 3)
            report["perSecond"] = round(scanned / seconds) if seconds > 0 else None
        return report


# ---- reading the cells -------------------------------------------------------------------------


def resource_variables(template: dict[str, Any]) -> dict[str, str]:
    """Each resource the functions' environment names (template.yaml's Globals) -> its variable: a Ref,
    or an If whose first branch is a Ref (a resource another cell's stack may own)."""
    found = {}
    for name, value in template["Globals"]["Function"]["Environment"]["Variables"].items():
        if isinstance(value, dict) and "Fn::If" in value:
            value = value["Fn::If"][1]
        if isinstance(value, dict) and set(value) == {"Ref"} and value["Ref"] in template["Resources"]:
            found[value["Ref"]] = name
    return found


@dataclass
class Cell:
    """One cell to scan: its region and the functions' environment (the table and bucket names, and
    on the local stack the endpoints and credentials)."""
    region: str
    environment: dict[str, str]
    label: str = ""
    queues: dict[str, str] | None = None   # logical id -> URL (a deployed stack's); None: found by name

    def client(self, service: str):
        import boto3
        env = self.environment
        endpoint = (env.get("AWS_ENDPOINT_URL_DYNAMODB") if service == "dynamodb" else None) \
            or env.get("AWS_ENDPOINT_URL") or None
        credentials = {"aws_access_key_id": env["AWS_ACCESS_KEY_ID"],
                       "aws_secret_access_key": env.get("AWS_SECRET_ACCESS_KEY", "")} \
            if env.get("AWS_ACCESS_KEY_ID") else {}
        return boto3.client(service, region_name=self.region, endpoint_url=endpoint, **credentials)

    def where(self, service: str, name: str) -> tuple[str, str]:
        """What names one physical table or bucket: its endpoint (or region) and name."""
        env = self.environment
        endpoint = (env.get("AWS_ENDPOINT_URL_DYNAMODB") if service == "dynamodb" else None) \
            or env.get("AWS_ENDPOINT_URL") or self.region
        return endpoint, name


    def queue_urls(self, client, template: dict[str, Any]) -> dict[str, str]:
        """The template's queues in this cell: as given (a deployed stack's resources), else by the name the
        local stack gives each (its logical id: devstack/provision.py); a queue not there is left out."""
        if self.queues is not None:
            return dict(self.queues)
        found = {}
        for logical_id in (k for k, v in template["Resources"].items() if v["Type"] == "AWS::SQS::Queue"):
            try:
                found[logical_id] = client.get_queue_url(QueueName=logical_id)["QueueUrl"]
            except client.exceptions.QueueDoesNotExist:
                continue  # a queue of a condition this cell does not meet (ReplicaObjectsQueue: several cells)
        return found


def deployed_queues(stack_name: str, region: str | None) -> dict[str, str]:
    """A deployed stack's queues: logical id -> URL (an SQS queue's physical id), from CloudFormation."""
    import boto3
    pages = boto3.client("cloudformation", region_name=region).get_paginator("list_stack_resources")
    return {r["LogicalResourceId"]: r["PhysicalResourceId"] for page in pages.paginate(StackName=stack_name)
            for r in page["StackResourceSummaries"] if r["ResourceType"] == "AWS::SQS::Queue"}


# ---- reading a queue without consuming it --------------------------------------------------------
# SQS has no peek: a message is read by receiving it, which hides it for a visibility timeout and adds
# one to its ApproximateReceiveCount. The audit receives every visible message, holding each (hidden)
# until the whole queue is read so that no message is read twice, then makes them all visible again at
# once (ChangeMessageVisibility 0). Effects on the queue's consumers: a message is delayed by the time
# the walk takes (HOLD_SECONDS at most, more for a long queue), and its receive count is one higher (a
# webhook delivery's attempt numbers skip one, a chat turn is a receive nearer its last; a message already
# at its redrive policy's maxReceiveCount goes to its dead-letter queue on this receive, as a consumer's
# would move it). Messages in flight (a consumer's, or a webhook retry's delay) and delayed ones cannot
# be received: they are counted (the queue's attributes), not read.
HOLD_SECONDS = 30          # the walk's hold on each message: the walk of a queue of a few hundred
HOLD_PER_MESSAGE = 0.1     # more per visible message: about a receive of ten a second, with room
MAX_HOLD_SECONDS = 12 * 3600  # SQS's longest visibility timeout


def _hold_seconds(visible: int) -> int:
    return min(MAX_HOLD_SECONDS, HOLD_SECONDS + round(visible * HOLD_PER_MESSAGE))


def read_queue(client, url: str) -> tuple[list[tuple[str, str]], int]:
    """Every visible message of the queue, (id, body), given back visible after; and how many could not
    be read (in flight or delayed)."""
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
             "ApproximateNumberOfMessagesDelayed"]
    counts = {k: int(v) for k, v in client.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"].items()}
    not_read = counts.get(names[1], 0) + counts.get(names[2], 0)
    if counts.get(names[0], 0) == 0:
        return [], not_read   # nothing to receive: the queue is not touched
    read: dict[str, str] = {}
    held: list[str] = []
    try:
        while True:
            # Long polling (1 s) asks every server of the queue: a short poll may answer empty while
            # messages remain. A message seen again means its hold lapsed: the walk has gone round.
            answer = client.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1,
                                            VisibilityTimeout=_hold_seconds(counts[names[0]]))
            received = answer.get("Messages", [])
            held += [m["ReceiptHandle"] for m in received]
            fresh = [m for m in received if m["MessageId"] not in read]
            if not fresh:
                return list(read.items()), not_read
            read.update((m["MessageId"], m["Body"]) for m in fresh)
    finally:
        _give_back(client, url, held)


def _give_back(client, url: str, receipts: list[str]) -> None:
    """Make the held messages visible again (a message a consumer has since taken is refused: left as is)."""
    for start in range(0, len(receipts), 10):
        batch = receipts[start:start + 10]
        client.change_message_visibility_batch(QueueUrl=url, Entries=[
            {"Id": str(i), "ReceiptHandle": handle, "VisibilityTimeout": 0} for i, handle in enumerate(batch)])


def _scan(client, table: str) -> Iterator[dict[str, Any]]:
    from svc_core.adapters.dynamo import from_item
    for page in client.get_paginator("scan").paginate(TableName=table):
        for item in page.get("Items", []):
            yield from_item(item)


def _versions(client, bucket: str) -> Iterator[tuple[str, str | None]]:
    """Every stored version of every object (a noncurrent version is a copy of the data too)."""
    for page in client.get_paginator("list_object_versions").paginate(Bucket=bucket):
        for version in page.get("Versions", []):
            yield version["Key"], version.get("VersionId") if version.get("VersionId") != "null" else None


def _key_attributes(template: dict[str, Any]) -> dict[str, list[str]]:
    return {logical_id: [k["AttributeName"] for k in resource["Properties"]["KeySchema"]]
            for logical_id, resource in template["Resources"].items()
            if resource["Type"] in ("AWS::DynamoDB::Table", "AWS::DynamoDB::GlobalTable")}


def shared_resources(cells: Iterable[Cell], template: dict[str, Any]) -> list[str]:
    """Tables or buckets two cells name alike (the same endpoint and name): each cell needs its own."""
    variables = resource_variables(template)
    seen: dict[tuple[str, str], str] = {}
    shared = []
    for cell in cells:
        for logical_id in [*TABLE_RULES, "ProjectFilesBucket"]:
            name = cell.environment.get(variables.get(logical_id, ""), "")
            place = cell.where("dynamodb" if logical_id != "ProjectFilesBucket" else "s3", name)
            if name and place in seen and seen[place] != cell.region:
                shared.append(f"{logical_id} ({name}) of {seen[place]} and {cell.region}")
            seen.setdefault(place, cell.region)
    return shared


# Tables whose items name an id other tables resolve (Links): read after every other table.
LINKED_TABLES = ("WebhookDeliveriesTable", "RateLimitsTable")


def scan_cells(cells: list[Cell], template: dict[str, Any], queues: bool = True) -> Audit:
    """Read the directory (every cell's replica), then every table (a table at a time across the cells,
    the LINKED_TABLES last, so the ids they name are known in every cell), every bucket and (queues) every
    queue."""
    variables = resource_variables(template)
    keys = _key_attributes(template)
    directory, links = Directory(), Links()
    clients = {cell.region: (cell.client("dynamodb"), cell.client("s3")) for cell in cells}
    for cell in cells:
        for item in _scan(clients[cell.region][0], cell.environment[variables[DIRECTORY]]):
            directory.add(item)
            links.learn_directory(item)
    audit = Audit(directory, links)
    for table in [*(t for t in TABLE_RULES if t not in LINKED_TABLES), *LINKED_TABLES]:
        for cell in cells:
            for item in _scan(clients[cell.region][0], cell.environment[variables[table]]):
                audit.item(cell.region, table, item, {k: item.get(k) for k in keys[table]})
    for cell in cells:
        for key, version in _versions(clients[cell.region][1], cell.environment[variables["ProjectFilesBucket"]]):
            audit.object(cell.region, key, version)
    if queues:
        for cell in cells:
            scan_queues(audit, cell, template)
    audit.directory_problems()
    return audit


def scan_queues(audit: Audit, cell: Cell, template: dict[str, Any]) -> None:
    """Every message of every queue of the cell, read and given back (read_queue)."""
    client = cell.client("sqs")
    for logical_id, url in cell.queue_urls(client, template).items():
        messages, not_read = read_queue(client, url)
        queue = QueueCount(cell.region, logical_id, not_read=not_read)
        for message_id, body in messages:
            audit.message(queue, message_id, body)
        audit.queue_findings(queue)


def run(cells: list[Cell], template: dict[str, Any], as_json: bool, out=print, queues: bool = True) -> int:
    regions_named = [c.region for c in cells]
    if len(set(regions_named)) != len(regions_named):
        out(f"two cells name the same region ({', '.join(regions_named)}): each cell is one region")
        return 2
    shared = shared_resources(cells, template)
    if shared:
        out("cells share resources, so the audit cannot tell their items apart: " + "; ".join(shared))
        return 2
    started = time.monotonic()
    audit = scan_cells(cells, template, queues)
    report = audit.summary(time.monotonic() - started)
    if as_json:
        out(json.dumps(report, default=str))
    else:
        _print_report(audit, report, out)
    return 1 if audit.findings else 0


def _print_report(audit: Audit, report: dict[str, Any], out) -> None:
    for count in audit.cells.values():
        out(f"{count.region:<16} {count.items:>9} items {count.objects:>7} objects {count.messages:>7} messages   "
            f"{count.out_of_place} out of place   ({count.cell_records} the cell's own, "
            f"{count.opaque} not attributable, {count.unresolved} of credentials or accounts unknown)")
    for queue in audit.queues:
        if queue.read or queue.not_read:
            owners = ", ".join(f"{owner} {n}" for owner, n in sorted(queue.by_owner.items()))
            out(f"  {queue.region} {queue.queue}: {queue.read} read ({owners}), {queue.not_read} in flight or "
                "delayed (not read)")
    out(f"directory        {directory_line(report['directory'])}")
    for finding in audit.findings[:50]:
        out(f"  {finding.region} {finding.where} {json.dumps(finding.key, default=str)}: {finding.owner}: "
            f"{finding.problem}" + (f" (allowed: {', '.join(finding.allowed)})" if finding.allowed else ""))
    if len(audit.findings) > 50:
        out(f"  ... and {len(audit.findings) - 50} more (--json lists them all)")
    out(f"{report['scanned']} items, objects and messages scanned in {report['seconds']} s, "
        f"{report['outOfPlace']} out of place")


def _label(owner: Owner, owners: list[Owner]) -> str:
    """How a finding names the owner: the tenant or user itself, or the id and whose it is."""
    if owners == [owner]:
        return str(owner)
    return f"{owners[0]} ({owner})" if len(owners) == 1 else f"{owner} ({', '.join(map(str, owners))})"


def directory_line(counts: dict[str, int]) -> str:
    return f"{counts['items']:>9} items ({counts['tenants']} tenants, {counts['users']} users)"
