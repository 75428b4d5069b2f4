"""API keys: create, list, read, revoke, rotate."""

from __future__ import annotations  # the models are named lazily (svc_core/domain/models)

from typing import Annotated

from svc_core.domain import api_keys
from svc_core.domain.paging import DEFAULT_LIMIT, MAX_LIMIT
from svc_core.http.api import Api
from svc_core.http.params import Body, IdCursor, Query
from svc_core.platform.lazy import lazy_module

models = lazy_module("svc_core.domain.models.api_keys")
api = Api()
TAGS = ["API keys"]


@api.post("/api/v1/api-keys", scope="keys:write", status=201, response_model="models.ApiKeyWithSecret", tags=TAGS,
          summary="Create an API key (its value is returned this once)",
          description="Not replayable with an Idempotency-Key, unlike the other creates: a key's value is stored "
                      "nowhere (only its HMAC), so no earlier answer could be given again. A client that lost the "
                      "answer revokes the key it cannot use (listed by its name) and creates another. A key acts for "
                      "the person who made it (or who holds the key that made it): it is revoked when they leave the "
                      "tenant, or when their role loses a scope it holds. A user's role is checked as the key is "
                      "made: 403 details.reason role_changed when it no longer holds the scopes.")
def create_key(body: models.ApiKeyCreate):
    return api_keys.create_key(api.tenant_context(), body)


@api.get("/api/v1/api-keys", scope="keys:read", response_model="models.ApiKeyPage", tags=TAGS,
         summary="List the tenant's API keys, newest first")
def list_keys(limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
              cursor: IdCursor = None):
    return api_keys.list_keys(api.tenant_context(), limit, cursor)


@api.get("/api/v1/api-keys/{id}", scope="keys:read", response_model="models.ApiKey", tags=TAGS,
         summary="Read one API key (never its value)")
def get_key(id: str):
    return api_keys.get_key(api.tenant_context(), id)


@api.delete("/api/v1/api-keys/{id}", scope="keys:write", response_model="models.ApiKey", tags=TAGS,
            summary="Revoke an API key: its next use is refused")
def revoke_key(id: str):
    return api_keys.revoke_key(api.tenant_context(), id)


@api.post("/api/v1/api-keys/{id}/rotate", scope="keys:write", response_model="models.ApiKeyWithSecret", tags=TAGS, errors=(409,),
          summary="Give a key a new value; the earlier ones work for the chosen overlap at most",
          description="Every earlier value still working (the one replaced and any still in an earlier rotation's "
                      "overlap) works until now + overlapSeconds at the latest, never past the key's expiry: a "
                      "shorter overlap shortens an earlier one's too, and 0 ends every earlier value at once (for a "
                      "leaked value). At most five values work at once: a rotation that would make a sixth is 409.")
def rotate_key(id: str, body: Annotated[models.ApiKeyRotate | None, Body()] = None):
    return api_keys.rotate_key(api.tenant_context(), id, body or models.ApiKeyRotate())


api.snapstart()  # SnapStart's hooks (svc_core/platform/snapshot.py); a no-op outside Lambda
lambda_handler = api.handler
