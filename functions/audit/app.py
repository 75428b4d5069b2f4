"""The audit log: who did what in the tenant, for its owners and admins (audit:read); its export."""

from __future__ import annotations  # the models are named lazily (svc_core/domain/models)

from typing import Annotated, Literal

from svc_core.domain import audit_log
from svc_core.domain.audit import ACTIONS
from svc_core.domain.events import TIME_PATTERN
from svc_core.domain.paging import DEFAULT_LIMIT, MAX_LIMIT
from svc_core.http.api import Api
from svc_core.http.params import IdCursor, Query
from svc_core.platform.lazy import lazy_module

models = lazy_module("svc_core.domain.models.audit")
api = Api()
TAGS = ["Audit log"]
AuditAction = Literal[ACTIONS]  # type: ignore[valid-type]
TimeQuery = Annotated[str | None, Query(pattern=TIME_PATTERN, description=(
    "ISO 8601 date and time with its offset, e.g. 2026-11-25T10:00:00Z (the entry's time, included)"))]
ActorQuery = Annotated[str | None, Query(pattern=audit_log.ACTOR_PATTERN,
                                         description="only entries by this user (usr_...) or API key (key_...)")]
ActionQuery = Annotated[AuditAction | None, Query(description="only entries of this action")]
TargetQuery = Annotated[str | None, Query(min_length=1, max_length=64,
                                          description="only entries about this object (its id)")]
FILTERS = ("Filters: `actor` (a user's or an API key's id), `action`, `target` (the id of the object acted on), "
           "`since` and `until` (the entry's time, both included).")


@api.get("/api/v1/audit-log", scope=audit_log.SCOPE, response_model="models.AuditEntryPage", tags=TAGS,
         summary="List the tenant's audit log, newest first",
         description=f"{FILTERS} A filtered page may hold fewer than `limit` entries and still have a "
                     "`nextCursor`. Entries are kept 400 days; no route changes or deletes one.")
def list_audit_log(limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT, cursor: IdCursor = None,
                 actor: ActorQuery = None, action: ActionQuery = None, target: TargetQuery = None,
                 since: TimeQuery = None, until: TimeQuery = None):
    return audit_log.list_entries(api.tenant_context(), limit, cursor, actor, action, target, since, until)


@api.post("/api/v1/audit-log/export", scope=audit_log.SCOPE, response_model="models.AuditExport", tags=TAGS,
          summary="Export the audit log as JSON Lines behind a link that works 15 minutes",
          description=f"{FILTERS} At most {audit_log.EXPORT_LIMIT:,} entries (more: 400, narrow since and "
                      "until). 403 FORBIDDEN with details.feature audit_log_export when the tenant's plan does "
                      "not include it.")
def export_audit_log(actor: ActorQuery = None, action: ActionQuery = None, target: TargetQuery = None,
                   since: TimeQuery = None, until: TimeQuery = None):
    return audit_log.export_entries(api.tenant_context(), actor, action, target, since, until)


api.snapstart()  # SnapStart's hooks (svc_core/platform/snapshot.py); a no-op outside Lambda
lambda_handler = api.handler
