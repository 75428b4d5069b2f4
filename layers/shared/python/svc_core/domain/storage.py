"""Storage configuration: the platform's storage in a region of the catalogue, or the tenant's
own (BYOS: an S3, R2, GCS or Azure bucket), and the check that BYOS really works.

What each provider needs (400 naming each missing field):
    s3     byosBucket, byosRegion (byosEndpoint optional: AWS's regional endpoint by default)
    r2     byosEndpoint, byosBucket
    gcs    byosEndpoint (its S3-interoperable endpoint), byosBucket
    azure  byosEndpoint (the account's blob endpoint), byosBucket (the container)
and byosAccessKey + byosSecretKey (for azure: the account name and the account key).

The two keys are sealed together with KMS (svc_core/sealing.py) under the context
{purpose: byos-credentials, tenantId}; only the sealed value and the last four characters of
the access key are stored, and no answer carries either key. A PUT that leaves both keys out
keeps the stored ones while byosProvider, byosEndpoint and byosBucket stay the same; switching
to platform storage drops them. An endpoint must pass svc_core/endpoint_guard.py (SSRF rules)
when it is saved and again before each validation connects to it (its name resolved anew each
time; a name that does not resolve is accepted on save and reported unreachable by validation).
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Callable, Literal

from pydantic import BaseModel, Field, StringConstraints

from svc_core import endpoint_guard, regions, sealing, storage_probe, timeutil
from svc_core.config import settings
from svc_core.context import TenantContext
from svc_core.data import tenants_table
from svc_core.data.common import ConditionFailed
from svc_core.domain import region_preferences
from svc_core.domain.tenant_access import not_found, own_tenant, require_feature
from svc_core.errors import Conflict, ValidationFailed
from svc_core.log import logger
from svc_core.schemas import SPACE, RequestBody

SECTION = "storage"
PROVIDERS = ("s3", "r2", "gcs", "azure")
BYOS_FIELDS = ("byosProvider", "byosEndpoint", "byosBucket", "byosRegion", "byosAccessKey", "byosSecretKey")
REQUIRED = {"s3": ("byosBucket", "byosRegion"), "r2": ("byosEndpoint", "byosBucket"),
            "gcs": ("byosEndpoint", "byosBucket"), "azure": ("byosEndpoint", "byosBucket")}
_BUCKETS = {  # the providers' own naming rules
    "s3": (re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"), "3-63 characters: a-z 0-9 . -"),
    "r2": (re.compile(r"^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$"), "3-63 characters: a-z 0-9 -"),
    "gcs": (re.compile(r"^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$"), "3-222 characters: a-z 0-9 . _ -"),
    "azure": (re.compile(r"^[a-z0-9](?:[a-z0-9]|-(?!-)){1,61}[a-z0-9]$"),
              "a container name: 3-63 characters a-z 0-9 -, no double hyphen"),
}
CREDENTIALS_CONTEXT_PURPOSE = "byos-credentials"

Endpoint = Annotated[str, StringConstraints(min_length=8, max_length=2048, pattern=f"^https?://[^{SPACE}]+$")]
Bucket = Annotated[str, StringConstraints(min_length=3, max_length=222, pattern=r"^[a-z0-9][a-z0-9._-]*[a-z0-9]$")]
AwsRegion = Annotated[str, StringConstraints(min_length=1, max_length=32, pattern=r"^[a-z0-9][a-z0-9-]*$")]
Secret = Annotated[str, StringConstraints(min_length=1, max_length=512, pattern=r"^[\x21-\x7e]+$")]


class StorageConfigBody(RequestBody):
    """A whole storage configuration: platform (platformRegion) or byos (the byos* fields)."""
    storageMode: Literal["platform", "byos"]
    platformRegion: region_preferences.RegionId | None = Field(
        None, description="platform storage only; default: the tenant's primary region")
    byosProvider: Literal["s3", "r2", "gcs", "azure"] | None = None
    byosEndpoint: Endpoint | None = Field(None, description="https URL; s3: optional; azure: the account endpoint")
    byosBucket: Bucket | None = Field(None, description="for azure: the container")
    byosRegion: AwsRegion | None = Field(None, description="s3: required; others: optional")
    # repr=False: the keys stay out of every repr of the body (Powertools logs a route's arguments at DEBUG)
    byosAccessKey: Secret | None = Field(None, repr=False, description="for azure: the account name; write-only")
    byosSecretKey: Secret | None = Field(None, repr=False, description="for azure: the account key; write-only")


class StorageConfig(BaseModel):
    tenantId: str
    storageMode: Literal["platform", "byos"]
    platformRegion: str | None = Field(description="platform storage: where it is; null with byos")
    byosProvider: str | None
    byosEndpoint: str | None
    byosBucket: str | None
    byosRegion: str | None
    byosAccessKeySet: bool
    byosSecretKeySet: bool
    byosAccessKeyLast4: str | None = Field(description="the access key's last four characters (null when it "
                                                       "is shorter than 12)")
    isDefault: bool = Field(description="true until the tenant first sets its storage")
    updated_at: str | None


class ValidationStep(BaseModel):
    step: Literal["write", "read", "delete"]
    ok: bool
    latencyMs: int
    reason: Literal["bad_credentials", "no_such_bucket", "access_denied", "wrong_region", "unreachable",
                    "timeout", "unexpected_response"] | None = None
    message: str | None = None
    providerCode: str | None = Field(None, description="the storage's own error code, when it gave one")


class StorageValidation(BaseModel):
    ok: bool
    source: Literal["stored", "body"] = Field(description="which configuration was tried")
    byosProvider: str
    byosEndpoint: str | None
    byosBucket: str
    steps: list[ValidationStep] = Field(description="write, read back, delete; stops at the first failure")
    checked_at: str


# ---- reading -------------------------------------------------------------------------------

def _platform_default(tenant: dict[str, Any]) -> str:
    return region_preferences.effective(tenant)["primaryRegion"]


def view_of(tenant: dict[str, Any]) -> dict[str, Any]:
    stored = tenant.get(SECTION) or {}
    byos = stored.get("storageMode") == "byos"
    sealed = byos and bool(stored.get("byosCredentials"))
    return {"tenantId": tenant["id"], "storageMode": "byos" if byos else "platform",
            "platformRegion": None if byos else stored.get("platformRegion") or _platform_default(tenant),
            **{f: stored.get(f) if byos else None for f in ("byosProvider", "byosEndpoint", "byosBucket",
                                                             "byosRegion")},
            "byosAccessKeySet": sealed, "byosSecretKeySet": sealed,
            "byosAccessKeyLast4": stored.get("byosAccessKeyLast4") if sealed else None,
            "isDefault": not stored, "updated_at": stored.get("updated_at")}


def get_storage(ctx: TenantContext, tenant_id: str, store=tenants_table) -> dict[str, Any]:
    return view_of(own_tenant(ctx, tenant_id, store))


def storage_region(tenant: dict[str, Any]) -> str | None:
    """Where the tenant's objects live: the platform region, or the BYOS bucket's region if known."""
    view = view_of(tenant)
    return view["platformRegion"] if view["storageMode"] == "platform" else view["byosRegion"]


# ---- the rules -----------------------------------------------------------------------------

def _problem(field: str, reason: str, **extra: str) -> dict[str, str]:
    return {"field": field, "in": "body", "reason": reason, **extra}


def _invalid(problems: list[dict[str, str]]) -> ValidationFailed:
    return ValidationFailed("The storage configuration is not valid.", {"fields": problems})


def _credentials_context(tenant_id: str) -> dict[str, str]:
    return {"purpose": CREDENTIALS_CONTEXT_PURPOSE, "tenantId": tenant_id}


def _same_place(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(a.get(f) == b.get(f) for f in ("byosProvider", "byosEndpoint", "byosBucket"))


def endpoint_of(config: dict[str, Any]) -> str | None:
    """The URL the probe connects to: the given endpoint, or AWS's regional one for s3."""
    if config.get("byosEndpoint"):
        return config["byosEndpoint"]
    if config.get("byosProvider") == "s3" and config.get("byosRegion"):
        return f"https://s3.{config['byosRegion']}.amazonaws.com"
    return None


