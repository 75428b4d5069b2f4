"""Storage configuration: the platform's storage in a region of the catalogue, or the tenant's
own (BYOS: an S3, R2, GCS or Azure bucket), and the check that BYOS really works.

A body is one of the variants of the document (oneOf, told apart by storageMode and byosProvider;
what each provider needs is PROVIDER_RULES in domain/fields/regions.py, which makes both the models
(domain/models/regions) and the document):
    s3     byosBucket, byosRegion (byosEndpoint optional: AWS's regional endpoint by default)
    r2     byosEndpoint, byosBucket
    gcs    byosEndpoint (its S3-interoperable endpoint), byosBucket
    azure  byosEndpoint (the account's blob endpoint), byosBucket (the container)
and byosAccessKey + byosSecretKey together (for azure: the account name and the account key), or
neither, to keep the stored ones.

The two keys are sealed together with KMS (svc_core/adapters/sealing.py) under the context
{purpose: byos-credentials, tenantId}; only the sealed value and the last four characters of
the access key are stored, and no answer carries either key. A PUT that leaves both keys out
keeps the stored ones while byosProvider, byosEndpoint and byosBucket stay the same (else 409
CONFLICT: there are no stored keys for that place); switching to platform storage drops them.

An endpoint is https://host[:port][/path] with a DNS name for host (ENDPOINT_PATTERN, the
document's pattern): an IP address or a one-label name never names a storage service. Whether
the name resolves, and to what, is not known from the text: a PUT resolves nothing (a name the
pattern refuses is `malformed` whatever it would resolve to; only the development setting below
resolves one, to accept loopback), and every
connection (validation, the agents' tools) checks it first with svc_core/adapters/endpoint_guard.py (SSRF
rules, its name resolved anew each time, the connection pinned to the checked address); a
refused or unresolvable endpoint is reported by the validation (200, ok false). For local
development (AllowLoopbackEndpoints) an endpoint on loopback is accepted too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from svc_core.adapters import endpoint_guard, project_files, project_files_bucket, sealing, storage_probe
from svc_core.auth.context import TenantContext
from svc_core.contracts import regions
from svc_core.data import tenants_table
from svc_core.data.common import ConditionFailed
from svc_core.domain import audit, region_preferences
from svc_core.domain.fields.regions import ENDPOINT_PATTERN, KEYS
from svc_core.domain.tenant_access import not_found, own_tenant, require_feature
from svc_core.platform import timeutil
from svc_core.platform.config import settings
from svc_core.platform.errors import Conflict, ServiceError, ValidationFailed
from svc_core.platform.log import logger

if TYPE_CHECKING:
    from svc_core.domain.models.regions import PlatformStorageBody, StorageConfigBody, _ByosBody

SECTION = "storage"
BYOS_FIELDS = ("byosProvider", "byosEndpoint", "byosBucket", "byosRegion", "byosAccessKey", "byosSecretKey")
CREDENTIALS_CONTEXT_PURPOSE = "byos-credentials"
_ENDPOINT = re.compile(ENDPOINT_PATTERN)
ENDPOINT_RULE = ("must be https://host[:port][/path] with a DNS name of two labels or more for host (no IP "
                 "address, user, query or fragment)")

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


def _check_platform(body: PlatformStorageBody, tenant: dict[str, Any]) -> dict[str, Any]:
    """The body is valid (its model); what can still fail is the stored preferences: 409."""
    prefs = region_preferences.effective(tenant)
    region_id = body.platformRegion or prefs["primaryRegion"]
    read = {} if body.platformRegion else {"primaryRegion": region_id}  # the default is the stored primary
    problem = region_preferences.region_problem(region_id)
    if not problem and prefs["dataResidencyRequired"] \
            and regions.REGIONS[region_id].jurisdiction != prefs["dataResidencyRegion"]:
        problem = f"{region_id} lies outside the data residency region {prefs['dataResidencyRegion']}"
        read.update(dataResidencyRequired=True, dataResidencyRegion=prefs["dataResidencyRegion"])
    if problem:
        raise Conflict("The platform region conflicts with the regional preferences: change them first "
                       "(PATCH /regions/preferences/:tenantId) or choose another platformRegion.",
                       {"resource": "regionPreferences", "fields": [_problem("platformRegion", problem)],
                        "current": read})
    return {"storageMode": "platform", "platformRegion": region_id}


def check_endpoint(url: str, guard: Callable[..., endpoint_guard.Target] = endpoint_guard.check
                   ) -> endpoint_guard.Target | None:
    """400 when a byosEndpoint sent is refused by its text: ENDPOINT_PATTERN, the document's rule.
    Nothing is resolved: what a name resolves to is no part of the answer (else a PUT would tell
    what inside names point at), and every connection checks it anew. When the pattern refuses, the
    guard says why if the text alone can (an IP address: `private`, `loopback`...; the port; the
    scheme), else it is `malformed`, whatever the name would resolve to.
    Only the development setting lets more through, an endpoint on loopback: then, and only then,
    a name is resolved to see whether it points at loopback only (its checked Target is returned,
    not to resolve it twice)."""
    if _ENDPOINT.fullmatch(url):
        return None
    allow_loopback = settings().allow_loopback_endpoints
    try:
        if not allow_loopback and not endpoint_guard.is_ip_literal(endpoint_guard.parse(url)[1]):
            raise _invalid([_problem("byosEndpoint", ENDPOINT_RULE, code="malformed")])
        target = guard(url, allow_loopback=allow_loopback, require_resolution=False)
    except endpoint_guard.EndpointRefused as refused:
        raise _invalid([_problem("byosEndpoint", refused.reason, code=refused.code)]) from None
    if allow_loopback and target.addresses \
            and all(endpoint_guard.address_problem(a) == "loopback" for a in target.addresses):
        return target
    raise _invalid([_problem("byosEndpoint", ENDPOINT_RULE, code="malformed")])


def _byos_config(body: _ByosBody, tenant: dict[str, Any], guard: Callable[..., endpoint_guard.Target]
                 ) -> tuple[dict[str, Any], endpoint_guard.Target | None]:
    """The configuration sent, with its keys in clear or the stored sealed ones (and the endpoint's
    Target if checking its text resolved it already)."""
    target = None if body.byosEndpoint is None else check_endpoint(body.byosEndpoint, guard)
    config = {"storageMode": "byos", **{f: getattr(body, f) for f in BYOS_FIELDS}}
    if config["byosAccessKey"] is not None:
        return config, target
    stored = tenant.get(SECTION) or {}
    if stored.get("storageMode") == "byos" and stored.get("byosCredentials") and _same_place(stored, config):
        return {**config, "byosCredentials": stored["byosCredentials"],
                "byosAccessKeyLast4": stored.get("byosAccessKeyLast4")}, target
    view = view_of(tenant)
    raise Conflict("No keys are stored for this byosProvider, byosEndpoint and byosBucket: send byosAccessKey and "
                   "byosSecretKey.",
                   {"resource": "storage",
                    "fields": [_problem(k, "is required: the stored keys are kept only while byosProvider, "
                                           "byosEndpoint and byosBucket stay the same") for k in KEYS],
                    "current": {f: view[f] for f in ("storageMode", "byosProvider", "byosEndpoint", "byosBucket",
                                                     "byosAccessKeySet")}})


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
    from svc_core.domain.models.regions import PlatformStorageBody  # a body was bound: pydantic is loaded

    tenant = own_tenant(ctx, tenant_id, store)
    if isinstance(body, PlatformStorageBody):
        config = _check_platform(body, tenant)
    else:
        require_feature(tenant, "byos", "Bring-your-own storage")
        config, _ = _byos_config(body, tenant, guard)
    stamp = timeutil.iso(timeutil.now())
    section = _sealed_section(config, tenant["id"], stamp)
    changes = _storage_changes(tenant, section, config)
    recorded = audit.entries_if_changed(tenant["id"], "tenant.storage_changed", "tenant", tenant["id"], changes,
                                        ctx=ctx)
    try:
        updated = store.set_section(tenant["id"], SECTION, section, stamp, also=recorded)
    except ConditionFailed:
        raise not_found(tenant_id) from None
    logger.info("storage configured", extra={"storage_mode": config["storageMode"],
                                             "byos_provider": config.get("byosProvider")})
    return view_of(updated)


# What the audit log records of a storage change: where the storage is, never a key (nor its last
# characters); new keys sent are recorded as replaced.
_RECORDED_FIELDS = ("storageMode", "platformRegion", "byosProvider", "byosEndpoint", "byosBucket", "byosRegion",
                    "byosAccessKeySet")


def _storage_changes(tenant: dict[str, Any], section: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    before, after = view_of(tenant), view_of({**tenant, SECTION: section})
    changes = audit.changed(before, after, _RECORDED_FIELDS)
    if config.get("byosAccessKey") is not None:
        changes["byosKeys"] = {"old": "set" if before["byosAccessKeySet"] else "none", "new": "replaced"}
    return changes


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


def files_for(tenant_id: str, tenants=tenants_table) -> project_files.ProjectFiles:
    """The files of the tenant's projects, where its storage configuration puts them: the platform's
    bucket, or its own (BYOS) with the endpoint checked anew (SSRF rules, resolved now) and the keys
    opened here. A BYOS that cannot be used is StorageUnavailable, never the platform's bucket."""
    stored = (tenants.get_consistent(tenant_id) or {}).get(SECTION) or {}
    if stored.get("storageMode") != "byos":
        return project_files_bucket
    try:
        target = endpoint_guard.check(endpoint_of(stored) or "", allow_loopback=settings().allow_loopback_endpoints)
    except endpoint_guard.EndpointRefused as refused:
        raise project_files.StorageUnavailable(f"The tenant's storage may not be used: {refused.reason}.") from None
    try:
        return project_files.byos_files(_connection(stored, target, tenant_id))
    except ServiceError as exc:
        raise project_files.StorageUnavailable(exc.message) from None


