"""Regions' fields: the regional preferences and what the catalogue allows in them, with the
document's form of their rules (body_schema_rules; domain/region_preferences.py applies the same
rules to a request); the storage configuration's: each BYOS provider's rules, the endpoint's
pattern, the keys."""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from typing import Any, Literal

from svc_core.adapters import endpoint_guard
from svc_core.contracts import plans, regions

KEYS = ("byosAccessKey", "byosSecretKey")


@dataclass(frozen=True)
class ProviderRules:
    required: tuple[str, ...]    # besides byosBucket
    bucket_pattern: str          # the provider's own naming rule (with bucket_max characters, 3 at least)
    bucket_max: int
    bucket_rule: str


PROVIDER_RULES = {
    "s3": ProviderRules(("byosRegion",), r"^[a-z0-9][a-z0-9.-]*[a-z0-9]$", 63, "3-63 characters: a-z 0-9 . -"),
    "r2": ProviderRules(("byosEndpoint",), r"^[a-z0-9][a-z0-9-]*[a-z0-9]$", 63, "3-63 characters: a-z 0-9 -"),
    "gcs": ProviderRules(("byosEndpoint",), r"^[a-z0-9][a-z0-9._-]*[a-z0-9]$", 222, "3-222 characters: a-z 0-9 . _ -"),
    "azure": ProviderRules(("byosEndpoint",), r"^[a-z0-9]+(-[a-z0-9]+)*$", 63,
                           "a container name: 3-63 characters a-z 0-9 -, no double hyphen"),
}
PROVIDERS = tuple(PROVIDER_RULES)
# https, a host name and port as endpoint_guard's text rules say (no IP address, no local name),
# and a path of visible ASCII without ? and #: what endpoint_guard.parse accepts, minus IP literals.
_PATH_CHARACTER = r"[\x21\x22\x24-\x3e\x40-\x7e]"
ENDPOINT_PATTERN = f"^https://{endpoint_guard.HOST_NAME}(?::{endpoint_guard.PORT})?(?:/{_PATH_CHARACTER}*)?$"

FIELDS = ("primaryRegion", "secondaryRegion", "dataResidencyRequired", "dataResidencyRegion", "complianceLevel")
# The levels whose rules the service knows and that a plan gates: gdpr and hipaa.
RULED_LEVELS = tuple(level for level in regions.KNOWN_COMPLIANCE if level in plans.FEATURES)
# What a request may name, straight from the catalogue: the document's enums and the validator's.
AVAILABLE = tuple(r.id for r in regions.REGIONS.values() if r.available)
JURISDICTIONS = tuple(sorted({r.jurisdiction for r in regions.REGIONS.values()}))
RegionId = Literal[AVAILABLE]  # type: ignore[valid-type]
Jurisdiction = Literal[JURISDICTIONS]  # type: ignore[valid-type]
_LEVEL_FIRST, _LEVEL_REST, _LEVEL_MAX = "abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz0123456789_-", 32
COMPLIANCE_LEVEL_PATTERN = f"^[a-z][a-z0-9_-]{{0,{_LEVEL_MAX - 1}}}$"  # the ComplianceLevel of a body
# The document's form of rule_problems for the fields sent together. JSON Schema cannot compare
# two fields, and generators give up on large products of alternatives, so it is two small anyOf:
# pairs of region sets that cover every primary/secondary pair but equal ones (_differ), and one
# per context (how residency and the
# compliance level are sent; contexts that allow the same regions share a branch), each allowing
# the regions the catalogue allows there. NOT_SENT marks a field that must not be sent (the
# boolean schema `false` says the same, but client generators refuse it); a `properties`
# constraint applies only to a field that is sent.
NOT_SENT: dict[str, Any] = {"not": {}}
_RESIDENCY_OFF = ({"properties": {"dataResidencyRequired": {"const": False}}},  # or not sent
                  {"properties": {"dataResidencyRequired": {"const": True}, "dataResidencyRegion": NOT_SENT}})


def _class(chars: str) -> str:
    return "[" + "".join("\\-" if c == "-" else c for c in chars) + "]"


