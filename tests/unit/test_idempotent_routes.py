"""A route declared idempotent= (svc_core/http/api.py) takes and documents the Idempotency-Key header
and runs its function through idempotency.run; the function itself names neither."""

from __future__ import annotations

import pytest

from svc_core.http import idempotency
from svc_core.http.api import Api
from svc_core.http.binding import resolve_reference
from svc_core.platform.lazy import lazy_module

models = lazy_module("svc_core.domain.models.projects")


def _create_thing(body: models.ProjectCreate):
    return {"name": body.name}


def _declared(**options):
    api = Api()
    api.post("/api/v1/things", scope="projects:write", response_model="models.Project", summary="Create a thing",
             **options)(_create_thing)
    return api.routes[0]


def test_an_idempotent_route_takes_the_header_and_documents_its_errors():
    route = _declared(idempotent="thing.create")
    assert [(p.kind, p.key) for p in route.binder.parameters] == [("header", "idempotency-key"), ("body", "body")]
    assert set(idempotency.ERRORS) <= set(route.doc["errors"])
    assert route.doc["description"] == idempotency.DESCRIPTION.strip()
    described = _declared(idempotent="thing.create", description="Makes a thing.")
    assert described.doc["description"] == "Makes a thing." + idempotency.DESCRIPTION


def test_a_route_that_is_not_idempotent_takes_no_header():
    route = _declared()
    assert [(p.kind, p.key) for p in route.binder.parameters] == [("body", "body")]
    assert route.doc["errors"] == ()


def test_the_response_model_is_still_named_in_the_route_module():
    from svc_core.domain.models.projects import Project
    route = _declared(idempotent="thing.create")
    assert resolve_reference(route.doc["response_model"], route.func, "POST /api/v1/things") is Project


def test_without_a_key_the_function_runs_as_it_is():
    from svc_core.domain.models.projects import ProjectCreate
    route = _declared(idempotent="thing.create")
    assert route.func(body=ProjectCreate(name="Apollo"), idempotency_key=None) == {"name": "Apollo"}


def test_a_function_that_declares_the_header_itself_is_refused():
    def create(body: models.ProjectCreate, idempotency_key: idempotency.IdempotencyKey = None):
        return {}
    with pytest.raises(ValueError, match="idempotency_key"):
        Api().post("/api/v1/things", scope="projects:write", summary="Create", idempotent="thing.create")(create)