def _check_platform(body: StorageConfigBody, tenant: dict[str, Any]) -> dict[str, Any]:
    problems = [_problem(f, "is not used with platform storage") for f in BYOS_FIELDS if getattr(body, f) is not None]
    region_id = body.platformRegion or _platform_default(tenant)
    field_problem = region_preferences.region_problem(region_id)
    if field_problem:
        problems.append(_problem("platformRegion", field_problem))
    prefs = region_preferences.effective(tenant)
    if not field_problem and prefs["dataResidencyRequired"] \
            and regions.REGIONS[region_id].jurisdiction != prefs["dataResidencyRegion"]:
        problems.append(_problem("platformRegion", f"{region_id} lies outside the data residency region "
                                                   f"{prefs['dataResidencyRegion']}"))
    if problems:
        raise _invalid(problems)
    return {"storageMode": "platform", "platformRegion": region_id}


def _check_byos(body: StorageConfigBody, tenant: dict[str, Any], *,
                guard: Callable[..., endpoint_guard.Target]) -> tuple[dict[str, Any], endpoint_guard.Target | None]:
    """The configuration (keys in clear, or the stored sealed ones) and its checked endpoint."""
    problems: list[dict[str, str]] = []
    if body.platformRegion is not None:
        problems.append(_problem("platformRegion", "is not used with byos storage"))
    provider = body.byosProvider
    if provider is None:
        raise _invalid(problems + [_problem("byosProvider", f"is required with byos storage ({', '.join(PROVIDERS)})")])
    for field in REQUIRED[provider]:
        if getattr(body, field) is None:
            problems.append(_problem(field, f"is required with the {provider} provider"))
    pattern, rule = _BUCKETS[provider]
    if body.byosBucket is not None and not pattern.match(body.byosBucket):
        problems.append(_problem("byosBucket", f"is not a valid {provider} bucket name ({rule})"))
    config = {"storageMode": "byos", **{f: getattr(body, f) for f in BYOS_FIELDS}}
    stored = tenant.get(SECTION) or {}
    keys_sent = [f for f in ("byosAccessKey", "byosSecretKey") if config[f] is not None]
    keep = (not keys_sent and stored.get("storageMode") == "byos" and bool(stored.get("byosCredentials"))
            and _same_place(stored, config))
    if keep:
        config["byosCredentials"] = stored["byosCredentials"]
        config["byosAccessKeyLast4"] = stored.get("byosAccessKeyLast4")
    else:
        for field in ("byosAccessKey", "byosSecretKey"):
            if config[field] is None:
                problems.append(_problem(field, "is required (the stored keys are kept only when both are left "
                                                "out and byosProvider, byosEndpoint and byosBucket are unchanged)"))
    target = None
    url = endpoint_of(config)
    if url is not None and not any(p["field"] == "byosEndpoint" for p in problems):
        try:
            # A name that does not resolve passes here; the probe reports it as unreachable.
            target = guard(url, allow_loopback=settings().allow_loopback_endpoints, require_resolution=False)
        except endpoint_guard.EndpointRefused as refused:
            problems.append(_problem("byosEndpoint", refused.reason, code=refused.code))
    if problems:
        raise _invalid(problems)
    return config, target


