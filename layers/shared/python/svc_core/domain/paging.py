"""A list endpoint's pages: its limits, and one page of a tenant's records with the cursor after it
(the cursors themselves: svc_core/contracts/cursors.py; HTML pages are svc_core/http/html_pages.py)."""

from __future__ import annotations

from svc_core.contracts import cursors

DEFAULT_LIMIT = 20
MAX_LIMIT = 100


def page(items: list, next_cursor: str | None) -> dict:
    return {"items": items, "nextCursor": next_cursor}


def id_page(items: list, last_id: str | None, view) -> dict:
    """A page of a list sorted by id: its items shown by view, and the cursor after the last one
    when more may follow."""
    return page([view(i) for i in items], cursors.id_cursor(last_id) if last_id else None)


def tenant_list_page(store, tenant_id: str, limit: int, cursor: str | None, *, id_prefix: str, view) -> dict:
    """One page of a tenant's records whose ids carry id_prefix, newest first, each shown by view:
    what every list endpoint over a tenant's table does. The cursor is a position in the tenant's
    own records, whichever id it was made from."""
    items, last_id = store.list_for_tenant(tenant_id, limit, cursors.id_after(cursor, id_prefix))
    return id_page(items, last_id, view)
