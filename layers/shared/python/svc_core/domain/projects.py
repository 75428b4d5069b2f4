"""Projects: workspaces inside a tenant."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svc_core.auth.context import TenantContext
from svc_core.contracts import events
from svc_core.data import projects_table
from svc_core.data.common import ConditionFailed
from svc_core.domain import tenant_access
from svc_core.domain.paging import tenant_list_page
from svc_core.platform import ids, timeutil
from svc_core.platform.errors import Conflict, NotFound

if TYPE_CHECKING:
    from svc_core.domain.models.projects import ProjectCreate, ProjectUpdate

PREFIX = "proj"


def _view(record: dict[str, Any]) -> dict[str, Any]:
    return {"id": record["id"], "name": record["name"], "description": record.get("description"),
            "language": record.get("language"), "created_at": record["created_at"],
            "updated_at": record["updated_at"]}


def _not_found(project_id: str) -> NotFound:
    return NotFound("The project does not exist.", {"id": project_id, "resource": "project"})


# A create or delete also changes the tenant's projectCount, so two of them in one tenant at once
# can collide on the tenant's item; one refused only for that (or for a plan changed since this
# container read it) is sent again, up to this many times in all.
QUOTA_ATTEMPTS = 4


def _busy(project_id: str | None = None) -> Conflict:
    return Conflict("Other changes to the tenant's projects were being made at the same time; try again.",
                    {"id": project_id} if project_id else {})


def create_project(ctx: TenantContext, body: ProjectCreate, store=projects_table) -> dict[str, Any]:
    """Within the plan's project count (plans.LIMITS[plan].projects), which the create's own
    transaction checks and counts: past it 403 and nothing stored."""
    now = timeutil.now()
    stamp = timeutil.iso(now)
    project = {"id": ids.new_id(PREFIX), "name": body.name, "description": body.description,
               "language": body.language, "created_at": stamp, "updated_at": stamp}
    view = _view(project)
    event = events.new_event("project.created", ctx.tenant_id, view)
    plan = tenant_access.cached_plan(ctx.tenant_id)
    for _ in range(QUOTA_ATTEMPTS):
        limit = tenant_access.limit_of(plan, "projects")
        try:
            store.create(ctx.tenant_id, project, event, now, answer=view, plan=plan, limit=limit)
            return view
        except ConditionFailed:
            # The limit reached, the plan changed, or another write to the tenant came first: the stored tenant tells.
            stored_plan, count = tenant_access.stored_counter(ctx.tenant_id, "projectCount")
            if stored_plan == plan and limit is not None and count >= limit:
                raise tenant_access.limit_reached("projects", plan, "projects") from None
            plan = stored_plan
    raise _busy()


def get_project(ctx: TenantContext, project_id: str, store=projects_table) -> dict[str, Any]:
    record = store.get(ctx.tenant_id, project_id) if ids.is_id(project_id, PREFIX) else None
    if record is None:
        raise _not_found(project_id)
    return _view(record)


def list_projects(ctx: TenantContext, limit: int, cursor: str | None, store=projects_table) -> dict[str, Any]:
    return tenant_list_page(store, ctx.tenant_id, limit, cursor, id_prefix=PREFIX, view=_view)


def update_project(ctx: TenantContext, project_id: str, body: ProjectUpdate, store=projects_table) -> dict[str, Any]:
    current = get_project(ctx, project_id, store)
    now = timeutil.now()
    changes = body.model_dump(include=body.model_fields_set)
    updated = {**current, **changes, "updated_at": timeutil.iso_after(now, current["updated_at"])}
    event = events.new_event("project.updated", ctx.tenant_id,
                             {**updated, "changes": sorted(changes)})
    try:
        store.replace(ctx.tenant_id, updated, current["updated_at"], event, now)
    except ConditionFailed:
        raise Conflict("The project changed or was deleted while it was being updated; read it again.",
                       {"id": project_id}) from None
    return updated


def delete_project(ctx: TenantContext, project_id: str, store=projects_table) -> dict[str, Any]:
    """Deletes the project and gives its place in the plan's project count back."""
    current = get_project(ctx, project_id, store)
    now = timeutil.now()
    event = events.new_event("project.deleted", ctx.tenant_id, current)
    counted = True
    for _ in range(QUOTA_ATTEMPTS):
        try:
            store.delete(ctx.tenant_id, project_id, current["updated_at"], event, now, counted=counted)
            return {"id": project_id, "deleted": True}
        except ConditionFailed:
            stored = store.get(ctx.tenant_id, project_id)
            if stored is None or stored["updated_at"] != current["updated_at"]:
                raise Conflict("The project changed while it was being deleted; try again.",
                               {"id": project_id}) from None
            # The project is as read: another write to the tenant came first, or the count is at 0 already
            # (a project made before projects were counted), which the delete then leaves as it is.
            counted = tenant_access.stored_counter(ctx.tenant_id, "projectCount")[1] > 0
    raise _busy(project_id)


def forget_files(tenant_id: str, project_id: str, files_for=None) -> int:
    """After a project's deletion (its table's stream says so): delete its files where the tenant's
    storage keeps them (the platform bucket or its own); the number deleted. Idempotent."""
    if files_for is None:
        from svc_core.domain.storage import files_for
    return files_for(tenant_id).delete_all(tenant_id, project_id)
