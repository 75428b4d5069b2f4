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

pydantic itself is loaded only when a request needs it (about 50 ms of a cold start: its import and
its first model's). A route whose parameters are all plain scalars (str, int, a Literal, Optional
of one, with the markers' constraints) first tries `_FastPath`: it takes a value only where pydantic
would certainly take it, and the same value (a canonical decimal within the bounds, an ASCII
printable string of the length that matches the pattern...). Anything it does not take, a bad value
or a missing required one, goes to the route's pydantic model, whose answer (a value or an error) is
the one given: the errors are always pydantic's. tests/unit/test_binding.py holds the two alike.
Route annotations may be forward references (a function module with `from __future__ import
annotations` whose body models load lazily): they are resolved when the route is first bound, by
typing.get_type_hints as Python resolves any annotation. A response_model named by a string is looked
up name by name (resolve_reference), only when the OpenAPI document is generated.
"""

from __future__ import annotations

import inspect
import re
import sys
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args, get_origin

from svc_core.http.params import Param

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


_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def resolve_reference(reference: Any, func: Callable, route: str) -> Any:
    """A route's declared type (its response_model) named by a string, "models.Project": the first
    name looked up in the namespace of the module that defines `func` (there, a lazy module of
    svc_core.platform.lazy, which imports the models now), each next one an attribute of the last.
    Names only, nothing evaluated. route: "GET /api/v1/...", to name in the error."""
    if not isinstance(reference, str):
        return reference
    where = f"{route} ({func.__module__}.{func.__qualname__}): response_model {reference!r}"
    if not _DOTTED_NAME.fullmatch(reference):
        raise LookupError(f"{where} is not a dotted name such as 'models.Project'")
    first, *attributes = reference.split(".")
    if first not in func.__globals__:
        raise LookupError(f"{where}: the module {func.__module__} has no name {first!r}")
    found, path = func.__globals__[first], first
    for attribute in attributes:
        try:
            found = getattr(found, attribute)
        except (AttributeError, ImportError) as exc:  # ImportError: a lazy module that does not import
            raise LookupError(f"{where}: {path}.{attribute} does not resolve ({exc})") from exc
        path = f"{path}.{attribute}"
    return found


def _is_model(annotation: Any) -> bool:
    pydantic = sys.modules.get("pydantic")
    if pydantic is None:  # nothing is a pydantic model before pydantic is loaded
        return False
    BaseModel = pydantic.BaseModel
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
        self._model: Any = None  # the route's pydantic model, once a request needed it
        self._parameters: list[Parameter] | None = None
        self._fast: _FastPath | None = None

    @property
    def parameters(self) -> list[Parameter]:
        if self._parameters is None:
            self._parameters = parameters_of(self.func, self.path)
            self._fast = _FastPath.of(self._parameters)
        return self._parameters

    @property
    def fast(self) -> _FastPath | None:
        """The route's pydantic-free path, where its parameters allow one."""
        self.parameters  # noqa: B018 - resolves them, and the fast path with them
        return self._fast

    @property
    def built(self) -> bool:
        return self._model is not None

    def prepare(self) -> None:
        """Before a SnapStart snapshot: what a route's first request would resolve, pydantic's model
        included (the restored function then has it, whichever path a request takes)."""
        self.build()

    def build(self) -> None:
        """The route's model: one field per parameter, named p0, p1... (a parameter's own name could
        be one of pydantic's), constrained as its marker says."""
        if self._model is not None:
            return
        from pydantic import ConfigDict, Field, create_model
        fields = {}
        for i, p in enumerate(self.parameters):
            constraints = p.marker.constraints if p.marker is not None else {}
            default = ... if p.default is inspect.Parameter.empty else p.default
            fields[f"p{i}"] = (p.annotation, Field(default, **constraints))
        self._model = create_model(f"{self.func.__name__}_request", __config__=ConfigDict(extra="ignore"), **fields)

    def bind(self, path_args: dict[str, str], event: dict[str, Any], body: Any) -> dict[str, Any]:
        """The function's keyword arguments; raises RequestInvalid."""
        parameters = self.parameters
        query = _values(event.get("queryStringParameters"), event.get("multiValueQueryStringParameters"))
        headers = _values(event.get("headers"), event.get("multiValueHeaders"), fold_case=True)
        data = {}
        for i, p in enumerate(parameters):
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
        if self._fast is not None:
            taken = self._fast.take(data)
            if taken is not None:
                return taken
        self.build()
        from pydantic import ValidationError
        try:
            validated = self._model.model_validate(data)
        except ValidationError as exc:
            raise RequestInvalid([self._located(e) for e in exc.errors(include_url=False)]) from None
        return {p.name: getattr(validated, f"p{i}") for i, p in enumerate(parameters)}

    def _located(self, error: dict[str, Any]) -> dict[str, Any]:
        field, *inner = error["loc"]
        p = self.parameters[int(str(field)[1:])]
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


# ---- the pydantic-free path ---------------------------------------------------------------

_CANONICAL_INT = re.compile(r"0|[1-9][0-9]{0,17}")
_STRING_CONSTRAINTS = {"min_length", "max_length", "pattern"}
_INT_CONSTRAINTS = {"ge", "gt", "le", "lt"}


def _take_str(constraints: dict[str, Any]) -> Callable[[Any], tuple[bool, Any]] | None:
    if not set(constraints) <= _STRING_CONSTRAINTS:
        return None
    low, high = constraints.get("min_length", 0), constraints.get("max_length")
    pattern = re.compile(constraints["pattern"]) if "pattern" in constraints else None

    def take(value: Any) -> tuple[bool, Any]:
        if type(value) is not str or len(value) < low or (high is not None and len(value) > high):
            return False, None
        # pydantic matches a pattern with Rust's regex; Python's agrees with it on ASCII printable
        # text (no newline before which $ could match, no Unicode class to differ on).
        if pattern is not None and not (value.isascii() and value.isprintable() and pattern.search(value)):
            return False, None
        return True, value
    return take


def _take_int(constraints: dict[str, Any]) -> Callable[[Any], tuple[bool, Any]] | None:
    if not set(constraints) <= _INT_CONSTRAINTS:
        return None
    ge, gt = constraints.get("ge"), constraints.get("gt")
    le, lt = constraints.get("le"), constraints.get("lt")

    def take(value: Any) -> tuple[bool, Any]:
        if type(value) is not str or not _CANONICAL_INT.fullmatch(value):
            return False, None
        number = int(value)
        if ((ge is not None and number < ge) or (gt is not None and number <= gt)
                or (le is not None and number > le) or (lt is not None and number >= lt)):
            return False, None
        return True, number
    return take


def _take_literal(choices: tuple[Any, ...]) -> Callable[[Any], tuple[bool, Any]] | None:
    if not all(type(c) is str for c in choices):
        return None
    allowed = frozenset(choices)
    return lambda value: (True, value) if type(value) is str and value in allowed else (False, None)


def _taker(p: Parameter) -> Callable[[Any], tuple[bool, Any]] | None:
    """What takes a present value of `p` the pydantic-free way, or None when its type is not one
    this path knows (a body, a model, an Annotated constraint of pydantic's own...)."""
    if p.kind == "body":
        return None
    annotation = p.annotation
    if get_origin(annotation) in (typing.Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        if len(members) != 1:
            return None
        annotation = members[0]
    constraints = p.marker.constraints if p.marker is not None else {}
    if annotation is str:
        return _take_str(constraints)
    if annotation is int:
        return _take_int(constraints)
    if get_origin(annotation) is Literal and not constraints:
        return _take_literal(get_args(annotation))
    return None


class _FastPath:
    """A route's parameters taken without pydantic, when each is one this path knows."""

    def __init__(self, steps: list[tuple[str, str, Callable[[Any], tuple[bool, Any]], Any]]) -> None:
        self.steps = steps  # (field, parameter name, taker, default or inspect.Parameter.empty)

    @classmethod
    def of(cls, parameters: list[Parameter]) -> _FastPath | None:
        steps = []
        for i, p in enumerate(parameters):
            taker = _taker(p)
            if taker is None:
                return None
            steps.append((f"p{i}", p.name, taker, p.default))
        return cls(steps)

    def take(self, data: dict[str, Any]) -> dict[str, Any] | None:
        """The arguments, or None when pydantic must decide (a value not taken, a required one missing)."""
        taken = {}
        for field, name, taker, default in self.steps:
            if field not in data:
                if default is inspect.Parameter.empty:
                    return None
                taken[name] = default  # pydantic gives a default as it is, unvalidated
                continue
            ok, value = taker(data[field])
            if not ok:
                return None
            taken[name] = value
        return taken