def _sealed_section(config: dict[str, Any], tenant_id: str, stamp: str) -> dict[str, Any]:
    section = {k: v for k, v in config.items() if k not in ("byosAccessKey", "byosSecretKey") and v is not None}
    if config.get("byosAccessKey") is not None:
        plaintext = json.dumps({"accessKey": config["byosAccessKey"], "secretKey": config["byosSecretKey"]})
        section["byosCredentials"] = sealing.seal(plaintext.encode(), _credentials_context(tenant_id))
        access = config["byosAccessKey"]
        section["byosAccessKeyLast4"] = access[-4:] if len(access) >= 12 else None
    return {k: v for k, v in {**section, "updated_at": stamp}.items() if v is not None}


def put_storage(ctx: TenantContext, tenant_id: str, body: StorageConfigBody, store=tenants_table,
                guard: Callable[..., endpoint_guard.Target] = endpoint_guard.check) -> dict[str, Any]:
    tenant = own_tenant(ctx, tenant_id, store)
    if body.storageMode == "platform":
        config = _check_platform(body, tenant)
    else:
        require_feature(tenant, "byos", "Bring-your-own storage")
        config, _ = _check_byos(body, tenant, guard=guard)
    stamp = timeutil.iso(timeutil.now())
    section = _sealed_section(config, tenant["id"], stamp)
    try:
        updated = store.set_section(tenant["id"], SECTION, section, stamp)
    except ConditionFailed:
        raise not_found(tenant_id) from None
    logger.info("storage configured", extra={"storage_mode": config["storageMode"],
                                             "byos_provider": config.get("byosProvider")})
    return view_of(updated)


