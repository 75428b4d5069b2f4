"""List parameters shared by every list endpoint."""

from __future__ import annotations

from svc_core import ids
from svc_core.data.common import decode_cursor
from svc_core.errors import ValidationFailed

DEFAULT_LIMIT = 20
MAX_LIMIT = 100


def check_cursor(cursor: str | None, id_check) -> str | None:
    """The cursor when it is one we issued for this list, else VALIDATION_ERROR."""
    if cursor is None:
        return None
    position = decode_cursor(cursor)
    if not position or not id_check(position.get("after", "")):
        raise ValidationFailed("The cursor is not valid.",
                               {"fields": [{"field": "cursor", "in": "query", "reason": "not a cursor of this list"}]})
    return cursor


def page(items: list, next_cursor: str | None) -> dict:
    return {"items": items, "nextCursor": next_cursor}


def tenant_page(store, tenant_id: str, limit: int, cursor: str | None, *, id_prefix: str, view) -> dict:
    """One page of a tenant's records whose ids carry id_prefix, newest first, each shown by view:
    what every list endpoint over a tenant's table does."""
    check_cursor(cursor, lambda after: ids.is_id(after, id_prefix))
    items, next_cursor = store.list_for_tenant(tenant_id, limit, cursor)
    return page([view(i) for i in items], next_cursor)
