"""Tenant secrets: metadata in answers, values sealed at rest and never answered."""

from __future__ import annotations  # the models are named lazily (svc_core/domain/models)

from typing import Annotated

from svc_core.domain import tenant_secrets
from svc_core.domain.paging import DEFAULT_LIMIT, MAX_LIMIT
from svc_core.http import idempotency
from svc_core.http.api import Api
from svc_core.http.params import IdCursor, Query
from svc_core.platform.lazy import lazy_module

models = lazy_module("svc_core.domain.models.secrets")
api = Api()
TAGS = ["Secrets"]


@api.get("/api/v1/secrets", scope="secrets:read", response_model="models.SecretPage", tags=TAGS,
         summary="List the tenant's secrets (metadata only), newest first")
def list_secrets(limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
                 cursor: IdCursor = None):
    return tenant_secrets.list_secrets(api.tenant_context(), limit, cursor)


@api.post("/api/v1/secrets", scope="secrets:write", status=201, response_model="models.Secret", tags=TAGS,
          errors=idempotency.ERRORS, summary="Store a secret (its value is sealed and never answered)",
          description=idempotency.DESCRIPTION.strip())
def create_secret(body: models.SecretCreate, idempotency_key: idempotency.IdempotencyKey = None):
    return idempotency.run(api, "secret.create", idempotency_key, body.model_dump(mode="json"),
                           lambda: tenant_secrets.create_secret(api.tenant_context(), body))


@api.get("/api/v1/secrets/{id}", scope="secrets:read", response_model="models.Secret", tags=TAGS,
         summary="Read one secret's metadata")
def get_secret(id: str):
    return tenant_secrets.get_secret(api.tenant_context(), id)


@api.patch("/api/v1/secrets/{id}", scope="secrets:write", response_model="models.Secret", tags=TAGS, errors=(409,),
           summary="Change the description, or set a new value (a new version)")
def update_secret(id: str, body: models.SecretUpdate):
    return tenant_secrets.update_secret(api.tenant_context(), id, body)


@api.delete("/api/v1/secrets/{id}", scope="secrets:write", response_model="models.SecretDeleted", tags=TAGS, errors=(409,),
            summary="Delete a secret and its value")
def delete_secret(id: str):
    return tenant_secrets.delete_secret(api.tenant_context(), id)


api.snapstart()  # SnapStart's hooks (svc_core/platform/snapshot.py); a no-op outside Lambda
lambda_handler = api.handler