def _connection(config: dict[str, Any], target: endpoint_guard.Target, tenant_id: str) -> storage_probe.Connection:
    """A connection to the BYOS configuration's bucket at the checked address, its keys opened."""
    access_key, secret_key = _open_keys(config, tenant_id)
    return storage_probe.Connection(provider=config["byosProvider"], target=target, bucket=config["byosBucket"],
                                    region=config.get("byosRegion"), access_key=access_key, secret_key=secret_key)


def _refused(refused: endpoint_guard.EndpointRefused) -> list[dict[str, Any]]:
    """The check's answer when the endpoint may not be connected to (what it resolves to is known
    only now): the first step fails, nothing was sent."""
    return [{"step": "write", "ok": False, "latencyMs": 0, "reason": "endpoint_refused",
             "message": f"Not connected: {refused.reason} ({refused.code})."}]


def validate_storage(ctx: TenantContext, tenant_id: str, body: _ByosBody | None, store=tenants_table,
                     guard: Callable[..., endpoint_guard.Target] = endpoint_guard.check,
                     probe: Callable[[storage_probe.Connection], list[dict[str, Any]]] | None = None
                     ) -> dict[str, Any]:
    """Connect with the configuration sent (not stored) or, without a body, the stored one."""
    tenant = own_tenant(ctx, tenant_id, store)
    stored = tenant.get(SECTION) or {}
    if body is None and stored.get("storageMode") != "byos":
        raise Conflict("The stored storage is the platform's: there is no BYOS connection to validate (send a byos "
                       "configuration).", {"resource": "storage", "storageMode": "platform"})
    require_feature(tenant, "byos", "Bring-your-own storage")
    target = None
    if body is None:
        source = "stored"
        config = {"storageMode": "byos", **{f: stored.get(f) for f in BYOS_FIELDS},
                  "byosCredentials": stored.get("byosCredentials")}
    else:
        source = "body"
        config, target = _byos_config(body, tenant, guard)
    try:  # the SSRF rules, with the name resolved now; the probe connects to the address checked here
        target = target or guard(endpoint_of(config) or "", allow_loopback=settings().allow_loopback_endpoints,
                                 require_resolution=False)
    except endpoint_guard.EndpointRefused as refused:
        steps = _refused(refused)
    else:
        steps = (probe or storage_probe.probe)(_connection(config, target, tenant["id"]))
    ok = len(steps) == 3 and all(s["ok"] for s in steps)
    logger.info("storage validated", extra={"byos_provider": config["byosProvider"], "ok": ok,
                                            "reasons": [s.get("reason") for s in steps if not s["ok"]]})
    return {"ok": ok, "source": source, "byosProvider": config["byosProvider"],
            "byosEndpoint": config.get("byosEndpoint"), "byosBucket": config["byosBucket"], "steps": steps,
            "checked_at": timeutil.iso(timeutil.now())}
