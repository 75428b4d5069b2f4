"""OAuth connections' request and response models (svc_core/domain/models says why they live apart)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

from svc_core.domain.models.request_body import RequestBody

State = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{43}$")]


class OAuthStartBody(RequestBody):
    """POST start takes no fields (an empty object, or no body)."""


class AuthorizeBody(RequestBody):
    code: Annotated[str, StringConstraints(min_length=1, max_length=2048, pattern=r"^[\x21-\x7e]+$")] = Field(
        description="The authorization code the provider gave the redirect URI")
    state: State = Field(description="The state that start answered (and the provider sent back)")


class FlowStarted(BaseModel):
    authorizationUrl: str = Field(description="Send the user's browser here")
    state: str = Field(description="The provider sends it back to the redirect URI with the code")
    expiresIn: int = Field(description="seconds left to call authorize")


class Connection(BaseModel):
    id: str = Field(examples=["ocn_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
    provider: str
    userId: str = Field(description="the user who connected the account")
    scopes: list[str] = Field(description="the scopes the provider granted")
    tokenType: str
    hasRefreshToken: bool
    created_at: str = Field(description="ISO 8601 UTC")
    access_token_expires_at: str | None = Field(description="ISO 8601 UTC; null when the provider did not say")


class ConnectionPage(BaseModel):
    items: list[Connection]
    nextCursor: str | None


class ConnectionDeleted(BaseModel):
    id: str
    deleted: bool
