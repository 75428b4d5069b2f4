"""The request binder: Powertools' rules for where a parameter comes from, and its error locations."""

import json
import re
import string
from pathlib import Path
from typing import Annotated, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from svc_core.http.binding import Binder, RequestInvalid, parameters_of, resolve_reference
from svc_core.http.params import Body, Header, Query
from svc_core.platform.lazy import lazy_module
from tests.support.functions import load_function


class Thing(BaseModel):
    name: str
    size: int = 1


def route(id: str,
          limit: Annotated[int, Query(ge=1, le=10)] = 5,
          cursor: Annotated[str | None, Query(pattern="^c[0-9]+$")] = None,
          key: Annotated[str | None, Header(alias="Idempotency-Key", max_length=4)] = None,
          trace_id: Annotated[str | None, Header()] = None,
          body: Thing = None):
    return locals()


def optional_body(body: Annotated[Thing | None, Body()] = None, plain: str = "x"):
    return locals()


def errors_of(binder, path_args, event, body=None):
    with pytest.raises(RequestInvalid) as caught:
        binder.bind(path_args, event, body)
    return [(e["loc"], e["type"]) for e in caught.value.errors]


def test_where_each_parameter_comes_from():
    found = {p.name: (p.kind, p.key) for p in parameters_of(route, "/things/{id}")}
    assert found == {"id": ("path", "id"), "limit": ("query", "limit"), "cursor": ("query", "cursor"),
                     "key": ("header", "idempotency-key"), "trace_id": ("header", "trace-id"),
                     "body": ("body", "body")}
    assert {p.name: p.kind for p in parameters_of(optional_body, "/x")} == {"body": "body", "plain": "query"}
    # The order Powertools checked them in, whatever the signature's: path, query, header, body.
    assert [p.kind for p in parameters_of(route, "/things/{id}")] == ["path", "query", "query", "header", "header", "body"]


def test_values_are_validated_converted_and_defaulted():
    binder = Binder(route, "/things/{id}")
    event = {"queryStringParameters": {"limit": "7"}, "headers": {"IDEMPOTENCY-KEY": "k1", "Trace-Id": "t"}}
    bound = binder.bind({"id": "a1"}, event, {"name": "n"})
    assert bound == {"id": "a1", "limit": 7, "cursor": None, "key": "k1", "trace_id": "t",
                     "body": Thing(name="n", size=1)}
    assert Binder(optional_body, "/x").bind({}, {}, None) == {"body": None, "plain": "x"}


def test_errors_are_located_as_powertools_located_them():
    binder = Binder(route, "/things/{id}")
    event = {"queryStringParameters": {"limit": "0", "cursor": "x"},
             "headers": {"idempotency-key": "toolong"}}
    assert errors_of(binder, {"id": "a"}, event, {"size": "big"}) == [
        (("query", "limit"), "greater_than_equal"),
        (("query", "cursor"), "string_pattern_mismatch"),
        (("header", "idempotency-key"), "string_too_long"),
        (("body", "name"), "missing"),
        (("body", "size"), "int_parsing"),
    ]
    # A required body that is not sent is missing as a whole.
    assert errors_of(Binder(_required_body, "/x"), {}, {}) == [(("body",), "missing")]


def _required_body(body: Thing):
    return body


def test_a_repeated_query_parameter_is_refused_by_a_scalar_one():
    binder = Binder(route, "/things/{id}")
    event = {"queryStringParameters": {"limit": "3"}, "multiValueQueryStringParameters": {"limit": ["3", "4"]}}
    assert errors_of(binder, {"id": "a"}, event) == [(("query", "limit"), "int_type")]
    one = {"queryStringParameters": {"limit": "3"}, "multiValueQueryStringParameters": {"limit": ["3"]}}
    assert binder.bind({"id": "a"}, one, {"name": "n"})["limit"] == 3


def test_one_body_parameter_at_most():
    def two(a: Thing, b: Thing):
        return a, b

    with pytest.raises(ValueError, match="one body parameter"):
        parameters_of(two, "/x")


models = lazy_module("svc_core.domain.models.projects")  # as a function names its models
missing_models = lazy_module("svc_core.domain.models.no_such_area")


