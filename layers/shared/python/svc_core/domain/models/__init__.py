"""The API's request and response models (pydantic), one module per area, apart from the rules that
use them so that a request which validates no body never loads pydantic (about 50 ms of a cold
start: svc_core.http.binding). A function module names them lazily:

    models = lazy_module("svc_core.domain.models.projects")   # loaded by the first route that binds a body

    @api.post("/api/v1/projects", ..., response_model="models.Project")
    def create_project(body: models.ProjectCreate): ...        # with `from __future__ import annotations`

The domain module annotates with them under TYPE_CHECKING, and imports them inside a function that
builds one. A model takes its area's limits, patterns and help texts from svc_core.domain.fields,
which the domain module imports too, so that no domain module and its models import each other
(tests/unit/test_layer_imports.py finds any circle). The OpenAPI document is generated from them
(svc_core.http.openapi_doc).
"""
