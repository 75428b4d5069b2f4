"""Public documents (not authenticated, not rate limited): the JWKS that verifies service
tokens and the OpenAPI description. Every other path under /api/v1 also lands here, and gets
the envelope's 404 (or 401 without a credential)."""

import json
from functools import lru_cache
from pathlib import Path

from svc_core.api import Api
from svc_core.auth import signing_keys

api = Api()


@api.get("/api/v1/.well-known/jwks.json", public=True, raw=True, cache_seconds=300, tags=["Authentication"],
         summary="The public keys that verify the service's access tokens (RFC 7517)",
         description="A bare JWK Set, not wrapped in the envelope, so any JOSE library can read it.")
def jwks():
    return signing_keys.jwks(signing_keys.current())


@lru_cache(maxsize=1)
def _openapi_document() -> dict:
    return json.loads((Path(__file__).parent / "openapi.json").read_text())


@api.get("/api/v1/openapi.json", public=True, raw=True, cache_seconds=300, tags=["Meta"],
         summary="This API's OpenAPI 3.1 description",
         description="Generated from the code (python -m devstack.openapi --write); not wrapped in the envelope.")
def openapi_document():
    return _openapi_document()


lambda_handler = api.handler
