"""Agents: list, create, read, change and delete an agent's configuration."""

from __future__ import annotations  # the models are named lazily (svc_core/domain/models)

from typing import Annotated, Any

from svc_core.domain import agents
from svc_core.domain.paging import DEFAULT_LIMIT, MAX_LIMIT
from svc_core.http import envelope, idempotency
from svc_core.http.api import JSON, Api
from svc_core.http.params import Body, IdCursor, Query
from svc_core.http.response import Response
from svc_core.platform.lazy import lazy_module

models = lazy_module("svc_core.domain.models.agents")
# The run machinery (model adapters, sealing, the tenants' storage backends) is loaded by the first
# request about runs, not by a read of an agent's configuration.
agent_runs = lazy_module("svc_core.domain.agent_runs")
api = Api()
TAGS = ["Agents"]


@api.get("/api/v1/agents", scope="agents:read", response_model="models.AgentPage", tags=TAGS,
         summary="List the tenant's agents, newest first")
def list_agents(limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
                cursor: IdCursor = None):
    return agents.list_agents(api.tenant_context(), limit, cursor)


@api.post("/api/v1/agents", scope="agents:write", status=201, response_model="models.Agent", tags=TAGS,
          errors=idempotency.ERRORS, summary="Create an agent (its config shown with the defaults filled in)",
          description=idempotency.DESCRIPTION.strip())
def create_agent(body: models.AgentCreate, idempotency_key: idempotency.IdempotencyKey = None):
    return idempotency.run(api, "agent.create", idempotency_key, body.model_dump(mode="json"),
                           lambda: agents.create_agent(api.tenant_context(), body))


@api.get("/api/v1/agents/{id}", scope="agents:read", response_model="models.Agent", tags=TAGS,
         summary="Read one agent")
def get_agent(id: str):
    return agents.get_agent(api.tenant_context(), id)


@api.patch("/api/v1/agents/{id}", scope="agents:write", response_model="models.Agent", tags=TAGS, errors=(409,),
           summary="Change the fields sent, and only those (config is merged)")
def update_agent(id: str, body: models.AgentUpdate):
    return agents.update_agent(api.tenant_context(), id, body)


@api.delete("/api/v1/agents/{id}", scope="agents:write", response_model="models.AgentDeleted", tags=TAGS, errors=(409,),
            summary="Delete an agent")
def delete_agent(id: str):
    return agents.delete_agent(api.tenant_context(), id)


def _run_answer(run: dict[str, Any], request_id: str) -> Any:
    """202 while the run goes on without the caller (queued, or running in the worker or with a
    cancel asked), else the route's own status."""
    if run["status"] in ("queued", "running"):
        return Response(status_code=202, content_type=JSON, body=envelope.success_body(run, request_id))
    return run


@api.post("/api/v1/agents/{id}/execute", scope="agents:write", status=201, also=(202,), response_model="models.Run",
          tags=TAGS, summary="Run the agent on a goal in one project: 201 with the ended or paused run, 202 when "
                             "it goes on in the background (async, or the time budget reached)")
def execute_agent(id: str, body: models.RunCreate):
    ctx = api.tenant_context()
    return _run_answer(agent_runs.execute(ctx, id, body), ctx.request_id)


@api.get("/api/v1/agents/{id}/runs", scope="agents:read", response_model="models.RunPage", tags=TAGS,
         summary="List the agent's runs, newest first")
def list_runs(id: str,
              limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
              cursor: IdCursor = None):
    return agent_runs.list_runs(api.tenant_context(), id, limit, cursor)


@api.get("/api/v1/agents/{id}/runs/{run_id}", scope="agents:read", response_model="models.Run", tags=TAGS,
         summary="Read one run of the agent")
def get_run(id: str, run_id: str):
    return agent_runs.get_run(api.tenant_context(), id, run_id)


@api.post("/api/v1/agents/{id}/runs/{run_id}/approve", scope="agents:write", also=(202,), response_model="models.Run",
          tags=TAGS, errors=(402, 409), summary="Approve the tool call the run waits on and go on (202: in the background)")
def approve_run(id: str, run_id: str,
                body: Annotated[models.RunDecision | None, Body()] = None):
    ctx = api.tenant_context()
    return _run_answer(agent_runs.decide(ctx, id, run_id, "approved", body), ctx.request_id)


@api.post("/api/v1/agents/{id}/runs/{run_id}/reject", scope="agents:write", also=(202,), response_model="models.Run",
          tags=TAGS, errors=(402, 409), summary="Reject the tool call the run waits on (the model is told) and go on")
def reject_run(id: str, run_id: str,
               body: Annotated[models.RunDecision | None, Body()] = None):
    ctx = api.tenant_context()
    return _run_answer(agent_runs.decide(ctx, id, run_id, "rejected", body), ctx.request_id)


@api.post("/api/v1/agents/{id}/runs/{run_id}/cancel", scope="agents:write", also=(202,), response_model="models.Run",
          tags=TAGS, errors=(409,), summary="Cancel the run: at once unless it is running (202: it stops before its "
                                           "next model call or tool)")
def cancel_run(id: str, run_id: str):
    ctx = api.tenant_context()
    return _run_answer(agent_runs.cancel(ctx, id, run_id), ctx.request_id)


api.snapstart()  # SnapStart's hooks (svc_core/platform/snapshot.py); a no-op outside Lambda
lambda_handler = api.handler
