"""The caller's own tenant, as the regions and storage endpoints read it, and its plan's gates.

A :tenantId in a path must be the caller's tenant. Any other id, whether it exists or not,
answers 404 exactly as a missing tenant does, so ids of other tenants are never confirmed.
"""

from __future__ import annotations

from typing import Any

from svc_core.auth import tenant_policy
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


def cached_plan(tenant_id: str) -> str:
    """The tenant's plan as this container's policy cache has it (no read: the request's own
    authentication has just read it; up to TENANT_POLICY_CACHE_SECONDS old). A write bounded by a
    limit of this plan names the plan in its condition (tenants_table.count_entry(plan=)), so a
    plan changed since fails it rather than passing the old limit."""
    policy = tenant_policy.policy_of(tenant_id)
    if policy is None:
        raise not_found(tenant_id)
    return policy.plan


def stored_counter(tenant_id: str, counter: str) -> tuple[str, int]:
    """After a bounded write was refused: the tenant's plan and counter as stored (read
    consistently), and this container's cached policy forgotten (its plan may be what changed)."""
    tenant_policy.forget(tenant_id)
    tenant = tenants_table.get_consistent(tenant_id)
    if tenant is None:
        raise not_found(tenant_id)
    return tenant.get("plan", plans.PLANS[0]), tenant.get(counter, tenants_table.COUNTER_DEFAULTS[counter])


def limit_of(plan: str, limit_name: str) -> int | None:
    """A plan's limit (a Limits field: seats, projects; None: no limit); a plan this service does
    not know has the first plan's."""
    return getattr(plans.LIMITS[plan_of({"plan": plan})], limit_name)


def limit_reached(limit_name: str, plan: str, what: str) -> Forbidden:
    """403 FORBIDDEN for one past the plan's limit (a Limits field: seats, projects), shaped as
    require_feature's, with the limit and the next plan that has more (None: none has)."""
    plan = plan_of({"plan": plan})
    limit = limit_of(plan, limit_name)
    required = plans.plan_with_more(plan, limit_name)
    upgrade = f"; the {required} plan allows more" if required else ""
    return Forbidden(f"The {plan} plan allows {limit} {what}{upgrade}.",
                     {"feature": limit_name, "limit": limit, "currentPlan": plan, "requiredPlan": required})
