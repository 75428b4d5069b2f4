"""Public, unauthenticated and not rate limited: the JWKS that verifies service tokens."""

from svc_core.api import Api
from svc_core.auth import signing_keys

api = Api()


@api.get("/api/v1/.well-known/jwks.json", public=True, raw=True, cache_seconds=300, tags=["Authentication"],
         summary="The public keys that verify the service's access tokens (RFC 7517)",
         description="A bare JWK Set, not wrapped in the envelope, so any JOSE library can read it.")
def jwks():
    return signing_keys.jwks(signing_keys.current())


lambda_handler = api.handler
