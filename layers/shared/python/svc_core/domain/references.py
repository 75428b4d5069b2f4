"""Records a request body names (a chat session's project or agent, a run's project).

The id's form is in the schema, so a malformed one is a 400. A well-formed id that names nothing in
the caller's tenant is 409 CONFLICT: the request does not fit what the tenant holds now (the record
was deleted, or was never the tenant's). 404 stays the answer about the path's own resource, so a
client (or a tool following the links of a created resource) can tell "the session you addressed is
gone" from "the project you named is gone". details.id and details.resource say which record is
missing and details.fields names the body field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from svc_core.auth.context import TenantContext
from svc_core.platform.errors import Conflict, NotFound


def referenced(get: Callable[..., dict[str, Any]], ctx: TenantContext, value: str, field: str, resource: str,
               store: Any) -> dict[str, Any]:
    """The record `get(ctx, value, store)` reads, or a 409 that names the body's field."""
    try:
        return get(ctx, value, store)
    except NotFound:
        raise Conflict(f"The {field} names no {resource} of this tenant.", {
            "id": value, "resource": resource,
            "fields": [{"field": field, "in": "body", "reason": f"names no {resource} of this tenant"}]}) from None