def _read_thing(id: str):
    return id


@pytest.mark.parametrize("reference, problem", [
    ("models.NoSuchModel", "models.NoSuchModel does not resolve"),
    ("modles.Project", "has no name 'modles'"),
    ("missing_models.Thing", "missing_models.Thing does not resolve"),
    ("__import__('os').getcwd()", "is not a dotted name"),  # looked up, never run
])
def test_a_response_model_name_that_does_not_resolve_names_its_route(reference, problem):
    from svc_core.http import openapi_doc
    from svc_core.http.api import Api

    api = Api()
    api.get("/api/v1/things/{id}", scope="projects:read", response_model=reference, summary="A thing")(_read_thing)
    with pytest.raises(LookupError, match=re.escape(problem)) as caught:
        openapi_doc.resolver(api)
    assert "GET /api/v1/things/{id}" in str(caught.value)
    assert f"{__name__}._read_thing" in str(caught.value)


def test_a_response_model_name_is_looked_up_in_the_route_module():
    from svc_core.domain.models.projects import Project

    assert resolve_reference("models.Project", _read_thing, "GET /x") is Project
    assert resolve_reference(Project, _read_thing, "GET /x") is Project


@pytest.mark.parametrize("query, headers, body", [
    ({"limit": "0", "cursor": "x"}, {"idempotency-key": "toolong"}, {"size": "big"}),
    ({"limit": "abc"}, {}, None),
    ({}, {"Idempotency-Key": ""}, {"name": 5, "extra": 1}),
])
def test_the_same_errors_as_powertools_validation(query, headers, body):
    """Powertools' own validation (the document generator's resolver) refuses the same requests with
    the same locations and types."""
    import json

    from aws_lambda_powertools.event_handler import Response
    from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError

    from svc_core.http import openapi_doc
    from svc_core.http.api import Api

    api = Api()
    api.post("/api/v1/things/{id}", scope="projects:write", summary="A thing")(route)
    resolver = openapi_doc.resolver(api)
    seen = []
    resolver.exception_handler(RequestValidationError)(lambda exc: seen.extend(exc.errors()) or Response(400))
    event = {"httpMethod": "POST", "path": "/api/v1/things/a1", "resource": "/api/v1/things/{id}",
             "headers": {"content-type": "application/json", **headers}, "multiValueHeaders": {},
             "queryStringParameters": query, "body": None if body is None else json.dumps(body),
             "requestContext": {"requestId": "r", "stage": "v1"}, "isBase64Encoded": False}
    try:
        resolver.resolve(event, None)
    except AssertionError:
        pass
    ours = errors_of(Binder(route, "/api/v1/things/{id}"), {"id": "a1"}, event, body)
    assert [(tuple(e["loc"]), e["type"]) for e in seen] == ours


def test_the_router_matches_paths_as_powertools_matched_them():
    """A path parameter's characters and which route wins (every static path before any with a
    parameter) are Powertools' own: the same paths against both routers."""
    from aws_lambda_powertools.event_handler import APIGatewayRestResolver

    from svc_core.http.api import Api, _path_pattern

    theirs = APIGatewayRestResolver._compile_regex("/api/v1/things/<id>/parts/<part>")
    ours = _path_pattern("/api/v1/things/{id}/parts/{part}")
    for c in [chr(code) for code in range(32, 127)] + ["\u00e9", "\u00a0", "\u0661", "\n", "\t", "%2F"]:
        for path in (f"/api/v1/things/a{c}b/parts/x", f"/api/v1/things/a/parts/{c}", f"/api/v1/things/{c}/parts/x"):
            assert bool(ours.match(path)) == bool(theirs.match(path)), repr(path)

    resolver, api = APIGatewayRestResolver(), Api()
    for path in ("/api/v1/things/{id}", "/api/v1/things/special"):  # the dynamic one declared first
        def handler(path=path, **_path_args):
            return {"route": path}
        resolver.get(path.replace("{id}", "<id>"))(handler)
        api.get(path, scope="projects:read", summary="A thing")(handler)
    for path in ("/api/v1/things/special", "/api/v1/things/other"):
        event = {"httpMethod": "GET", "path": path, "headers": {}, "requestContext": {"requestId": "r"}}
        theirs_won = json.loads(resolver.resolve(event, None)["body"])["route"]
        ours_won = next(r.spec.path for r in api.routes if r.pattern.match(path))
        assert ours_won == theirs_won, path


