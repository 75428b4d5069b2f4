"""The caller's own tenant, as the regions and storage endpoints read it, and its plan's gates.

A :tenantId in a path must be the caller's tenant. Any other id, whether it exists or not,
answers 404 exactly as a missing tenant does, so ids of other tenants are never confirmed.
"""

from __future__ import annotations

from typing import Any

from svc_core.auth.context import TenantContext
from svc_core.contracts import plans
from svc_core.data import tenants_table
from svc_core.platform.errors import Forbidden, NotFound


def not_found(tenant_id: str) -> NotFound:
    return NotFound("The tenant does not exist.", {"id": tenant_id, "resource": "tenant"})


def own_tenant(ctx: TenantContext, tenant_id: str | None = None, store=tenants_table) -> dict[str, Any]:
    """The caller's tenant item (read consistently); 404 for any other id."""
    wanted = ctx.tenant_id if tenant_id is None else tenant_id
    if wanted != ctx.tenant_id:
        raise not_found(wanted)
    tenant = store.get_consistent(wanted)
    if tenant is None:
        raise not_found(wanted)
    return tenant


def plan_of(tenant: dict[str, Any]) -> str:
    plan = tenant.get("plan")
    return plan if plan in plans.PLANS else plans.PLANS[0]


def require_feature(tenant: dict[str, Any], feature_key: str, what: str) -> None:
    """403 FORBIDDEN naming the plan that includes the feature, when the tenant's does not."""
    plan = plan_of(tenant)
    if not plans.has_feature(plan, feature_key):
        required = plans.required_plan(feature_key)
        raise Forbidden(f"{what} needs the {required} plan or above; this tenant is on {plan}.",
                        {"feature": feature_key, "requiredPlan": required, "currentPlan": plan})
