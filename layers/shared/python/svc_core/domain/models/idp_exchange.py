"""The identity-provider exchange's request and response models (svc_core/domain/models says why
they live apart)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints

from svc_core.domain.models.request_body import RequestBody


class ExchangeBody(RequestBody):
    token: Annotated[str, StringConstraints(min_length=10, max_length=8192)] = Field(
        description="The identity provider's OIDC ID or session token")


class Exchanged(BaseModel):
    accessToken: str
    tokenType: str
    expiresIn: int = Field(description="seconds")
    user: dict[str, Any]
    tenant: dict[str, Any]