# ---- the pydantic-free path: it takes a value only as pydantic would ------------------------------


FUNCTIONS = sorted(p.parent.name for p in (Path(__file__).resolve().parents[2] / "functions").glob("*/app.py"))


def _fast_routes() -> list[tuple[str, object]]:
    """(function/route, binder) of every route of every function that has the pydantic-free path."""
    found = []
    for directory in FUNCTIONS:
        api = getattr(load_function(directory), "api", None)
        for r in getattr(api, "routes", []):
            if r.binder.fast is not None:
                found.append((f"{directory}: {r.spec.method} {r.spec.path}", r.binder))
    return found


FAST_ROUTES = _fast_routes()

# Text near each rule's edges: digits with signs, spaces, underscores and leading zeros, numbers at the
# bounds, Unicode digits and spaces, newlines, ids and cursors, event names, and anything at all.
_near = st.sampled_from(["", " ", "0", "00", "1", "01", "+1", "-1", "1 ", " 1", "1_0", "1.0", "1e2", "100",
                         "101", "20", "9" * 19, "١", "\u00a0", "a\n", "\n", "project.created", "agent.started",
                         "proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA", "proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA\n", "x" * 65])
_values = st.one_of(_near, st.text(string.printable, max_size=70), st.text(max_size=70),
                    st.from_regex(r"[a-z]{2,5}_[0-9A-Z]{26}", fullmatch=True),
                    st.lists(st.sampled_from(["1", "2", "a"]), min_size=2, max_size=3))


def test_the_bench_and_everyday_reads_take_the_fast_path():
    """Every list and every function's everyday read (devstack/routes.py: the bench's cold starts) has it,
    else its first request would load pydantic; a delete by id too."""
    from devstack import routes
    names = {name for name, _ in FAST_ROUTES}
    reads = [*routes.everyday_reads().values(), *routes.list_routes()]
    assert len(reads) >= 20
    for route in reads:
        assert f"{route.directory}: {route.method} {route.path}" in names
    assert "projects: DELETE /api/v1/projects/{id}" in names


@pytest.mark.parametrize("name, binder", FAST_ROUTES, ids=[n for n, _ in FAST_ROUTES])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_fast_path_takes_only_what_pydantic_takes_and_the_same_value(name, binder, data):
    fields = {}
    for i, p in enumerate(binder.parameters):
        if p.kind == "path" or data.draw(st.booleans()):
            fields[f"p{i}"] = data.draw(_values, label=p.name)
    taken = binder.fast.take(fields)
    if taken is None:
        return  # pydantic decides: what the route gives is pydantic's answer by construction
    binder.build()
    validated = binder._model.model_validate(fields)
    expected = {p.name: getattr(validated, f"p{i}") for i, p in enumerate(binder.parameters)}
    assert taken == expected
    assert [type(v) for v in taken.values()] == [type(v) for v in expected.values()]


def test_the_fast_path_answers_without_building_the_model_and_refers_the_rest_to_it():
    binder = Binder(_listing, "/things")
    assert binder.bind({}, {"queryStringParameters": {"limit": "7", "kind": "b"}}, None) == \
        {"limit": 7, "cursor": None, "kind": "b"}
    assert not binder.built
    # A value it does not take (a non-canonical number) is pydantic's to take or refuse.
    assert binder.bind({}, {"queryStringParameters": {"limit": " 7"}}, None)["limit"] == 7
    assert binder.built
    assert errors_of(binder, {}, {"queryStringParameters": {"limit": "0", "kind": "z"}}) == [
        (("query", "limit"), "greater_than_equal"), (("query", "kind"), "literal_error")]


def _listing(limit: Annotated[int, Query(ge=1, le=10)] = 5,
             cursor: Annotated[str | None, Query(pattern="^c[0-9]+$")] = None,
             kind: Literal["a", "b"] = "a"):
    return locals()
