"""Tenants, regions and storage."""

from __future__ import annotations

import click

from svc_client.client import Client
from svc_client.commands.base import (
    State,
    SvcGroup,
    _call_command,
    pass_state,
)

# ---- tenants and regions ----------------------------------------------------------------------

def _tenant_id(svc: Client, tenant_id: str | None) -> str:
    return tenant_id or svc.auth.me().tenant.id


@click.group(cls=SvcGroup)
def tenants() -> None:
    """Tenants: list, show, set (settings)."""


@tenants.command("list")
@pass_state
def tenants_list(state: State) -> None:
    with state.client() as svc:
        page = svc.tenants.list()
    state.table(page.items, [("ID", "id"), ("NAME", "name"), ("PLAN", "plan"), ("ROLE", "role"),
                             ("STATUS", "status")], page)


_call_command(tenants, "show", click.argument("tenant_id", required=False),
              lambda svc, tenant_id: svc.tenants.get(_tenant_id(svc, tenant_id)),
              ["id", "name", "plan", "status", "role", "settings", "created_at"], "The tenant (default: the credential's).")


@tenants.command("set")
@click.option("--tenant", "tenant_id", help="Default: the credential's tenant.")
@click.option("--display-name")
@click.option("--default-project-language")
@click.option("--billing-email")
@click.option("--timezone")
@click.option("--ip-allow", "ip_allowlist", multiple=True, help="A CIDR of the IP allowlist (repeat).")
@pass_state
def tenants_set(state: State, tenant_id: str | None, display_name: str | None, default_project_language: str | None,
                billing_email: str | None, timezone: str | None, ip_allowlist: tuple[str, ...]) -> None:
    """Change the tenant's settings (only those given)."""
    settings = {"displayName": display_name, "defaultProjectLanguage": default_project_language,
                "billingEmail": billing_email, "timezone": timezone, "ipAllowlist": list(ip_allowlist) or None}
    settings = {k: v for k, v in settings.items() if v is not None}
    if not settings:
        raise click.UsageError("Give at least one setting to change.")
    with state.client() as svc:
        tenant = svc.tenants.update_settings(_tenant_id(svc, tenant_id), **settings)
    state.emit(tenant, lambda t: state.fields(t, ["id", "name", "settings"]))


@click.group(cls=SvcGroup)
def regions() -> None:
    """Regions: list, preferences (show, set), storage."""


@regions.command("list")
@pass_state
def regions_list(state: State) -> None:
    with state.client() as svc:
        listing = svc.regions.list()
    state.table(listing.items, [("ID", "id"), ("NAME", "name"), ("JURISDICTION", "jurisdiction"),
                                ("COMPLIANCE", "complianceLevels"), ("AVAILABLE", "available")], listing)


@regions.group("preferences")
def preferences() -> None:
    """The tenant's regional preferences."""


_call_command(preferences, "show", click.option("--tenant", "tenant_id"),
              lambda svc, tenant_id: svc.regions.preferences(_tenant_id(svc, tenant_id)),
              ["primaryRegion", "secondaryRegion", "dataResidencyRequired", "dataResidencyRegion", "complianceLevel",
               "isDefault"])


@preferences.command("set")
@click.option("--tenant", "tenant_id")
@click.option("--primary-region")
@click.option("--secondary-region")
@click.option("--data-residency/--no-data-residency", "data_residency_required", default=None)
@click.option("--data-residency-region")
@click.option("--compliance-level")
@pass_state
def preferences_set(state: State, tenant_id: str | None, primary_region: str | None, secondary_region: str | None,
                    data_residency_required: bool | None, data_residency_region: str | None,
                    compliance_level: str | None) -> None:
    """Change regional preferences (only those given)."""
    fields = {"primaryRegion": primary_region, "secondaryRegion": secondary_region,
              "dataResidencyRequired": data_residency_required, "dataResidencyRegion": data_residency_region,
              "complianceLevel": compliance_level}
    fields = {k: v for k, v in fields.items() if v is not None}
    if not fields:
        raise click.UsageError("Give at least one preference to change.")
    with state.client() as svc:
        prefs = svc.regions.update_preferences(_tenant_id(svc, tenant_id), **fields)
    state.emit(prefs, lambda p: state.fields(p, ["primaryRegion", "secondaryRegion", "dataResidencyRequired",
                                                 "dataResidencyRegion", "complianceLevel"]))


_call_command(regions, "storage", click.option("--tenant", "tenant_id"),
              lambda svc, tenant_id: svc.regions.storage(_tenant_id(svc, tenant_id)),
              ["storageMode", "platformRegion", "byosProvider", "byosBucket", "byosRegion", "isDefault"],
              "The tenant's storage configuration (never its keys).")
