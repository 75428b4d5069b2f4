"""Projects' request and response models (svc_core/domain/models says why they live apart)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

from svc_core.domain.models.request_body import PatchBody, RequestBody, description_text, name_text

# at least one visible character, no control or bidirectional formatting character (the schema says so too)
Name = name_text(200)
Description = description_text(2000)
Language = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64,
                                            pattern=r"^[A-Za-z0-9 ._+#-]+$")]


class ProjectCreate(RequestBody):
    name: Name
    description: Description | None = None
    language: Language | None = None


class ProjectUpdate(PatchBody):
    """Only the fields sent change; description and language may be set to null."""
    name: Name = None  # may be left out, not set to null  # type: ignore[assignment]
    description: Description | None = Field(None, examples=["The service's documentation site"])
    language: Language | None = None



class Project(BaseModel):
    id: str = Field(examples=["proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
    name: str
    description: str | None
    language: str | None
    created_at: str = Field(description="ISO 8601 UTC")
    updated_at: str = Field(description="ISO 8601 UTC")


class ProjectDeleted(BaseModel):
    id: str
    deleted: bool


class ProjectPage(BaseModel):
    items: list[Project]
    nextCursor: str | None
