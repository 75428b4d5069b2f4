"""The OpenAPI document's view of an Api: its routes declared on a Powertools resolver, whose
get_openapi_schema generates the document (devstack/openapi.py, `scripts/generate openapi`).

Only the generator imports this module: it loads Powertools' event handler and every route's
pydantic models, which no request needs (svc_core.http.api serves requests without them).
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, create_model

from svc_core.http.api import AUTHENTICATED
from svc_core.http.binding import parameters_of, resolve_reference
from svc_core.http.response import JSON

if TYPE_CHECKING:
    from svc_core.http.api import Api, Route, RouteSpec



def resolver(api: Api) -> Any:
    """A Powertools resolver with every route of `api` declared as it is there."""
    from aws_lambda_powertools.event_handler import APIGatewayRestResolver
    made = APIGatewayRestResolver(enable_validation=True)
    for route in api.routes:
        spec, doc = route.spec, route.doc
        made.route(rule=re.sub(r"\{([^/]+?)\}", r"<\1>", spec.path), method=spec.method,
                   summary=doc["summary"], description=doc["description"], responses=_responses(route),
                   security=_security(spec, doc), tags=doc["tags"],
                   operation_id=route.func.__name__)(_documented(route))
    return made


class ErrorBody(BaseModel):
    code: str
    message: str
    details: dict[str, Any]


class Meta(BaseModel):
    request_id: str
    timestamp: str


class ErrorEnvelope(BaseModel):
    error: ErrorBody
    meta: Meta


_envelopes: dict[type, type[BaseModel]] = {}


def envelope_of(model: type) -> type[BaseModel]:
    """The OpenAPI model of a success body: {data: model, meta}."""
    if model not in _envelopes:
        name = getattr(model, "__name__", "Data") + "Response"
        _envelopes[model] = create_model(name, data=(model, ...), meta=(Meta, ...))
    return _envelopes[model]


_ERROR_RESPONSES = {
    400: "VALIDATION_ERROR: the input is not valid (details.fields names each bad field)",
    401: "UNAUTHORIZED: credential missing, invalid, expired or revoked",
    402: "PAYMENT_REQUIRED: the tenant's credit balance is used up",
    403: "FORBIDDEN: the credential lacks the scope (details.requiredScope) or permission",
    404: "RESOURCE_NOT_FOUND: no such resource in the caller's tenant (details.id)",
    409: "CONFLICT (or LOGIN_SESSION_CONSUMED, LOGIN_SESSION_EXPIRED): the resource changed meanwhile, its "
         "state forbids this (details.status), a record the body names is not the tenant's (details.resource, "
         "details.fields), or the write collided with another and was not made (send it again)",
    413: "PAYLOAD_TOO_LARGE: the body is over the size limit",
    415: "UNSUPPORTED_MEDIA_TYPE: the body is not application/json, or names a charset other than UTF-8",
    421: "WRONG_REGION: the tenant (or the account) lives in another cell of a multi-cell deployment; send the "
         "request to details.baseUrl (nothing was read or written here)",
    422: "IDEMPOTENCY_KEY_REUSED: the Idempotency-Key was used with another body",
    429: "RATE_LIMIT_EXCEEDED: too many requests; see Retry-After",
    500: "INTERNAL_ERROR: the server failed; the body never says why",
    502: "PROVIDER_ERROR: a provider this call depends on refused or failed (details say which)",
}


_OPTIONAL_ERRORS = {402, 409, 422, 502}  # documented only on the routes that name them (errors=...)
_WRITES = {"POST", "PUT", "PATCH", "DELETE"}


def _responses(route: Route) -> dict[int, dict[str, Any]]:
    """A route's documented answers: its success (in the envelope unless raw), the errors it may give."""
    spec, doc = route.spec, route.doc
    model = resolve_reference(doc["response_model"], route.func, f"{spec.method} {spec.path}")
    media_type = doc["media_type"]
    success_model = (model or dict) if doc["raw"] else envelope_of(model or dict)
    # Another media type is text (a page), unless a model says what each item is (an event stream's
    # events: devstack/openapi.py documents the body as text and the model as its x-itemSchema).
    success_content = ({JSON: {"model": success_model}} if media_type == JSON
                       else {media_type: {"model": model} if model else {"schema": {"type": "string"}}})
    responses: dict[int, dict[str, Any]] = {doc["status"]: {"description": "Success", "content": success_content}}
    for other in doc["also"]:  # other success statuses, with the same body (the route returns a Response for them)
        responses[other] = ({"description": "No Content", "content": {}} if other == 204 else  # no body
                            {"description": "Accepted" if other == 202 else "Success", "content": success_content})
    for code, text in _ERROR_RESPONSES.items():
        if spec.public and code in (401, 403, 421, 429) and code not in doc["errors"]:
            continue
        if code == 415 and spec.method not in ("POST", "PUT", "PATCH"):
            continue
        # Any write may meet a collision it reports as 409 (see Api._dispatch).
        if code in _OPTIONAL_ERRORS and code not in doc["errors"] and not (code == 409 and spec.method in _WRITES):
            continue
        responses[code] = {"description": text, "content": {JSON: {"model": ErrorEnvelope}}}
    return responses


def _security(spec: RouteSpec, doc: dict[str, Any]) -> list[dict[str, list[str]]]:
    security = ([{doc["security_scheme"]: []}] if doc["security_scheme"] else [] if spec.public
                else [{"bearerAuth": [] if spec.scope == AUTHENTICATED else [spec.scope]}])
    if doc["or_scheme"] is not None:
        security.append({doc["or_scheme"]: []})
    return security


def _documented(route: Route) -> Callable:
    """The route function as Powertools' document generator reads it: each marker made Powertools'
    own, and no return type (the envelope is documented by _responses, not by the function)."""
    params = []
    signature = inspect.signature(route.func)
    for p in parameters_of(route.func, route.spec.path):
        annotation = p.annotation if p.marker is None else Annotated[p.annotation, p.marker.to_powertools()]
        params.append(signature.parameters[p.name].replace(annotation=annotation))
    params.sort(key=lambda p: list(signature.parameters).index(p.name))

    @functools.wraps(route.func)
    def documented(**kwargs: Any) -> Any:
        raise AssertionError("documentation only")

    documented.__signature__ = signature.replace(parameters=params, return_annotation=inspect.Signature.empty)
    return documented
