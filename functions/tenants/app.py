"""Tenants: list, create, read, and change settings."""

from __future__ import annotations  # the models are named lazily (svc_core/domain/models)

from svc_core.domain import tenants
from svc_core.http.api import AUTHENTICATED, Api
from svc_core.platform.lazy import lazy_module

models = lazy_module("svc_core.domain.models.tenants")
api = Api()
TAGS = ["Tenants"]


@api.get("/api/v1/tenants", scope="tenants:read", response_model="models.TenantList", tags=TAGS,
         summary="The tenants the caller belongs to (an API key: its own)")
def list_tenants():
    return tenants.list_tenants(api.tenant_context())


@api.post("/api/v1/tenants", scope=AUTHENTICATED, status=201, response_model="models.Tenant", tags=TAGS,
          summary="Create a tenant the signed-in caller owns (free plan)",
          idempotent="tenant.create",
          description="A signed-in user only (an API key gets 403). At most TENANTS_PER_USER (default 5) tenants "
                      "per user, the one made at registration included: past it 403 FORBIDDEN with details.limit and "
                      "details.reason \"tenant_limit\". Only the user's first tenant has the welcome credit. Emits "
                      "tenant.created in the new tenant and in the tenant of the caller's token.",
          errors=(409,))
def create_tenant(body: models.TenantCreate):
    return tenants.create_tenant(api.tenant_context(), body)


@api.get("/api/v1/tenants/{id}", scope="tenants:read", response_model="models.Tenant", tags=TAGS,
         summary="Read a tenant the caller belongs to, with its settings and plan details",
         description="Any tenant the caller is not a member of is 404.")
def get_tenant(id: str):
    return tenants.get_tenant(api.tenant_context(), id)


@api.patch("/api/v1/tenants/{id}/settings", scope="tenants:write", response_model="models.Tenant", tags=TAGS,
           summary="Change the settings sent (owners and admins); null resets one to its default",
           description="Only the tenant the credential is for (another one of a user's: refresh with its "
                       "tenantId first); else 404. A non-empty ipAllowlist needs the ip_allowlist feature of "
                       "the plan (403 with details.requiredPlan).")
def update_settings(id: str, body: models.SettingsPatch):
    return tenants.update_settings(api.tenant_context(), id, body)


api.snapstart()  # SnapStart's hooks (svc_core/platform/snapshot.py); a no-op outside Lambda
lambda_handler = api.handler
