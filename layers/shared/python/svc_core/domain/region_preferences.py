"""Regional preferences: where a tenant's data lives, and the rules that bind the choice.

The catalogue (svc_core/regions.py) says which regions exist, are available, lie in which
jurisdiction and are certified for which compliance levels; the plans (svc_core/plans.py) say
which tenant may use a secondary region, data residency and a compliance level with rules.
A PATCH is merged into the current preferences (or the defaults) and the result is judged as a
whole: first the plan (403 FORBIDDEN with requiredPlan and currentPlan), then the rules (400
VALIDATION_ERROR naming every field at fault). A refused PATCH stores nothing.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from svc_core import plans, regions, timeutil
from svc_core.context import TenantContext
from svc_core.data import tenants_table
from svc_core.data.common import ConditionFailed
from svc_core.domain.tenant_access import not_found, own_tenant, require_feature
from svc_core.errors import Conflict, ValidationFailed
from svc_core.schemas import RequestBody

SECTION = "regionPreferences"
FIELDS = ("primaryRegion", "secondaryRegion", "dataResidencyRequired", "dataResidencyRegion", "complianceLevel")
DEFAULTS: dict[str, Any] = {"primaryRegion": regions.DEFAULT_REGION, "secondaryRegion": None,
                            "dataResidencyRequired": False, "dataResidencyRegion": None,
                            "complianceLevel": "standard"}
# The levels whose rules the service knows and that a plan gates: gdpr and hipaa.
RULED_LEVELS = tuple(level for level in regions.KNOWN_COMPLIANCE if level in plans.FEATURES)

RegionId = Annotated[str, StringConstraints(min_length=1, max_length=32, pattern=r"^[a-z0-9][a-z0-9-]*$")]
Jurisdiction = Annotated[str, StringConstraints(min_length=1, max_length=16, pattern=r"^[a-z][a-z0-9-]*$")]
ComplianceLevel = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_-]{0,31}$")]


class PreferencesUpdate(RequestBody):
    """Only the fields sent change; secondaryRegion and dataResidencyRegion may be set to null."""
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"minProperties": 1})
    primaryRegion: RegionId = None  # may be left out, not set to null  # type: ignore[assignment]
    secondaryRegion: RegionId | None = None
    dataResidencyRequired: bool = None  # type: ignore[assignment]
    dataResidencyRegion: Jurisdiction | None = None
    complianceLevel: ComplianceLevel = Field(  # type: ignore[assignment]
        None, description="an open list of lowercase identifiers; standard, gdpr and hipaa have rules")

    @model_validator(mode="after")
    def _at_least_one_field(self) -> "PreferencesUpdate":
        if not self.model_fields_set:
            raise ValueError("send at least one of " + ", ".join(FIELDS))
        return self


class Preferences(BaseModel):
    tenantId: str
    primaryRegion: str = Field(examples=["eu-central-1"])
    secondaryRegion: str | None
    dataResidencyRequired: bool
    dataResidencyRegion: str | None = Field(description="a jurisdiction of the catalogue, e.g. eu")
    complianceLevel: str
    isDefault: bool = Field(description="true until the tenant first sets its preferences")
    updated_at: str | None = Field(description="ISO 8601 UTC; null while the defaults apply")


class RegionView(BaseModel):
    id: str = Field(examples=["eu-central-1"])
    name: str
    jurisdiction: str
    complianceLevels: list[str]
    available: bool


class RegionList(BaseModel):
    items: list[RegionView]
    nextCursor: None = Field(description="always null: the catalogue is one page")
    defaultRegion: str
    jurisdictions: list[str]


def list_regions() -> dict[str, Any]:
    return {"items": [regions.view(r) for r in regions.REGIONS.values()], "nextCursor": None,
            "defaultRegion": regions.DEFAULT_REGION,
            "jurisdictions": sorted({r.jurisdiction for r in regions.REGIONS.values()})}


def effective(tenant: dict[str, Any]) -> dict[str, Any]:
    """The tenant's preferences, or the defaults where it never set them."""
    stored = tenant.get(SECTION) or {}
    return {name: stored.get(name, DEFAULTS[name]) for name in FIELDS}


def _view(tenant: dict[str, Any]) -> dict[str, Any]:
    stored = tenant.get(SECTION)
    return {"tenantId": tenant["id"], **effective(tenant), "isDefault": not stored,
            "updated_at": (stored or {}).get("updated_at")}


