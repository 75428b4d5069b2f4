"""Projects: workspaces inside a tenant."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svc_core.auth.context import TenantContext
from svc_core.contracts import events
from svc_core.data import projects_table
from svc_core.data.common import ConditionFailed
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


def create_project(ctx: TenantContext, body: ProjectCreate, store=projects_table) -> dict[str, Any]:
    now = timeutil.now()
    stamp = timeutil.iso(now)
    project = {"id": ids.new_id(PREFIX), "name": body.name, "description": body.description,
               "language": body.language, "created_at": stamp, "updated_at": stamp}
    view = _view(project)
    store.create(ctx.tenant_id, project, events.new_event("project.created", ctx.tenant_id, view), now, answer=view)
    return view


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
    current = get_project(ctx, project_id, store)
    now = timeutil.now()
    event = events.new_event("project.deleted", ctx.tenant_id, current)
    try:
        store.delete(ctx.tenant_id, project_id, current["updated_at"], event, now)
    except ConditionFailed:
        raise Conflict("The project changed while it was being deleted; try again.", {"id": project_id}) from None
    return {"id": project_id, "deleted": True}



def forget_files(tenant_id: str, project_id: str, files_for=None) -> int:
    """After a project's deletion (its table's stream says so): delete its files where the tenant's
    storage keeps them (the platform bucket or its own); the number deleted. Idempotent."""
    if files_for is None:
        from svc_core.domain.storage import files_for
    return files_for(tenant_id).delete_all(tenant_id, project_id)
