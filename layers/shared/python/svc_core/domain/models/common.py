"""The shapes every area's answers share: a page of a list and the answer of a deletion.

Each area names its own (`class ProjectPage(Page[Project])`, `class ProjectDeleted(Deleted)`), so
the OpenAPI document keeps one schema per area under the name its clients know.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from pydantic import BaseModel

Item = TypeVar("Item")


class Page(BaseModel, Generic[Item]):
    items: list[Item]
    nextCursor: str | None


class Deleted(BaseModel):
    id: str
    deleted: bool
