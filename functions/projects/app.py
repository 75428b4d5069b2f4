"""Projects: the five endpoints of the spec."""

from __future__ import annotations  # the models are named lazily (svc_core/domain/models)

from typing import Annotated

from svc_core.domain import projects
from svc_core.domain.paging import DEFAULT_LIMIT, MAX_LIMIT
from svc_core.http.api import Api
from svc_core.http.params import IdCursor, Query
from svc_core.platform.lazy import lazy_module

models = lazy_module("svc_core.domain.models.projects")
api = Api()
TAGS = ["Projects"]


@api.get("/api/v1/projects", scope="projects:read", response_model="models.ProjectPage", tags=TAGS,
         summary="List the tenant's projects, newest first")
def list_projects(limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
                  cursor: IdCursor = None):
    return projects.list_projects(api.tenant_context(), limit, cursor)


@api.post("/api/v1/projects", scope="projects:write", status=201, response_model="models.Project", tags=TAGS,
          idempotent="project.create", errors=(409,), summary="Create a project",
          description="Within the plan's project count (planDetails.limits.projects): the one past it is 403 "
                      "FORBIDDEN with details.feature \"projects\", limit, currentPlan and requiredPlan (the next "
                      "plan with more; null when none has), and nothing is stored. A create colliding with other "
                      "changes of the tenant's projects is 409: send it again.")
def create_project(body: models.ProjectCreate):
    return projects.create_project(api.tenant_context(), body)


@api.get("/api/v1/projects/{id}", scope="projects:read", response_model="models.Project", tags=TAGS,
         summary="Read one project")
def get_project(id: str):
    return projects.get_project(api.tenant_context(), id)


@api.patch("/api/v1/projects/{id}", scope="projects:write", response_model="models.Project", tags=TAGS, errors=(409,),
           summary="Change the fields sent, and only those")
def update_project(id: str, body: models.ProjectUpdate):
    return projects.update_project(api.tenant_context(), id, body)


@api.delete("/api/v1/projects/{id}", scope="projects:write", response_model="models.ProjectDeleted", tags=TAGS, errors=(409,),
            summary="Delete a project", description="Gives its place in the plan's project count back at once.")
def delete_project(id: str):
    return projects.delete_project(api.tenant_context(), id)


api.snapstart()  # SnapStart's hooks (svc_core/platform/snapshot.py); a no-op outside Lambda
lambda_handler = api.handler
