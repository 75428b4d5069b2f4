"""The cold-start baseline "what many teams would pick instead": FastAPI + Mangum serving
GET /api/v1/projects/{id} with the same data access as ProjectsFunction.

Same work per request as the service's route: the API key authenticated by svc_core (the
same cached lookup, JWT mint and verify), the request counted by svc_core's rate limiter,
the scope checked, the project read by svc_core.domain.projects, the answer in the same
{data, meta} envelope validated by a pydantic response model, errors in the error envelope.
Only the HTTP layer differs: FastAPI's routing, dependency injection and validation, run
on Lambda through Mangum, instead of svc_core.http.api over Powertools' resolver.

Used only by the benchmarks (bench/requirements.txt); nothing in the service imports it.
"""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import Depends, FastAPI, Header, Request, Response
from fastapi.responses import JSONResponse
from mangum import Mangum
from pydantic import BaseModel

from svc_core.auth import rate_limit
from svc_core.auth.authenticate import authenticate
from svc_core.auth.context import TenantContext
from svc_core.domain import projects
from svc_core.domain.models.projects import Project
from svc_core.http import envelope
from svc_core.platform.errors import Forbidden, RateLimited, ServiceError

app = FastAPI(title="projects (FastAPI baseline)", docs_url=None, redoc_url=None)


class Meta(BaseModel):
    request_id: str
    timestamp: str


class ProjectResponse(BaseModel):
    data: Project
    meta: Meta


def _request_id(request: Request) -> str:
    event = request.scope.get("aws.event") or {}
    return (event.get("requestContext") or {}).get("requestId") or "-"


@app.exception_handler(ServiceError)
def _service_error(request: Request, exc: ServiceError) -> JSONResponse:
    body = envelope.error_body(exc.code, exc.message, exc.details, _request_id(request))
    return JSONResponse(status_code=exc.status, content=json.loads(body), headers=exc.headers)


def caller(request: Request, response: Response,
           authorization: Annotated[str | None, Header()] = None) -> TenantContext:
    principal = authenticate(authorization)
    allowance = rate_limit.consume(principal.rate_limit_key)
    if allowance.exceeded:
        raise RateLimited(f"More than {allowance.limit} requests in this window.")
    response.headers.update(allowance.headers())
    if "projects:read" not in principal.scopes:
        raise Forbidden("This needs the projects:read scope.", {"requiredScope": "projects:read"})
    return TenantContext(tenant_id=principal.tenant_id, principal=principal, request_id=_request_id(request))


@app.get("/api/v1/projects/{id}", response_model=ProjectResponse)
def get_project(id: str, ctx: Annotated[TenantContext, Depends(caller)]):
    return {"data": projects.get_project(ctx, id), "meta": envelope.meta(ctx.request_id)}


lambda_handler = Mangum(app, lifespan="off")
