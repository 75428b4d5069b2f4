"""Tenants and their settings, regions, storage (the platform's or a bucket of one's own)."""

from __future__ import annotations

import sys
from typing import Any

import click

from svc_client.client import Client
from svc_client.commands.base import (
    DefaultGroup,
    State,
    SvcGroup,
    _call_command,
    examples,
    pass_state,
    yes_option,
)


def _tenant_id(svc: Client, tenant_id: str | None) -> str:
    return tenant_id or svc.auth.me().tenant.id


@click.group(cls=SvcGroup)
def tenants() -> None:
    """Tenants: list, show, set (settings)."""


@tenants.command("list", epilog=examples("svc tenants list"))
@pass_state
def tenants_list(state: State) -> None:
    """The tenants the credential belongs to (an API key: its own)."""
    with state.client() as svc:
        page = svc.tenants.list()
    state.table(page.items, [("ID", "id"), ("NAME", "name"), ("PLAN", "plan"), ("ROLE", "role"),
                             ("STATUS", "status")], page)


_call_command(tenants, "show", click.argument("tenant_id", required=False),
              lambda svc, tenant_id: svc.tenants.get(_tenant_id(svc, tenant_id)),
              ["id", "name", "plan", "status", "role", "settings", "created_at"],
              "The tenant (default: the credential's).",
              example=("svc tenants show", "svc tenants show --json settings"))


@tenants.command("set", epilog=examples("svc tenants set --timezone Europe/Paris --display-name Acme"))
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
    """Regions: list, preferences, storage, feature, routing."""


@regions.command("list", epilog=examples("svc regions list"))
@pass_state
def regions_list(state: State) -> None:
    """The region catalogue: jurisdiction, compliance levels, availability."""
    with state.client() as svc:
        listing = svc.regions.list()
    state.table(listing.items, [("ID", "id"), ("NAME", "name"), ("JURISDICTION", "jurisdiction"),
                                ("COMPLIANCE", "complianceLevels"), ("AVAILABLE", "available")], listing)


@regions.group("preferences", cls=DefaultGroup, default="show")
def preferences() -> None:
    """The tenant's regional preferences."""


_call_command(preferences, "show", click.option("--tenant", "tenant_id"),
              lambda svc, tenant_id: svc.regions.preferences(_tenant_id(svc, tenant_id)),
              ["primaryRegion", "secondaryRegion", "dataResidencyRequired", "dataResidencyRegion", "complianceLevel",
               "isDefault"], "The tenant's regional preferences.", example=("svc regions preferences show",))


@preferences.command("set", epilog=examples("svc regions preferences set --primary-region eu-west-1"))
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


# ---- storage ----------------------------------------------------------------------------------

STORAGE_FIELDS = ["storageMode", "platformRegion", "byosProvider", "byosEndpoint", "byosBucket", "byosRegion",
                  "byosAccessKeySet", "byosAccessKeyLast4", "isDefault"]
tenant_option = click.option("--tenant", "tenant_id", help="Default: the credential's tenant.")


@regions.group("storage", cls=DefaultGroup, default="show")
def storage() -> None:
    """The tenant's storage: show (the default), set, validate a bucket of your own (BYOS)."""


_call_command(storage, "show", tenant_option, lambda svc, tenant_id: svc.regions.storage(_tenant_id(svc, tenant_id)),
              STORAGE_FIELDS, "The tenant's storage configuration (never its keys).",
              example=("svc regions storage", "svc regions storage show --json storageMode"))


def _byos_options(function: Any) -> Any:
    for option in reversed([
        click.option("--provider", type=click.Choice(["s3", "r2", "gcs", "azure"]), help="A bucket of your own."),
        click.option("--endpoint", help="The provider's endpoint (see docs/regions-and-storage.md)."),
        click.option("--bucket"),
        click.option("--region", help="The bucket's region."),
        click.option("--access-key", help="The access key id."),
        click.option("--secret-key", envvar="SVC_BYOS_SECRET_KEY",
                     help="The secret key; - reads it from standard input (or SVC_BYOS_SECRET_KEY)."),
    ]):
        function = option(function)
    return function


