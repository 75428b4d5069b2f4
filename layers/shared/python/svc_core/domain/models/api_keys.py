"""API keys' request and response models (svc_core/domain/models says why they live apart)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator

from svc_core.auth.scopes import SCOPES
from svc_core.domain.fields.api_keys import DEFAULT_OVERLAP_SECONDS, MAX_OVERLAP_SECONDS
from svc_core.domain.models.common import Page, named
from svc_core.domain.models.request_body import RequestBody, name_text, whole_number

ScopeName = Literal[tuple(SCOPES)]  # type: ignore[valid-type]

KeyType = Literal["sdk", "cli", "ci", "int", "mkt"]
Environment = Literal["Development", "Staging", "Production"]


class ApiKeyCreate(RequestBody):
    name: name_text(100)  # type: ignore[valid-type]
    type: KeyType
    environment: Environment
    scopes: list[ScopeName] | None = Field(
        default=None, max_length=len(SCOPES),
        description="Scopes the key holds; omitted means all the scopes of its creator.")
    expiresInDays: whole_number(1, 730) | None = Field(  # type: ignore[valid-type]
        default=None, description="Omitted means the key does not expire.")

    @field_validator("scopes")
    @classmethod
    def _sorted_unique(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else sorted(set(value))


class ApiKeyRotate(RequestBody):
    overlapSeconds: whole_number(0, MAX_OVERLAP_SECONDS) = Field(  # type: ignore[valid-type]
        default=DEFAULT_OVERLAP_SECONDS,
        description="How long the earlier values keep working at most (0 to 7 days; 0 ends them all now).")


class EarlierValue(BaseModel):
    hint: str | None = Field(description="The value's prefix and last four characters (None for a value rotated "
                                         "out before they were kept)")
    worksUntil: str = Field(description="When the value stops working")


class ApiKey(BaseModel):
    id: str
    name: str
    type: KeyType
    environment: Environment
    scopes: list[str]
    tenantId: str
    createdBy: str
    hint: str = Field(description="The key's prefix and last four characters")
    status: Literal["active", "expired", "revoked"]
    created_at: str
    last_used_at: str | None
    lastUsedIp: str | None = Field(description=(
        "The address of the key's last recorded use (API Gateway's sourceIp, never a client's X-Forwarded-For), "
        "written with last_used_at, at most every LAST_USED_STEP (300) seconds"))
    expires_at: str | None
    revoked_at: str | None
    rotated_at: str | None
    earlierValues: list[EarlierValue] = Field(default_factory=list, description=(
        "The values a rotation replaced that still work, in their overlap (newest first): each one's hint and "
        "when it stops; empty for a key not rotated, past its overlaps, revoked or expired"))


class ApiKeyWithSecret(ApiKey):
    key: str = Field(description="The full key value. Shown this once; store it now.")


ApiKeyPage = named("ApiKeyPage", Page[ApiKey])
