"""The client library's response models are the OpenAPI document's response schemas, field by field.

Every method of every resource is called against a recorder (no network) to learn the operation
it calls and the model it reads the answer with; the model is then compared with the `data` schema
of that operation's success response: the same JSON field names, the same JSON types, a default
where the document does not require a field, None accepted where the document allows null, and
nested models compared the same way. A field renamed or added on one side only fails here.

A field the client deliberately keeps as a plain dict (dict[str, Any]: a run's steps, an invoice's
lines, ...) stands for any JSON object; the operations the client reads without a model are listed
in NO_MODEL.
"""

from __future__ import annotations

import inspect
import json
import re
import types
import typing
from typing import Any, Literal, Union

from pydantic import BaseModel

from devstack import openapi
from svc_client import resources
from svc_client.models import Page

DOCUMENT = json.loads(openapi.DOCUMENT.read_text())
SCHEMAS = DOCUMENT["components"]["schemas"]
PREFIX = "/api/v1"

# Fields the document leaves a free-form object (the client has models for them).
UNDESCRIBED_IN_DOCUMENT = {"POST /api/v1/auth/exchange.user", "POST /api/v1/auth/exchange.tenant",
                           "POST /api/v1/cli/auth/token.user", "POST /api/v1/cli/auth/token.tenant"}

# Operations whose answer the client hands back as a plain dict, with the reason.
NO_MODEL = {
    ("POST", "/api/v1/auth/register"): "answered as a dict",
    ("GET", "/api/v1/cli/auth/info"): "answered as a dict (shown by the approval page only)",
    ("POST", "/api/v1/oauth/{provider}/start"): "answered as a dict",
}


class _Recorder:
    """Stands in for the client: records the HTTP calls the resource methods make."""

    _refresh_token = "refresh"

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any]] = []

    def _call(self, method: str, path: str, *, model: Any = None, **_: Any) -> None:
        self.calls.append((method, path, model))

    def _paginate(self, path: str, model: Any, _params: Any = None) -> None:
        self.calls.append(("GET", path, Page[model]))

    def _stream(self, path: str, *_: Any) -> None:
        self.calls.append(("GET", path, "stream"))

    def _signed_in(self, *_: Any) -> None: ...

    def _signed_out(self, *_: Any) -> None: ...


def _client_calls() -> list[tuple[str, str, str, Any]]:
    """(where, method, path, model) for every public method of every resource."""
    found = []
    for name, cls in inspect.getmembers(resources, inspect.isclass):
        if not issubclass(cls, resources.Resource) or cls.__module__ != resources.__name__ or name.startswith("_"):
            continue
        for method_name, function in inspect.getmembers(cls, inspect.isfunction):
            if method_name.startswith("_"):
                continue
            recorder = _Recorder()
            required = [p for p in inspect.signature(function).parameters.values()
                        if p.name != "self" and p.default is p.empty and p.kind is not p.VAR_KEYWORD]
            function(cls(recorder), *[f"{p.name}-1" for p in required
                                      if p.kind is not p.KEYWORD_ONLY],
                     **{p.name: f"{p.name}-1" for p in required if p.kind is p.KEYWORD_ONLY})
            found += [(f"{name}.{method_name}", *call) for call in recorder.calls]
    return found