def level_pattern_other_than(words: tuple[str, ...]) -> str:
    """A ComplianceLevel other than `words`, as a plain pattern (a `not` would make generators give
    up): walking the words' trie, the text leaves it by a character no word continues with, or
    ends at a node where no word ends."""
    prefixes = sorted({w[:i] for w in words for i in range(len(w) + 1)})
    branches = []
    for prefix in prefixes:
        allowed = _LEVEL_FIRST if not prefix else _LEVEL_REST
        taken = {w[len(prefix)] for w in words if w.startswith(prefix) and len(w) > len(prefix)}
        rest = len(prefix) + 1
        if rest <= _LEVEL_MAX:
            branches.append(re.escape(prefix) + _class("".join(c for c in allowed if c not in taken))
                            + f"[a-z0-9_-]{{0,{_LEVEL_MAX - rest}}}")
        if prefix and prefix not in words:
            branches.append(re.escape(prefix))
    return "^(?:" + "|".join(branches) + ")$"


def _levels(group: tuple[str | None, ...]) -> dict[str, Any]:
    """complianceLevel sent as one of the group's ruled levels, or (None in it) not sent or any other."""
    if None not in group:
        return {"required": ["complianceLevel"], "properties": {"complianceLevel": {"enum": list(group)}}}
    excluded = tuple(level for level in RULED_LEVELS if level not in group)
    return {"properties": {"complianceLevel": {"pattern": level_pattern_other_than(excluded)}}} if excluded else {}


def _merge(*parts: dict[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {"properties": {}}
    for part in parts:
        merged["properties"].update(part.get("properties", {}))
        merged.setdefault("required", []).extend(part.get("required", []))
    if not merged["required"]:
        del merged["required"]
    return merged


def _only(allowed: tuple[str, ...]) -> dict[str, Any]:
    """primaryRegion, if sent, one of `allowed`; secondaryRegion, if sent, one of them or null."""
    return {"properties": {"primaryRegion": {"enum": list(allowed)} if allowed else NOT_SENT,
                           "secondaryRegion": {"enum": [*allowed, None]}}}


def _allowed(jurisdiction: str | None, level: str | None) -> tuple[str, ...]:
    return tuple(r for r in AVAILABLE if jurisdiction in (None, regions.REGIONS[r].jurisdiction)
                 and level in (None, *regions.REGIONS[r].compliance))


def _grouped(jurisdiction: str | None) -> dict[tuple[str, ...], tuple[str | None, ...]]:
    """The levels (None: any unruled one) by the regions they allow with this residency."""
    groups: dict[tuple[str, ...], tuple[str | None, ...]] = {}
    for level in (None, *RULED_LEVELS):
        allowed = _allowed(jurisdiction, level)
        groups[allowed] = groups.get(allowed, ()) + (level,)
    return groups


def _differ() -> dict[str, Any]:
    """secondaryRegion differs from primaryRegion, in few branches: each region gets its own set of
    k/2 of k labels (none holds another's), and branch j pairs the regions labelled j with those
    not; two different regions always meet in some branch, a region never meets itself."""
    k = next(k for k in range(1, len(AVAILABLE) + 2) if math.comb(k, k // 2) >= len(AVAILABLE))
    labels = dict(zip(AVAILABLE, itertools.combinations(range(k), k // 2), strict=False))
    branches: list[dict[str, Any]] = [{"properties": {"primaryRegion": NOT_SENT}}]
    for j in range(k):
        primaries = [r for r in AVAILABLE if j in labels[r]]
        if primaries:
            branches.append({"required": ["primaryRegion"], "properties": {
                "primaryRegion": {"enum": primaries},
                "secondaryRegion": {"enum": [*(r for r in AVAILABLE if j not in labels[r]), None]}}})
    return {"anyOf": branches}


def body_schema_rules() -> list[dict[str, Any]]:
    """rule_problems for the fields sent, as the document says it, from the same catalogue."""
    differ = _differ()
    contexts = [_merge(off, _levels(group), _only(allowed))
                for off in _RESIDENCY_OFF for allowed, group in _grouped(None).items()]
    by_rule: dict[tuple[tuple[str, ...], tuple[str | None, ...]], list[str]] = {}
    for jurisdiction in JURISDICTIONS:
        for allowed, group in _grouped(jurisdiction).items():
            by_rule.setdefault((allowed, group), []).append(jurisdiction)
    contexts += [_merge({"required": ["dataResidencyRequired", "dataResidencyRegion"],
                         "properties": {"dataResidencyRequired": {"const": True},
                                        "dataResidencyRegion": {"enum": jurisdictions}}},
                        _levels(group), _only(allowed)) for (allowed, group), jurisdictions in by_rule.items()]
    return [differ, {"anyOf": contexts}]