def get_preferences(ctx: TenantContext, tenant_id: str, store=tenants_table) -> dict[str, Any]:
    return _view(own_tenant(ctx, tenant_id, store))


# ---- the rules -----------------------------------------------------------------------------

def _problem(field: str, reason: str) -> dict[str, str]:
    return {"field": field, "in": "body", "reason": reason}


def check_plan(prefs: dict[str, Any], tenant: dict[str, Any]) -> None:
    """403 when the preferences use what the tenant's plan does not include."""
    if prefs["secondaryRegion"] is not None:
        require_feature(tenant, "secondary_region", "A secondary region")
    if prefs["dataResidencyRequired"]:
        require_feature(tenant, "data_residency", "Data residency")
    if prefs["complianceLevel"] in RULED_LEVELS:
        require_feature(tenant, prefs["complianceLevel"], f"The {prefs['complianceLevel']} compliance level")


def region_problem(region_id: str) -> str | None:
    region = regions.REGIONS.get(region_id)
    if region is None:
        return f"{region_id!r} is not a region of the catalogue (GET /regions lists them)"
    if not region.available:
        return f"{region_id} is not available"
    return None


def rule_problems(prefs: dict[str, Any]) -> list[dict[str, str]]:
    """Every field of the merged preferences that breaks a rule of the catalogue."""
    problems: list[dict[str, str]] = []
    chosen = [(f, prefs[f]) for f in ("primaryRegion", "secondaryRegion") if prefs[f] is not None]
    known = []
    for field, region_id in chosen:
        problem = region_problem(region_id)
        if problem:
            problems.append(_problem(field, problem))
        else:
            known.append((field, regions.REGIONS[region_id]))
    if prefs["secondaryRegion"] is not None and prefs["secondaryRegion"] == prefs["primaryRegion"]:
        problems.append(_problem("secondaryRegion", "must differ from primaryRegion"))
    jurisdictions = {r.jurisdiction for r in regions.REGIONS.values()}
    residency = prefs["dataResidencyRegion"]
    if residency is not None and residency not in jurisdictions:
        problems.append(_problem("dataResidencyRegion",
                                 f"{residency!r} is not a jurisdiction of the catalogue ({', '.join(sorted(jurisdictions))})"))
    elif prefs["dataResidencyRequired"]:
        if residency is None:
            problems.append(_problem("dataResidencyRegion", "is required when dataResidencyRequired is true"))
        else:
            for field, region in known:
                if region.jurisdiction != residency:
                    problems.append(_problem(field, f"{region.id} lies in {region.jurisdiction}, outside the "
                                                    f"data residency region {residency}"))
    level = prefs["complianceLevel"]
    if level in RULED_LEVELS:
        for field, region in known:
            if level not in region.compliance:
                problems.append(_problem(field, f"{region.id} does not support the {level} compliance level"))
    return problems


def update_preferences(ctx: TenantContext, tenant_id: str, body: PreferencesUpdate,
                       store=tenants_table) -> dict[str, Any]:
    tenant = own_tenant(ctx, tenant_id, store)
    merged = {**effective(tenant), **body.model_dump(include=body.model_fields_set)}
    check_plan(merged, tenant)
    problems = rule_problems(merged)
    if problems:
        raise ValidationFailed("The regional preferences are not valid.", {"fields": problems})
    _check_storage_fits(merged, tenant)
    stamp = timeutil.iso(timeutil.now())
    try:
        updated = store.set_section(tenant["id"], SECTION, {**merged, "updated_at": stamp}, stamp)
    except ConditionFailed:
        raise not_found(tenant_id) from None
    return _view(updated)


def _check_storage_fits(prefs: dict[str, Any], tenant: dict[str, Any]) -> None:
    """Data residency may not be required while platform storage sits outside its jurisdiction."""
    storage = tenant.get("storage") or {}
    region = regions.REGIONS.get(storage.get("platformRegion") or "")
    if (prefs["dataResidencyRequired"] and storage.get("storageMode", "platform") == "platform"
            and region is not None and region.jurisdiction != prefs["dataResidencyRegion"]):
        raise Conflict(f"The platform storage is in {region.id}, outside {prefs['dataResidencyRegion']}: "
                       "move the storage first (PUT /regions/storage/:tenantId).",
                       {"resource": "storage", "platformRegion": region.id})
