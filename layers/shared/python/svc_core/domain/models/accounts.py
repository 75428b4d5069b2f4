"""Accounts' request and response models (svc_core/domain/models says why they live apart)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

from svc_core.contracts import email_address
from svc_core.domain.fields.regions import RegionId
from svc_core.domain.models.request_body import RequestBody, name_text

# A valid e-mail address by the HTML standard: the schema's pattern and maxLength are the check.
Email = Annotated[str, StringConstraints(max_length=email_address.MAX_LENGTH, pattern=email_address.VALID)]
# NIST SP 800-63B: a minimum length, no composition rules, a generous maximum.
Password = Annotated[str, StringConstraints(min_length=12, max_length=256)]


class RegisterBody(RequestBody):
    email: Email = Field(examples=["ada@example.com"])
    password: Password = Field(examples=["correct horse battery staple"])
    name: name_text(200) = Field(examples=["Ada Lovelace"])  # type: ignore[valid-type]
    region: RegionId | None = Field(  # type: ignore[valid-type]
        None, description="Where the account and its workspace live: a region with a cell (GET /regions: "
                          "available). Default: the cell that answers. Another cell's region is 421 WRONG_REGION "
                          "with that cell's baseUrl.")


class LoginBody(RequestBody):
    email: Annotated[str, StringConstraints(min_length=1, max_length=254)]
    password: Annotated[str, StringConstraints(min_length=1, max_length=256)]
    tenantId: str | None = Field(default=None, description="Sign in to this tenant (default: the first one)")


class RefreshBody(RequestBody):
    refreshToken: str | None = Field(default=None, max_length=200,
                                     description="Omitted: the refresh_token cookie is used")
    tenantId: str | None = Field(default=None, description="Switch the session to another tenant of the user")


class LogoutBody(RequestBody):
    refreshToken: str | None = Field(default=None, max_length=200,
                                     description="Omitted: the cookie, else the access token, names the session")


class LoggedOut(BaseModel):
    loggedOut: bool
    sessionId: str


class UserView(BaseModel):
    id: str
    email: str
    name: str
    status: str
    created_at: str


class TenantView(BaseModel):
    id: str
    name: str
    plan: str
    status: str
    role: str


class TokenPair(BaseModel):
    accessToken: str
    tokenType: str
    expiresIn: int = Field(description="seconds")
    refreshToken: str = Field(description="Also set as the HttpOnly refresh_token cookie")
    refreshExpiresIn: int = Field(description="seconds")
    user: UserView
    tenant: TenantView


class Registered(BaseModel):
    user: UserView
    tenant: TenantView


class Me(BaseModel):
    credential: str = Field(description="user or api_key")
    user: UserView | None
    tenant: TenantView
    tenants: list[TenantView] = Field(description="Every tenant the user belongs to")
    scopes: list[str]
