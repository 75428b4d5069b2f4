"""Tenants' request and response models (svc_core/domain/models says why they live apart)."""

from __future__ import annotations

import ipaddress
from importlib import resources
from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints, field_validator

from svc_core.domain.fields.tenants import CIDR_PATTERN, MAX_ALLOWLIST
from svc_core.domain.models.projects import Language
from svc_core.domain.models.request_body import EMAIL, PatchBody, RequestBody, name_text

Cidr = Annotated[str, StringConstraints(min_length=2, max_length=49, pattern=CIDR_PATTERN)]
# The IANA zone names, from the tzdata package: the same list wherever the service runs (the
# Lambda runtime's or a machine's own zone files may differ or be missing).
TIMEZONES = tuple(resources.files("tzdata").joinpath("zones").read_text().split())
# As a pattern of the names, not an enum: client generators make an enum's values identifiers, and
# Etc/GMT+1 and Etc/GMT-1 (or GMT0, GMT+0, GMT-0) become one (openapi-python-client refuses the enum).
# Names hold letters, digits, "/", "_", "-" and "+"; only "+" needs escaping.
TIMEZONE_PATTERN = "^(?:" + "|".join(zone.replace("+", "\\+") for zone in TIMEZONES) + ")$"
Timezone = Annotated[str, StringConstraints(pattern=TIMEZONE_PATTERN)]
TenantName = name_text(100)


class SettingsPatch(PatchBody):
    """Only the fields sent change; null puts a field back to its default."""
    displayName: TenantName | None = Field(default=None, description="Shown instead of the tenant's name")
    defaultProjectLanguage: Language | None = Field(default=None, description="For projects created without one")
    ipAllowlist: list[Cidr] | None = Field(
        default=None, max_length=MAX_ALLOWLIST,
        description="CIDRs (IPv4 or IPv6; an address alone is /32 or /128; stored normalised: host bits "
                    "cleared, 10.1.2.3/8 is 10.0.0.0/8). Not empty: API keys work only from these addresses. "
                    "Needs the ip_allowlist feature of the plan.")
    billingEmail: Annotated[str, StringConstraints(max_length=254, pattern=EMAIL)] | None = None
    timezone: Timezone | None = Field(default=None, description="An IANA time zone, e.g. Europe/Berlin "
                                                                 "(the tzdata package's list)",
                                      examples=["Europe/Berlin"])

    @field_validator("ipAllowlist")
    @classmethod
    def _networks(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        # The pattern passed: ipaddress reads every such text (host bits set are cleared, not refused).
        networks = [str(ipaddress.ip_network(cidr, strict=False)) for cidr in value]
        return sorted(set(networks), key=networks.index)  # normalised, first occurrence kept


class TenantCreate(RequestBody):
    name: TenantName


class Settings(BaseModel):
    displayName: str | None
    defaultProjectLanguage: str | None
    ipAllowlist: list[str]
    billingEmail: str | None
    timezone: str


class PlanDetails(BaseModel):
    plan: str
    features: list[str]
    limits: dict[str, Any]


class Tenant(BaseModel):
    id: str
    name: str
    plan: str
    status: str
    role: str = Field(description="The caller's role here: owner, admin, member, or api_key")
    settings: Settings
    planDetails: PlanDetails
    created_at: str
    updated_at: str


class TenantList(BaseModel):
    items: list[Tenant]
    nextCursor: str | None = Field(description="Always null: a caller belongs to few tenants, all are listed")
