"""The shapes every area's answers share: a page of a list and the answer of a deletion.

Each area names its own (`ProjectPage = named("ProjectPage", Page[Project])`, `ProjectDeleted =
named("ProjectDeleted", Deleted)`), so the OpenAPI document keeps one schema per area under the
name its clients know.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from pydantic import BaseModel, create_model

Item = TypeVar("Item")


class Page(BaseModel, Generic[Item]):
    items: list[Item]
    nextCursor: str | None


class Deleted(BaseModel):
    id: str
    deleted: bool


def named(name: str, model: type[BaseModel]) -> type[BaseModel]:
    """The model under its own name, which the OpenAPI document gives its schema: `Page[Project]`
    named ProjectPage, as clients generated from the document know it."""
    return create_model(name, __base__=model)
