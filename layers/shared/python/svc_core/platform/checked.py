"""Frozen dataclasses read from JSON as a strict schema reads them, without pydantic (a message or
an envelope that every write's path builds, and whose module a read imports: svc_core.http.binding
says why a read loads no pydantic). A field nobody declared is refused rather than carried along
unseen, a required one missing too, and a string field must hold a string."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, fields
from typing import Any


def fields_of(cls: type, payload: Any, invalid: type[ValueError]) -> dict[str, Any]:
    """The payload's fields for cls(**...), or `invalid` when it has others or lacks a required one."""
    names = {f.name for f in fields(cls)}
    required = {f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING}
    if not isinstance(payload, Mapping) or not required <= set(payload) <= names:
        found = sorted(payload) if isinstance(payload, Mapping) else type(payload).__name__
        raise invalid(f"a {cls.__name__} has the fields {sorted(names)} ({sorted(required)} required), not {found}")
    return dict(payload)


def require_strings(instance: Any, names: tuple[str, ...], invalid: type[ValueError]) -> None:
    for name in names:
        if type(getattr(instance, name)) is not str:
            raise invalid(f"{name} must be a string")