def _byos(provider: str | None, endpoint: str | None, bucket: str | None, region: str | None,
          access_key: str | None, secret_key: str | None) -> dict[str, Any]:
    if secret_key == "-":
        secret_key = sys.stdin.readline().strip()  # out of the shell's history
    fields = {"storageMode": "byos", "byosProvider": provider, "byosEndpoint": endpoint, "byosBucket": bucket,
              "byosRegion": region, "byosAccessKey": access_key, "byosSecretKey": secret_key}
    return {k: v for k, v in fields.items() if v is not None}


@storage.command("set", epilog=examples(
    "svc regions storage set --platform --platform-region eu-west-1 --yes",
    "svc regions storage set --provider s3 --bucket acme-data --region eu-west-1 --access-key ID \\\n"
    "      --secret-key - --yes"))
@tenant_option
@click.option("--platform", is_flag=True, help="The platform's storage.")
@click.option("--platform-region", help="Where platform storage lives (with --platform).")
@_byos_options
@yes_option
@pass_state
def storage_set(state: State, tenant_id: str | None, platform: bool, platform_region: str | None,
                provider: str | None, endpoint: str | None, bucket: str | None, region: str | None,
                access_key: str | None, secret_key: str | None, yes: bool) -> None:
    """Set the storage: the platform's (--platform) or a bucket of your own (--provider ...)."""
    if platform == (provider is not None):
        raise click.UsageError("Give --platform or --provider (a bucket of your own), not both.")
    config = ({k: v for k, v in {"storageMode": "platform", "platformRegion": platform_region}.items() if v}
              if platform else _byos(provider, endpoint, bucket, region, access_key, secret_key))
    state.confirm(yes, f"Change where the tenant's files are stored to {provider or 'the platform'}")
    with state.client() as svc:
        stored = svc.regions.set_storage(_tenant_id(svc, tenant_id), **config)
    state.emit(stored, lambda s: state.fields(s, STORAGE_FIELDS))


@storage.command("validate", epilog=examples(
    "svc regions storage validate                       # the stored bucket",
    "svc regions storage validate --provider r2 --endpoint https://ACCOUNT.r2.cloudflarestorage.com "
    "--bucket acme --access-key ... --secret-key -"))
@tenant_option
@_byos_options
@pass_state
def storage_validate(state: State, tenant_id: str | None, provider: str | None, endpoint: str | None,
                     bucket: str | None, region: str | None, access_key: str | None, secret_key: str | None) -> None:
    """Check a bucket of your own for real (write, read back, delete a small object): the stored one,
    or the one given, without storing it. Exit status 1 when a step fails."""
    config = _byos(provider, endpoint, bucket, region, access_key, secret_key) if provider else {}
    with state.client() as svc:
        checked = svc.regions.validate_storage(_tenant_id(svc, tenant_id), **config)

    def text(v: Any) -> None:
        for step in v.steps:
            said = "ok" if step.get("ok") else f"failed: {step.get('reason')}. {step.get('message') or ''}"
            state.out.print(f"{step.get('step')}: {said.strip()} ({step.get('latencyMs')} ms)", markup=False)
        state.out.print(f"[{'green' if v.ok else 'red'}]{'ok' if v.ok else 'failed'}[/] {v.byos_provider} "
                        f"{v.byos_bucket} ({v.source})")
    state.emit(checked, text)
    if not checked.ok:
        sys.exit(1)


_call_command(regions, "feature", [tenant_option, click.argument("feature_key")],
              lambda svc, tenant_id, key: svc.regions.check_feature(_tenant_id(svc, tenant_id), key),
              ["featureKey", "enabled", "currentPlan", "requiredPlan", "description"],
              "Whether the tenant's plan includes a feature, and from which plan.",
              example=("svc regions feature byos", "svc regions feature data_residency --json enabled"))
_call_command(regions, "routing", lambda f: f, lambda svc: svc.regions.routing_info(),
              ["requestId", "servingRegion", "stage", "apiVersion", "tenantId", "plan", "primaryRegion",
               "secondaryRegion", "dataResidency", "storage"],
              "Debug routing: the serving region and stage, and where the tenant's data goes.",
              example=("svc regions routing",))
