"""The plans and what each one includes: the one feature matrix of the service.

Every check of a plan (a secondary region, BYOS, HIPAA, seats, the rate limit, the feature-check
endpoint) reads this table and nothing else. A feature is included from its plan upwards.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from svc_core.platform.config import settings

PLANS: tuple[str, ...] = ("free", "starter", "growth", "enterprise")  # in ascending order


@dataclass(frozen=True)
class Feature:
    key: str
    description: str
    from_plan: str


FEATURES: dict[str, Feature] = {f.key: f for f in (
    Feature("projects", "projects and their data", "free"),
    Feature("agents", "AI agents and their runs", "free"),
    Feature("chat", "chat sessions with streamed answers", "free"),
    Feature("webhooks", "signed webhook deliveries", "free"),
    Feature("secrets", "tenant secrets for agents", "free"),
    Feature("ip_allowlist", "restrict API keys to address ranges", "starter"),
    Feature("data_residency", "keep data within one jurisdiction", "starter"),
    Feature("secondary_region", "a failover region", "growth"),
    Feature("byos", "bring your own storage bucket (S3, R2, GCS, Azure)", "growth"),
    Feature("gdpr", "the gdpr compliance level", "starter"),
    Feature("hipaa", "the hipaa compliance level", "enterprise"),
    Feature("audit_log_export", "export of the audit log", "enterprise"),
)}


@dataclass(frozen=True)
class Limits:
    seats: int | None            # members of the tenant; None: no limit
    projects: int | None
    rate_limit_multiplier: int   # times the deployment's base rate limit (RateLimitPerWindow)


LIMITS: dict[str, Limits] = {
    "free": Limits(seats=3, projects=10, rate_limit_multiplier=1),
    "starter": Limits(seats=10, projects=100, rate_limit_multiplier=2),
    "growth": Limits(seats=50, projects=1000, rate_limit_multiplier=5),
    "enterprise": Limits(seats=None, projects=None, rate_limit_multiplier=20),
}

# What a plan costs a month, in US cents (billing: svc_core/domain/billing.py). A paid period's charge
# is credited to the tenant's balance as credits (1 credit = 1 USD), so the price is also the
# period's included usage; free costs nothing and includes nothing.
# A tenant's ceiling: every request of all its credentials together, per window, is at most this many
# times the plan's per-credential limit (so five busy keys reach it; one key alone never does).
TENANT_CEILING_MULTIPLE = 5

MONTHLY_PRICE_CENTS: dict[str, int] = {"free": 0, "starter": 2_000, "growth": 10_000, "enterprise": 50_000}


def rank(plan: str) -> int:
    return PLANS.index(plan)


def has_feature(plan: str, feature_key: str) -> bool:
    return rank(plan) >= rank(FEATURES[feature_key].from_plan)


def required_plan(feature_key: str) -> str:
    return FEATURES[feature_key].from_plan


def plan_with_more(plan: str, limit_name: str) -> str | None:
    """The first plan above `plan` whose limit (a Limits field: seats, projects) is higher; None
    when no plan has more."""
    current = getattr(LIMITS[plan], limit_name)
    if current is None:
        return None
    return next((p for p in PLANS[rank(plan) + 1:]
                 if (more := getattr(LIMITS[p], limit_name)) is None or more > current), None)


def requests_per_window(plan: str) -> int:
    return settings().rate_limit_per_window * LIMITS[plan].rate_limit_multiplier


def tenant_requests_per_window(plan: str) -> int:
    return requests_per_window(plan) * TENANT_CEILING_MULTIPLE


def describe(plan: str) -> dict[str, Any]:
    """A plan as the API shows it."""
    limits = LIMITS[plan]
    return {"plan": plan, "features": sorted(k for k in FEATURES if has_feature(plan, k)),
            "limits": {"seats": limits.seats, "projects": limits.projects,
                       "rateLimit": {"requests": requests_per_window(plan),
                                     "tenantRequests": tenant_requests_per_window(plan),
                                     "windowSeconds": settings().rate_limit_window_seconds}}}
