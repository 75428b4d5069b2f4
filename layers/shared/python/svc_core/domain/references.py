"""Records a request body names (a chat session's project or agent, a run's project).

The id's form is in the schema, so a malformed one is a 400; a well-formed id that names nothing in
the caller's tenant is 404 RESOURCE_NOT_FOUND with details.id and details.resource saying which
record is missing (not the one of the path) and details.fields naming the body field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from svc_core.auth.context import TenantContext
from svc_core.platform.errors import NotFound


def referenced(get: Callable[..., dict[str, Any]], ctx: TenantContext, value: str, field: str, resource: str,
               store: Any) -> dict[str, Any]:
    """The record `get(ctx, value, store)` reads, or a 404 that names the body's field."""
    try:
        return get(ctx, value, store)
    except NotFound:
        raise NotFound(f"No such {resource} in this tenant.", {
            "id": value, "resource": resource,
            "fields": [{"field": field, "in": "body", "reason": f"names no {resource} of this tenant"}]}) from None
