"""What a developer debugging routing needs to see, and whether a plan includes a feature."""

from __future__ import annotations

from typing import Any

from svc_core.auth.context import TenantContext
from svc_core.contracts import cells, plans
from svc_core.data import tenants_table
from svc_core.domain import region_preferences, storage
from svc_core.domain.tenant_access import own_tenant, plan_of
from svc_core.platform.config import settings
from svc_core.platform.errors import NotFound

API_VERSION = "v1"


def routing_info(ctx: TenantContext, store=tenants_table) -> dict[str, Any]:
    tenant = own_tenant(ctx, store=store)
    prefs = region_preferences.effective(tenant)
    view = storage.view_of(tenant)
    home = tenant.get("homeRegion") or cells.here()
    return {"requestId": ctx.request_id, "servingRegion": settings().aws_region, "stage": settings().stage,
            "homeRegion": home, "homeBaseUrl": cells.base_url(home),
            "apiVersion": API_VERSION, "tenantId": tenant["id"], "plan": plan_of(tenant),
            "primaryRegion": prefs["primaryRegion"], "secondaryRegion": prefs["secondaryRegion"],
            "dataResidency": {"required": prefs["dataResidencyRequired"], "region": prefs["dataResidencyRegion"]},
            "storage": {"mode": view["storageMode"], "region": storage.storage_region(tenant),
                        "provider": view["byosProvider"]}}


def check_feature(ctx: TenantContext, tenant_id: str, feature_key: str, store=tenants_table) -> dict[str, Any]:
    tenant = own_tenant(ctx, tenant_id, store)
    feature = plans.FEATURES.get(feature_key)
    if feature is None:
        raise NotFound("No such feature.", {"id": feature_key, "resource": "feature",
                                            "features": sorted(plans.FEATURES)})
    plan = plan_of(tenant)
    return {"featureKey": feature.key, "enabled": plans.has_feature(plan, feature.key), "currentPlan": plan,
            "requiredPlan": feature.from_plan, "description": feature.description}

