"""The parts of the OpenAPI document that a deployment decides, not the code.

A schema that carries `x-deployment-enum: <name>` gets `enum` set to that list of the deployment:
the committed document (functions/meta/openapi.json) holds the template's defaults, and the meta
function fills in the running deployment's own values when it serves the document, so a client or
fuzzer reading it is never offered a value this deployment refuses.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

MARK = "x-deployment-enum"
ALLOWED_MODELS = "allowedModels"


def mark(name: str) -> dict[str, str]:
    """The json_schema_extra of a field whose values the deployment lists."""
    return {MARK: name}


def marked(node: Any) -> Iterator[dict[str, Any]]:
    """Every schema in `node` (a document or part of one) whose values the deployment lists."""
    if isinstance(node, dict):
        if MARK in node:
            yield node
        for value in node.values():
            yield from marked(value)
    elif isinstance(node, list):
        for value in node:
            yield from marked(value)


def fill(document: Any, lists: dict[str, list[str]]) -> Any:
    """`document` with every marked schema's enum set from `lists`; in place."""
    for schema in marked(document):
        if schema[MARK] in lists:
            schema["enum"] = list(lists[schema[MARK]])
    return document