def _operation(method: str, path: str) -> str:
    """The document's path template that a concrete client path matches (literal segments win)."""
    matches = [template for template, operations in DOCUMENT["paths"].items() if method.lower() in operations
               and re.fullmatch(re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template)), PREFIX + path)]
    assert matches, f"{method} {path}: no such operation in the document"
    return max(matches, key=lambda t: sum(not s.startswith("{") for s in t.split("/")))


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = SCHEMAS[schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _data_schema(method: str, template: str) -> dict[str, Any]:
    responses = DOCUMENT["paths"][template][method.lower()]["responses"]
    success = next(code for code in sorted(responses) if code.startswith("2"))
    envelope = _resolve(responses[success]["content"]["application/json"]["schema"])
    return envelope["properties"]["data"]


def _variants(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """A schema's alternatives (anyOf/oneOf), each resolved."""
    schema = _resolve(schema)
    alternatives = schema.get("anyOf") or schema.get("oneOf")
    return [v for a in alternatives for v in _variants(a)] if alternatives else [schema]


def _schema_types(schema: dict[str, Any]) -> set[str]:
    types_: set[str] = set()
    for variant in _variants(schema):
        kind = variant.get("type")
        if kind is None and "const" in variant:
            kind = {str: "string", bool: "boolean", int: "integer", type(None): "null"}[type(variant["const"])]
        if kind is None and "properties" in variant:
            kind = "object"
        if kind is None:
            return {"any"}
        types_ |= set(kind) if isinstance(kind, list) else {kind}
    return types_


def _annotation_types(annotation: Any) -> set[str]:
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        return set().union(*(_annotation_types(a) for a in typing.get_args(annotation)))
    if origin is Literal:
        return set().union(*(_annotation_types(type(a)) for a in typing.get_args(annotation)))
    if annotation is Any:
        return {"any"}
    simple = {str: "string", bool: "boolean", int: "integer", float: "number", type(None): "null",
              list: "array", dict: "object"}
    if (origin or annotation) in simple:
        return {simple[origin or annotation]}
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {"object"}
    raise AssertionError(f"no JSON type known for {annotation!r}")


def _nested(annotation: Any) -> list[Any]:
    """The models and list item types inside an annotation (through unions)."""
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        return [n for a in typing.get_args(annotation) for n in _nested(a)]
    return [annotation]


def _pairs(model: type[BaseModel], schema: dict[str, Any], where: str, out: list, free_form: set[str]) -> None:
    """(model, object schema, where) for the model and every model nested in it."""
    objects = [v for v in _variants(schema) if v.get("type") == "object" or "properties" in v]
    if len(objects) == 1 and "properties" not in objects[0]:
        free_form.add(where)  # the document says only "an object": nothing to compare with
        return
    out.append((model, objects[0] if len(objects) == 1 else schema, where))
    properties = objects[0].get("properties", {}) if len(objects) == 1 else {}
    for name, info in model.model_fields.items():
        name = info.alias or name
        if name in properties:
            for inner in _nested(info.annotation):
                _nested_pairs(inner, properties[name], f"{where}.{name}", out, free_form)


def _nested_pairs(annotation: Any, schema: dict[str, Any], where: str, out: list, free_form: set[str]) -> None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        _pairs(annotation, schema, where, out, free_form)
    elif typing.get_origin(annotation) is list and typing.get_args(annotation):
        arrays = [v for v in _variants(schema) if v.get("type") == "array"]
        if arrays and "items" in arrays[0]:
            for inner in _nested(typing.get_args(annotation)[0]):
                _nested_pairs(inner, arrays[0]["items"], f"{where}[]", out, free_form)
    # else a plain value, or dict[str, Any]: the client keeps any object


def differences(model: type[BaseModel], read_from: list[tuple[dict[str, Any], str]]) -> list[str]:
    """Where a model and the schemas it reads disagree. A model read from several operations holds
    the union of their fields: each field in some schema, each schema's field in the model with its
    JSON type, a default unless every schema requires it, None accepted where null is allowed."""
    fields = {info.alias or name: info for name, info in model.model_fields.items()}
    found = []
    for schema, where in read_from:
        if "properties" not in schema:
            found.append(f"{where}: the document has no one object schema here ({_schema_types(schema)})")
            continue
        properties, required = schema["properties"], set(schema.get("required", ()))
        found += [f"{where}.{name}: in the document, not in the client's {model.__name__}"
                  for name in sorted(set(properties) - set(fields))]
        for name in sorted(set(fields) & set(properties)):
            info, at = fields[name], f"{where}.{name}"
            theirs, ours = _schema_types(properties[name]), _annotation_types(info.annotation)
            widened = {"integer"} if "number" in ours else set()
            if "any" not in theirs | ours and (theirs - {"null"}) - (ours - {"null"}) - widened:
                found.append(f"{at}: the document says {sorted(theirs)}, the client {sorted(ours)}")
            if "null" in theirs and "null" not in ours and "any" not in ours:
                found.append(f"{at}: the document allows null, the client does not")
        found += [f"{where}.{name}: the document does not require it, the client does"
                  for name in sorted(set(fields) - required) if name in properties and fields[name].is_required()]
        found += [f"{where}.{name}: missing from this answer, required by the client"
                  for name in sorted(set(fields) - set(properties)) if fields[name].is_required()]
    described = {name for schema, _ in read_from for name in schema.get("properties", {})}
    found += [f"{read_from[0][1]}.{name}: in the client's {model.__name__}, not in the document"
              for name in sorted(set(fields) - described)]
    return found


def model_differences(calls: list[tuple[type[BaseModel], dict[str, Any], str]]) -> tuple[list[str], set[str]]:
    """Every disagreement over these (model, data schema, where) reads, and the places the document
    leaves free-form."""
    pairs: list = []
    free_form: set[str] = set()
    for model, schema, where in calls:
        _pairs(model, schema, where, pairs, free_form)
    by_model: dict[type, list] = {}
    for model, schema, where in pairs:
        by_model.setdefault(model, []).append((schema, where))
    return [d for model, read_from in by_model.items() for d in differences(model, read_from)], free_form


CALLS = _client_calls()


def _reads() -> list[tuple[type[BaseModel], dict[str, Any], str]]:
    reads = []
    for where, method, path, model in CALLS:
        if model not in (None, "stream"):
            template = _operation(method, path)
            reads.append((model, _data_schema(method, template), f"{where} -> {method} {template}"))
    return reads


def test_the_recorder_sees_every_resource_method():
    wheres = {where for where, *_ in CALLS}
    assert {"Projects.get", "Agents.execute", "Webhooks.rotate_secret", "Billing.summary", "Chat.stream"} <= wheres
    assert len(CALLS) > 60


def test_every_method_calls_an_operation_of_the_document_and_reads_it_with_a_model():
    without = {(method, _operation(method, path)) for _, method, path, model in CALLS if model is None}
    assert without == set(NO_MODEL)


def test_the_client_models_are_the_response_schemas_field_by_field():
    found, free_form = model_differences(_reads())
    assert found == []
    # Where the document says only "an object", the client's model cannot be compared.
    assert {where.split(" -> ")[1] for where in free_form} == UNDESCRIBED_IN_DOCUMENT


def test_a_field_renamed_or_added_on_one_side_is_caught():
    from svc_client.models import Project
    assert model_differences([(Project, copy_schema("Project"), "Project")]) == ([], set())
    schema = copy_schema("Project")
    schema["properties"]["title"] = schema["properties"].pop("name")
    assert model_differences([(Project, schema, "Project")])[0] == [
        "Project.title: in the document, not in the client's Project",
        "Project.name: missing from this answer, required by the client",
        "Project.name: in the client's Project, not in the document"]
    schema = copy_schema("Project")
    schema["properties"]["language"] = {"type": "integer"}
    assert model_differences([(Project, schema, "Project")])[0] == [
        "Project.language: the document says ['integer'], the client ['null', 'string']"]

    class Archived(Project):
        archived: bool = False
    assert model_differences([(Archived, copy_schema("Project"), "Project")])[0] == [
        "Project.archived: in the client's Archived, not in the document"]


def test_a_field_of_a_nested_model_is_compared_too():
    from svc_client.models import Run
    schema = copy_schema("Run")
    usage = _resolve(schema["properties"]["usage"])
    usage = {**usage, "properties": {**usage["properties"], "cacheTokens": {"type": "integer"}}}
    schema["properties"]["usage"] = usage
    assert model_differences([(Run, schema, "Run")])[0] == [
        "Run.usage.cacheTokens: in the document, not in the client's RunUsage"]


def copy_schema(name: str) -> dict[str, Any]:
    return json.loads(json.dumps(SCHEMAS[name]))
