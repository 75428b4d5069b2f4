"""Reading the audit log (domain/audit.py writes it): a tenant's entries, newest first, filtered by
actor, action, target and time; and its export as JSON Lines behind a short-lived link.

Entries are aud_ ULIDs, so a time range (since, until, as the event log takes them) is a range of
ids (domain/events.id_range). Owners and admins read it (audit:read); exporting also needs a plan
with audit_log_export.
"""

from __future__ import annotations

import json
from typing import Any

from svc_core.adapters import audit_exports
from svc_core.auth.context import TenantContext
from svc_core.contracts import cursors
from svc_core.data import audit_log_table
from svc_core.domain import events
from svc_core.domain.audit import AUDIT_PREFIX
from svc_core.domain.paging import page
from svc_core.domain.tenant_access import own_tenant, require_feature
from svc_core.platform import ids, timeutil
from svc_core.platform.errors import ValidationFailed

SCOPE = "audit:read"
ACTOR_PATTERN = r"^(usr|key)_[0-7][0-9A-HJKMNP-TV-Z]{25}$|^service$"
EXPORT_LIMIT = 10_000         # entries in one export; more: narrow since and until
EXPORT_LINK_SECONDS = 15 * 60
_EXPORT_PAGE = 500            # entries read per Query while exporting


def _range(since: str | None, until: str | None) -> tuple[str, str]:
    return events.id_range(events.parse_time(since, "since"), events.parse_time(until, "until"), AUDIT_PREFIX)


def list_entries(ctx: TenantContext, limit: int, cursor: str | None, actor: str | None = None,
                 action: str | None = None, target: str | None = None, since: str | None = None,
                 until: str | None = None, store=audit_log_table) -> dict[str, Any]:
    """Newest first; since and until bound the entries' time (both included)."""
    low, high = _range(since, until)
    items, last = store.query(ctx.tenant_id, low=low, high=high, limit=limit, now=timeutil.now(),
                              after=cursors.id_after(cursor, AUDIT_PREFIX), actor=actor, action=action,
                              target=target)
    return page(items, cursors.id_cursor(last) if last else None)


def export_entries(ctx: TenantContext, actor: str | None = None, action: str | None = None,
                   target: str | None = None, since: str | None = None, until: str | None = None,
                   store=audit_log_table, files=audit_exports) -> dict[str, Any]:
    """Every entry the filters select (at most EXPORT_LIMIT), newest first, one JSON object a line,
    stored in the platform's storage; a link that downloads it for EXPORT_LINK_SECONDS."""
    require_feature(own_tenant(ctx), "audit_log_export", "Exporting the audit log")
    low, high = _range(since, until)
    now = timeutil.now()
    found: list[dict[str, Any]] = []
    after = None
    while True:
        items, after = store.query(ctx.tenant_id, low=low, high=high, limit=_EXPORT_PAGE, now=now, after=after,
                                   actor=actor, action=action, target=target)
        found += items
        if len(found) > EXPORT_LIMIT:
            raise ValidationFailed(f"More than {EXPORT_LIMIT:,} entries match: narrow since and until (an export "
                                   f"holds at most {EXPORT_LIMIT:,}).", {"limit": EXPORT_LIMIT, "fields": [
                                       {"field": "since", "in": "query",
                                        "reason": f"more than {EXPORT_LIMIT} entries match"}]})
        if after is None:
            break
    export_id = ids.new_id("aex")
    files.put(ctx.tenant_id, export_id, b"".join(json.dumps(e, separators=(",", ":")).encode() + b"\n"
                                                 for e in found))
    return {"id": export_id, "url": files.download_url(ctx.tenant_id, export_id, EXPORT_LINK_SECONDS),
            "expires_at": timeutil.iso(now + EXPORT_LINK_SECONDS), "entries": len(found)}
