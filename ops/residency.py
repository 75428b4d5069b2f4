"""The residency audit: is every item and object of a tenant in a region the tenant allows?

    python -m ops residency audit --local 3000,3001          the local cells, by their gateways' ports
    python -m ops residency audit --stack svc-api-us --region us-east-1 --stack svc-api-eu --region eu-central-1
    python -m ops residency audit [...] --json               the summary and every finding as one JSON document

Each cell is one deployment of template.yaml in one region. The audit scans every table of the
template in every cell (but the directory), each cell's files bucket (every version of every object)
and the global directory (every cell's replica, the latest version of each entry). For each item it
finds the owner by the table's rule in TABLE_RULES (a tenant, a user, or nobody: the cell's own
operational records) and compares the cell's region with the owner's allowed regions from the directory: a tenant's home and
secondary region, a user's home. It reports:
- an item or object outside its owner's allowed regions;
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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from svc_core.contracts import regions
from svc_core.contracts.tenant_items import CELL, OBJECT_PREFIXES, OPAQUE, TABLE_RULES, Owner, Rule, object_owner  # noqa: F401

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
        homes = {"TENANT": self.tenants, "USER": self.users}.get(kind) if sk == "HOME" else None
        if homes is None:
            return
        known = homes.get(owner_id)
        if known is None or str(item.get("updatedAt", "")) >= str(known.get("updatedAt", "")):
            homes[owner_id] = item

    def allowed(self, owner: Owner) -> list[str] | None:
        """The regions the owner's items may be in; None when the directory does not know the owner."""
        home = (self.tenants if owner.kind == "tenant" else self.users).get(owner.id)
        if home is None:
            return None
        return [r for r in (home.get("homeRegion"), home.get("secondaryRegion")) if r]


@dataclass
class Finding:
    region: str   # the cell's, or "directory"
    where: str    # the table's logical id, "bucket", or DirectoryTable
    key: Any      # the item's key attributes, or the object's key (and version)
    owner: str
    problem: str
    allowed: list[str] = field(default_factory=list)

    def view(self) -> dict[str, Any]:
        return {"region": self.region, "where": self.where, "key": self.key, "owner": self.owner,
                "problem": self.problem, "allowed": self.allowed}


@dataclass
class CellCount:
    region: str
    items: int = 0
    objects: int = 0
    out_of_place: int = 0
    cell_records: int = 0   # the cell's own (no tenant's)
    opaque: int = 0         # not attributable by design (IdempotencyTable)

    def view(self) -> dict[str, Any]:
        return {"region": self.region, "items": self.items, "objects": self.objects, "outOfPlace": self.out_of_place,
                "cellRecords": self.cell_records, "notAttributable": self.opaque}


class Audit:
    """Feed it the directory, then every cell's items and objects; it keeps the findings."""

    def __init__(self, directory: Directory) -> None:
        self.directory = directory
        self.cells: dict[str, CellCount] = {}
        self.findings: list[Finding] = []
        self.webhook_tenants: dict[str, str] = {}  # webhookId -> tenantId, from the webhooks tables
        self.residency: dict[str, dict[str, Any]] = {}  # tenantId -> its regionPreferences, from the tenants tables

    def _cell(self, region: str) -> CellCount:
        return self.cells.setdefault(region, CellCount(region))

    def item(self, region: str, table: str, item: dict[str, Any], key: dict[str, Any]) -> None:
        count = self._cell(region)
        count.items += 1
        if table == "WebhooksTable" and item.get("id") and item.get("tenantId"):
            self.webhook_tenants[item["id"]] = item["tenantId"]
        if table == "TenantsTable" and item.get("id"):
            self.residency[item["id"]] = item.get("regionPreferences") or {}
        rule = TABLE_RULES.get(table)
        owner = rule.owner(item) if rule else None
        if owner is not None and owner.kind == "webhook":
            tenant_id = self.webhook_tenants.get(owner.id)
            owner = Owner("tenant", tenant_id) if tenant_id else None
        self._place(count, table, key, owner)

    def object(self, region: str, key: str, version: str | None = None) -> None:
        count = self._cell(region)
        count.objects += 1
        self._place(count, "bucket", {"key": key, "version": version} if version else key, object_owner(key))

    def _place(self, count: CellCount, where: str, key: Any, owner: Owner | None) -> None:
        if owner is None:
            self._find(count, where, key, "?", "no rule finds its tenant")
            return
        if owner is CELL or owner.kind == "cell":
            count.cell_records += 1
            return
        if owner.kind == "opaque":
            count.opaque += 1
            return
        allowed = self.directory.allowed(owner)
        if allowed is None:
            self._find(count, where, key, str(owner), f"its {owner.kind} is in no directory")
        elif count.region not in allowed:
            self._find(count, where, key, str(owner), "outside its allowed regions", allowed)

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
        scanned = sum(c.items + c.objects for c in self.cells.values())
        report: dict[str, Any] = {
            "cells": [c.view() for c in self.cells.values()],
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


def scan_cells(cells: list[Cell], template: dict[str, Any]) -> Audit:
    """Read the directory (every cell's replica), then every table (a table at a time across the cells,
    so the webhooks are known before their deliveries) and every bucket."""
    variables = resource_variables(template)
    keys = _key_attributes(template)
    directory = Directory()
    clients = {cell.region: (cell.client("dynamodb"), cell.client("s3")) for cell in cells}
    for cell in cells:
        for item in _scan(clients[cell.region][0], cell.environment[variables[DIRECTORY]]):
            directory.add(item)
    audit = Audit(directory)
    for table in TABLE_RULES:
        for cell in cells:
            for item in _scan(clients[cell.region][0], cell.environment[variables[table]]):
                audit.item(cell.region, table, item, {k: item.get(k) for k in keys[table]})
    for cell in cells:
        for key, version in _versions(clients[cell.region][1], cell.environment[variables["ProjectFilesBucket"]]):
            audit.object(cell.region, key, version)
    audit.directory_problems()
    return audit


def run(cells: list[Cell], template: dict[str, Any], as_json: bool, out=print) -> int:
    regions_named = [c.region for c in cells]
    if len(set(regions_named)) != len(regions_named):
        out(f"two cells name the same region ({', '.join(regions_named)}): each cell is one region")
        return 2
    shared = shared_resources(cells, template)
    if shared:
        out("cells share resources, so the audit cannot tell their items apart: " + "; ".join(shared))
        return 2
    started = time.monotonic()
    audit = scan_cells(cells, template)
    report = audit.summary(time.monotonic() - started)
    if as_json:
        out(json.dumps(report, default=str))
    else:
        for count in audit.cells.values():
            out(f"{count.region:<16} {count.items:>9} items {count.objects:>7} objects   "
                f"{count.out_of_place} out of place   ({count.cell_records} the cell's own, "
                f"{count.opaque} not attributable)")
        out(f"directory        {directory_line(report['directory'])}")
        for finding in audit.findings[:50]:
            out(f"  {finding.region} {finding.where} {json.dumps(finding.key, default=str)}: {finding.owner}: "
                f"{finding.problem}" + (f" (allowed: {', '.join(finding.allowed)})" if finding.allowed else ""))
        if len(audit.findings) > 50:
            out(f"  ... and {len(audit.findings) - 50} more (--json lists them all)")
        out(f"{report['scanned']} items and objects scanned in {report['seconds']} s, "
            f"{report['outOfPlace']} out of place")
    return 1 if audit.findings else 0


def directory_line(counts: dict[str, int]) -> str:
    return f"{counts['items']:>9} items ({counts['tenants']} tenants, {counts['users']} users)"
