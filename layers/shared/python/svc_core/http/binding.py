"""From a request to a route function's arguments, validated: what Powertools' validation middleware
did, with the same rules and the same error locations, in one pydantic model per route.

- Path parameters come from the path's match, query parameters from the query string (a
  repeated parameter is a list, which a scalar parameter refuses), headers by name whatever their
  case, the body from the JSON value admission parsed (the route's one body parameter is the
  whole body).
- An absent value (or a JSON null body) takes the parameter's default, or is `missing` when it
  has none; a present one is validated, constraints included (ge, le, pattern, max_length...).
- Errors are pydantic's, located as Powertools located them: ("query", "limit"), ("header",
  "idempotency-key"), ("body", "name", ...), so svc_core.http.api reports them unchanged.

The model is built on a route's first request (or before a SnapStart snapshot), not at import.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Callable, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from svc_core.rules.params import Param

# The order in which Powertools checked a request's parts (its errors come in this order).
_KINDS = ("path", "query", "header", "body")


@dataclass(frozen=True)
class Parameter:
    name: str          # the function's parameter
    kind: str          # path, query, header or body
    key: str           # its name in the request (a header's in lower case: any case is the same)
    annotation: Any    # the type to validate, without the marker
    marker: Param | None
    default: Any       # inspect.Parameter.empty: required


def parameters_of(func: Callable, path: str) -> list[Parameter]:
    """The route function's parameters and where each comes from (Powertools' rules)."""
    in_path = set(re.findall(r"\{(\w+)\}", path))
    hints = typing.get_type_hints(func, include_extras=True)
    found = []
    for name, param in inspect.signature(func).parameters.items():
        annotation, marker = split_marker(hints.get(name, str))
        if marker is not None:
            kind = marker.kind
        elif name in in_path:
            kind = "path"
        elif _is_model(annotation):
            kind = "body"
        else:
            kind = "query"
        key = name
        if kind == "query" and marker is not None:
            key = marker.alias or name
        elif kind == "header":  # any case matches; Powertools named it in lower case
            key = (marker.alias or name.replace("_", "-")).lower()
        found.append(Parameter(name, kind, key, annotation, marker, param.default))
    if sum(p.kind == "body" for p in found) > 1:
        raise ValueError(f"{func.__name__}: a route takes one body parameter")
    return sorted(found, key=lambda p: _KINDS.index(p.kind))


def split_marker(annotation: Any) -> tuple[Any, Param | None]:
    """Annotated[T, Query(...)] -> (T, the Query); other metadata (a pydantic constraint) stays on T."""
    if get_origin(annotation) is not Annotated:
        return annotation, None
    base, *metadata = get_args(annotation)
    markers = [m for m in metadata if isinstance(m, Param)]
    rest = [m for m in metadata if not isinstance(m, Param)]
    return (Annotated[(base, *rest)] if rest else base), (markers[-1] if markers else None)


def _is_model(annotation: Any) -> bool:
    candidates = get_args(annotation) if get_origin(annotation) in (typing.Union, types.UnionType) else (annotation,)
    return any(inspect.isclass(c) and issubclass(c, BaseModel) for c in candidates)


class RequestInvalid(Exception):
    """The request's parameters or body are not valid: pydantic's errors, located as above."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__(f"{len(errors)} validation error(s)")
        self.errors = errors


class Binder:
    def __init__(self, func: Callable, path: str) -> None:
        self.func, self.path = func, path
        self._model: type[BaseModel] | None = None
        self._parameters: list[Parameter] = []

    @property
    def built(self) -> bool:
        return self._model is not None

    def build(self) -> None:
        """The route's model: one field per parameter, named p0, p1... (a parameter's own name could
        be one of pydantic's), constrained as its marker says."""
        if self._model is not None:
            return
        self._parameters = parameters_of(self.func, self.path)
        fields = {}
        for i, p in enumerate(self._parameters):
            constraints = p.marker.constraints if p.marker is not None else {}
            default = ... if p.default is inspect.Parameter.empty else p.default
            fields[f"p{i}"] = (p.annotation, Field(default, **constraints))
        self._model = create_model(f"{self.func.__name__}_request", __config__=ConfigDict(extra="ignore"), **fields)

    def bind(self, path_args: dict[str, str], event: dict[str, Any], body: Any) -> dict[str, Any]:
        """The function's keyword arguments; raises RequestInvalid."""
        self.build()
        query = _values(event.get("queryStringParameters"), event.get("multiValueQueryStringParameters"))
        headers = _values(event.get("headers"), event.get("multiValueHeaders"), fold_case=True)
        data = {}
        for i, p in enumerate(self._parameters):
            if p.kind == "path":
                value = path_args.get(p.key)
            elif p.kind == "query":
                value = query.get(p.key)
            elif p.kind == "header":
                value = headers.get(p.key)
            else:
                value = body
            if value is not None:
                data[f"p{i}"] = value
        try:
            validated = self._model.model_validate(data)  # type: ignore[union-attr]
        except ValidationError as exc:
            raise RequestInvalid([self._located(e) for e in exc.errors(include_url=False)]) from None
        return {p.name: getattr(validated, f"p{i}") for i, p in enumerate(self._parameters)}

    def _located(self, error: dict[str, Any]) -> dict[str, Any]:
        field, *inner = error["loc"]
        p = self._parameters[int(str(field)[1:])]
        where = ("body",) if p.kind == "body" else (p.kind, p.key)
        return {**error, "loc": (*where, *inner)}


def _values(single: dict[str, str] | None, multi: dict[str, list[str]] | None,
            fold_case: bool = False) -> dict[str, Any]:
    """A request part's values: a repeated one as its list (a scalar parameter refuses it), one
    value as itself. API Gateway sends both maps; the multi-value one is the whole truth."""
    merged: dict[str, Any] = {}
    for source in (single or {}, multi or {}):
        for name, value in source.items():
            if isinstance(value, list):
                value = value[0] if len(value) == 1 else (value or None)
            merged[name.lower() if fold_case else name] = value
    return merged
