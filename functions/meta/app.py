"""Public documents (not authenticated, not rate limited): the health answer, the JWKS that
verifies service tokens, the OpenAPI description, and the API reference page drawn from it (Redoc,
vendored in redoc/, see its README.md: nothing is fetched from another site). Every other path
under /api/v1 also lands here, and gets the envelope's 404 (or 401 without a credential)."""

from __future__ import annotations  # the models are named lazily (svc_core/domain/models)

import json
import os
from functools import lru_cache
from pathlib import Path

from svc_core.adapters.models.registry import allowed_models
from svc_core.auth import signing_keys
from svc_core.contracts import deployment_document
from svc_core.http.api import Api
from svc_core.http.html_pages import renderer_page
from svc_core.platform.config import settings
from svc_core.platform.lazy import lazy_module

models = lazy_module("svc_core.domain.models.meta")
api = Api()


@api.get("/api/v1/health", public=True, response_model="models.Health", tags=["Meta"],
         summary="Whether the API answers (no credential, not rate limited)",
         description="Answered by the function itself with no AWS call: an answer proves API Gateway, Lambda, "
                     "the shared layer and the settings work. The tables, queues and models are watched by the "
                     "stack's alarms, not here, so a load balancer or an uptime check may call it as often as "
                     "it likes at no cost.")
def health():
    # models.Health's fields, as its model_dump gave them: an uptime check's call loads no pydantic
    return {"status": "ok", "service": os.environ.get("POWERTOOLS_SERVICE_NAME", "svc-api"),
            "stage": settings().stage, "version": os.environ.get("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST"),
            "local": None}


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


REFERENCE_PAGE = renderer_page(Path(__file__).parent / "reference_page.html")


@api.get("/api/v1/docs", public=True, raw=True, media_type="text/html", tags=["Meta"],
         summary="The API reference: this document rendered as a page",
         description="Redoc, served by this API with the document (no other site is asked for anything).")
def reference_page():
    for name, value in REFERENCE_PAGE.headers.items():
        api.set_response_header(name, value)
    return REFERENCE_PAGE.html


# Redoc's menu shows Redocly's logo from their CDN, whatever the options: an empty address makes it
# fail at once without a request, and Redoc then leaves it out. The file itself stays as published.
REDOCLY_LOGO = '"https://cdn.redoc.ly/redoc/logo-mini.svg"'


@lru_cache(maxsize=1)
def _redoc() -> str:
    # Read on first use: 1 MB that the other routes' cold starts need not pay for.
    script = (Path(__file__).parent / "redoc" / "redoc.standalone.js").read_text()
    if REDOCLY_LOGO not in script:
        raise RuntimeError("redoc.standalone.js no longer holds Redocly's logo address: see redoc/README.md")
    return script.replace(REDOCLY_LOGO, '""')


@api.get("/api/v1/docs/redoc.standalone.js", public=True, raw=True, media_type="text/javascript",
         cache_seconds=86400, tags=["Meta"], summary="The script that renders the API reference page (Redoc)",
         description="Redoc 2.5.4, its standalone bundle (MIT) as published on npm; the page loads it from here.")
def reference_script():
    return _redoc()


api.snapstart()  # SnapStart's hooks (svc_core/platform/snapshot.py); a no-op outside Lambda
lambda_handler = api.handler
