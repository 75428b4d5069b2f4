"""Public documents (not authenticated, not rate limited): the JWKS that verifies service
tokens and the OpenAPI description. Every other path under /api/v1 also lands here, and gets
the envelope's 404 (or 401 without a credential)."""

import json
from functools import lru_cache
from pathlib import Path

from svc_core.adapters.models.registry import allowed_models
from svc_core.auth import signing_keys
from svc_core.http.api import Api
from svc_core.platform.config import settings
from svc_core.rules import deployment_document

api = Api()


@api.get("/api/v1/.well-known/jwks.json", public=True, raw=True, cache_seconds=300, tags=["Authentication"],
         summary="The public keys that verify the service's access tokens (RFC 7517)",
         description="A bare JWK Set, not wrapped in the envelope, so any JOSE library can read it.")
def jwks():
    return signing_keys.jwks(signing_keys.current())


@lru_cache(maxsize=1)
def _openapi_document() -> dict:
    """The committed document with the lists this deployment decides (its allowed models)."""
    document = json.loads((Path(__file__).parent / "openapi.json").read_text())
    return deployment_document.fill(document, {deployment_document.ALLOWED_MODELS: allowed_models(settings())})


@api.get("/api/v1/openapi.json", public=True, raw=True, cache_seconds=300, tags=["Meta"],
         summary="This API's OpenAPI 3.1 description",
         description="Generated from the code (python -m devstack.openapi --write); not wrapped in the envelope.")
def openapi_document():
    return _openapi_document()


lambda_handler = api.handler
