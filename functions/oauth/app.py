"""OAuth provider connections: start a provider's authorization-code flow (GET or POST), finish
it (POST authorize; GET there is 405), and list and delete the tenant's connections."""

from __future__ import annotations  # the models are named lazily (svc_core/domain/models)

from typing import Annotated

from svc_core.domain import oauth_connections
from svc_core.domain.paging import DEFAULT_LIMIT, MAX_LIMIT
from svc_core.http.api import AUTHENTICATED, Api
from svc_core.http.params import Body, IdCursor, Query
from svc_core.platform.lazy import lazy_module

models = lazy_module("svc_core.domain.models.oauth")
api = Api()
TAGS = ["OAuth connections"]
START = ("A signed-in user only (an API key is 403). Stores a flow for this user, tenant and provider "
         "for 10 minutes, with a PKCE S256 verifier that never leaves the service; answers the provider's "
         "authorization URL carrying `state` and the code challenge. An unknown provider is 404.")


@api.get("/api/v1/oauth/{provider}/start", scope=AUTHENTICATED, response_model="models.FlowStarted", tags=TAGS,
         summary="Start connecting a provider account: the provider's authorization URL", description=START)
def oauth_start(provider: str):
    return oauth_connections.start(api.tenant_context(), provider)


@api.post("/api/v1/oauth/{provider}/start", scope=AUTHENTICATED, response_model="models.FlowStarted", tags=TAGS,
          summary="Start connecting a provider account (as GET; the body, if any, is an empty object)",
          description=START)
def oauth_start_post(provider: str, body: Annotated[models.OAuthStartBody | None, Body()] = None):
    return oauth_connections.start(api.tenant_context(), provider)


@api.post("/api/v1/oauth/{provider}/authorize", scope=AUTHENTICATED, status=201, response_model="models.Connection",
          tags=TAGS, errors=(502,), summary="Finish connecting: exchange the provider's code, store the connection",
          description="A signed-in user only. The state must name an unexpired flow that this user started "
                      "in this tenant for this provider (else 400 with details.reason unknown_state, "
                      "expired_state or provider_mismatch; nothing changes). The code is exchanged at the "
                      "provider's token endpoint; a refusal or no answer is 502 PROVIDER_ERROR "
                      "(details.providerError) and leaves the flow for a retry. The tokens are stored "
                      "sealed with KMS and never answered.")
def oauth_authorize(provider: str, body: models.AuthorizeBody):
    return oauth_connections.authorize(api.tenant_context(), provider, body)


@api.get("/api/v1/oauth/connections", scope="secrets:read", response_model="models.ConnectionPage", tags=TAGS,
         summary="List the tenant's provider connections, newest first (never their tokens)")
def list_connections(limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
                     cursor: IdCursor = None):
    return oauth_connections.list_connections(api.tenant_context(), limit, cursor)


@api.delete("/api/v1/oauth/connections/{id}", scope=AUTHENTICATED, response_model="models.ConnectionDeleted", tags=TAGS,
            summary="Delete a provider connection and its stored tokens",
            description="The user who connected it, or any credential holding secrets:write (else 403).")
def delete_connection(id: str):
    return oauth_connections.delete_connection(api.tenant_context(), id)


api.snapstart()  # SnapStart's hooks (svc_core/platform/snapshot.py); a no-op outside Lambda
lambda_handler = api.handler