# ---- validating a BYOS connection ----------------------------------------------------------

def _open_keys(config: dict[str, Any], tenant_id: str) -> tuple[str, str]:
    if config.get("byosAccessKey") is not None:
        return config["byosAccessKey"], config["byosSecretKey"]
    try:
        opened = json.loads(sealing.unseal(config["byosCredentials"], _credentials_context(tenant_id)))
    except sealing.Unsealable:
        raise Conflict("The stored keys can no longer be opened; PUT the storage configuration with its keys again.",
                       {"resource": "storage", "field": "byosAccessKey"}) from None
    return opened["accessKey"], opened["secretKey"]


def validate_storage(ctx: TenantContext, tenant_id: str, body: StorageConfigBody | None, store=tenants_table,
                     guard: Callable[..., endpoint_guard.Target] = endpoint_guard.check,
                     probe: Callable[[storage_probe.Connection], list[dict[str, Any]]] | None = None
                     ) -> dict[str, Any]:
    """Connect with the configuration sent (not stored) or, without a body, the stored one."""
    tenant = own_tenant(ctx, tenant_id, store)
    if body is None:
        stored = tenant.get(SECTION) or {}
        if stored.get("storageMode") != "byos":
            raise _invalid([_problem("storageMode", "the stored storage is the platform's: there is no BYOS "
                                                    "connection to validate (send a byos configuration)")])
        body = StorageConfigBody.model_validate(
            {"storageMode": "byos", **{f: stored[f] for f in BYOS_FIELDS if stored.get(f) is not None}})
        source = "stored"
    else:
        source = "body"
        if body.storageMode != "byos":
            raise _invalid([_problem("storageMode", "only a byos configuration can be validated")])
    require_feature(tenant, "byos", "Bring-your-own storage")
    config, target = _check_byos(body, tenant, guard=guard)
    access_key, secret_key = _open_keys(config, tenant["id"])
    connection = storage_probe.Connection(provider=config["byosProvider"], target=target,
                                          bucket=config["byosBucket"], region=config.get("byosRegion"),
                                          access_key=access_key, secret_key=secret_key)
    steps = (probe or storage_probe.probe)(connection)
    ok = len(steps) == 3 and all(s["ok"] for s in steps)
    logger.info("storage validated", extra={"byos_provider": config["byosProvider"], "ok": ok,
                                            "reasons": [s.get("reason") for s in steps if not s["ok"]]})
    return {"ok": ok, "source": source, "byosProvider": config["byosProvider"],
            "byosEndpoint": config.get("byosEndpoint"), "byosBucket": config["byosBucket"], "steps": steps,
            "checked_at": timeutil.iso(timeutil.now())}
