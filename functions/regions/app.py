"""Regions and storage: the region catalogue, a tenant's regional preferences and storage
configuration (platform or BYOS, with a live check of a BYOS bucket), plan feature checks and
the routing information. Every :tenantId must be the caller's tenant (else 404)."""

from __future__ import annotations  # the models are named lazily (svc_core/domain/models)

from typing import Annotated

from svc_core.domain import region_preferences, routing, storage
from svc_core.http.api import AUTHENTICATED, Api
from svc_core.http.params import Body
from svc_core.platform.lazy import lazy_module

models = lazy_module("svc_core.domain.models.regions")
tenant_moves = lazy_module("svc_core.domain.tenant_moves")  # its routes only: the others start without it
api = Api()
TAGS = ["Regions and storage"]
PLAN_403 = ("403 FORBIDDEN with details.feature, requiredPlan and currentPlan when the tenant's plan does not "
            "include what is asked for.")


@api.get("/api/v1/regions", scope=AUTHENTICATED, response_model="models.RegionList", tags=TAGS,
         summary="List the region catalogue: jurisdiction, compliance levels and availability of each region")
def list_regions():
    return region_preferences.list_regions()


@api.get("/api/v1/regions/preferences/{tenantId}", scope="tenants:read", response_model="models.Preferences", tags=TAGS,
         summary="Read the tenant's regional preferences (the defaults until it sets them)")
def get_preferences(tenantId: str):
    return region_preferences.get_preferences(api.tenant_context(), tenantId)


@api.patch("/api/v1/regions/preferences/{tenantId}", scope="tenants:write", response_model="models.Preferences",
           tags=TAGS, errors=(409,), summary="Change the regional preferences sent; the result is checked as a whole",
           description="Regions must be available regions of the catalogue; secondaryRegion differs from the "
                       "primary; dataResidencyRequired needs dataResidencyRegion and both regions inside it; gdpr "
                       "and hipaa need regions certified for them. The body's allOf says these rules for the "
                       "fields sent (400 otherwise). " + PLAN_403 + " 409 CONFLICT when the fields sent break a "
                       "rule with the current preferences (details.fields, and details.current with the current "
                       "values of the fields not sent), or when data residency would exclude the stored platform "
                       "storage region.")
def update_preferences(tenantId: str, body: models.PreferencesUpdate):
    return region_preferences.update_preferences(api.tenant_context(), tenantId, body)


@api.get("/api/v1/regions/storage/{tenantId}", scope="tenants:read", response_model="models.StorageConfig", tags=TAGS,
         summary="Read the storage configuration (never the BYOS keys)")
def get_storage(tenantId: str):
    return storage.get_storage(api.tenant_context(), tenantId)


@api.put("/api/v1/regions/storage/{tenantId}", scope="tenants:write", response_model="models.StorageConfig", tags=TAGS,
         errors=(409,), summary="Set the storage configuration: platform, or BYOS (s3, r2, gcs, azure)",
         description="BYOS keys are sealed with KMS and never answered; leaving both out keeps the stored ones while "
                     "byosProvider, byosEndpoint and byosBucket stay the same (else 409 CONFLICT). The endpoint is "
                     "https with a DNS name; what the name resolves to is checked before every connection (the "
                     "validation reports a refused one), not here: a PUT resolves nothing, and a name the pattern "
                     "refuses is 400 code malformed whatever it would resolve to. " + PLAN_403 + " 409 CONFLICT when "
                     "platformRegion lies outside the stored data residency region.")
def put_storage(tenantId: str, body: Annotated[models.StorageConfigBody, Body()]):
    return storage.put_storage(api.tenant_context(), tenantId, body)


@api.post("/api/v1/regions/storage/{tenantId}/validate", scope="tenants:write",
          response_model="models.StorageValidation", tags=TAGS, errors=(409,),
          summary="Check a BYOS bucket for real: write a small object, read it back, delete it",
          description="Without a body, the stored configuration; with one, that configuration (not stored; keys left "
                      "out are taken from the stored configuration under the PUT's rule). A failed step is a 200 "
                      "with ok false and the step's reason (bad_credentials, no_such_bucket, access_denied, "
                      "wrong_region, unreachable, timeout, unexpected_response, endpoint_refused: the endpoint "
                      "resolves to an address the service may not connect to). " + PLAN_403 + " 409 CONFLICT "
                      "without a body when the stored storage is the platform's (details.storageMode), or when "
                      "keys are left out and none are stored for that place.")
def validate_storage(tenantId: str,
                     body: Annotated[models.ByosConfigBody | None, Body()] = None):
    return storage.validate_storage(api.tenant_context(), tenantId, body)


@api.get("/api/v1/regions/features/{tenantId}/check/{featureKey}", scope="tenants:read",
         response_model="models.FeatureCheck", tags=TAGS,
         summary="Whether the tenant's plan includes a feature, and from which plan it is included")
def check_feature(tenantId: str, featureKey: str):
    return routing.check_feature(api.tenant_context(), tenantId, featureKey)


@api.post("/api/v1/regions/migrations/{tenantId}", scope="tenants:write", status=202, response_model="models.Migration",
          tags=TAGS, errors=(409,), summary="Move the tenant's data to another region's cell",
          description="Copies every item and file of the tenant to the cell of toRegion, verifies counts and "
                      "checksums, pauses writes for the switch (503 SERVICE_UNAVAILABLE, details.reason "
                      "tenant_moving, Retry-After), homes the tenant there and deletes the old copies; reads go on "
                      "throughout. Follow it with GET. 409 CONFLICT when a move is under way (details.reason "
                      "move_under_way), the tenant already lives there (same_region), the region holds its secondary "
                      "copy (secondary_region), the region lies outside its data residency region "
                      "(outside_residency) or the deployment has a single cell (single_cell).")
def start_migration(tenantId: str, body: models.MigrationStart):
    return tenant_moves.start_move(api.tenant_context(), tenantId, body.toRegion)


@api.get("/api/v1/regions/migrations/{tenantId}", scope="tenants:read", response_model="models.Migration", tags=TAGS,
         summary="The tenant's latest move between cells: its status, progress per table and files, the pause")
def get_migration(tenantId: str):
    return tenant_moves.get_move(api.tenant_context(), tenantId)


@api.get("/api/v1/routing-info", scope=AUTHENTICATED, response_model="models.RoutingInfo", tags=TAGS,
         summary="Debug routing: the request id, the serving region and stage, and the caller's regions and storage")
def routing_info():
    return routing.routing_info(api.tenant_context())


api.snapstart()  # SnapStart's hooks (svc_core/platform/snapshot.py); a no-op outside Lambda
lambda_handler = api.handler
