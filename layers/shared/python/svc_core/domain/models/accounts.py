"""Accounts' request and response models (svc_core/domain/models says why they live apart)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

from svc_core.contracts import email_address
from svc_core.domain.fields import password_reset
from svc_core.domain.fields.regions import RegionId
from svc_core.domain.models.common import Deleted, Page, named
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


# ---- a forgotten password, a changed one, the sessions, the profile -------------------------------

ResetToken = Annotated[str, StringConstraints(pattern=f"^{password_reset.TOKEN_PATTERN}$")]


class ForgotPasswordBody(RequestBody):
    email: Annotated[str, StringConstraints(min_length=1, max_length=254)] = Field(
        description="The account's address, as at sign-in (compared normalised)", examples=["ada@example.com"])


class PasswordResetRequested(BaseModel):
    email: str = Field(description="The address as sent: the answer is the same whether or not it has an account")
    expiresIn: int = Field(description="Seconds a link e-mailed now works (once): "
                                       f"{password_reset.LINK_MINUTES * 60}")


class ResetPasswordBody(RequestBody):
    token: ResetToken = Field(description="The token of the e-mailed link (its token= part): prt_<id>.<secret>",
                              examples=["prt_01JD2Q7ZB6V8S3K4X9W2M5N7PA.0a8bM1cHrEexampleOnlyxXxXxXxXxXxXxXxXxXxXx1"])
    password: Password = Field(description="The new password (12 to 256 characters, as registration asks)",
                               examples=["correct horse battery staple"])


class PasswordReset(BaseModel):
    email: str = Field(description="The account's address: sign in with it and the new password")
    sessionsEnded: int = Field(description="How many of the account's sessions were open and are now ended")


class ChangePasswordBody(RequestBody):
    currentPassword: Annotated[str, StringConstraints(min_length=1, max_length=256)]
    newPassword: Password = Field(description="12 to 256 characters, as registration asks")


class PasswordChanged(BaseModel):
    sessionsEnded: int = Field(description="How many other sessions of the account were open and are now ended")
    currentSessionId: str | None = Field(description="The caller's session, which stays open (null: the token "
                                                     "names no session, as an identity provider's exchange's)")


class SignInSession(BaseModel):
    id: str = Field(examples=["ses_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
    current: bool = Field(description="Whether the caller's access token is of this session")
    tenantId: str = Field(description="The tenant it signed in to")
    currentTenantId: str = Field(description="The tenant of its latest access token (a refresh may switch)")
    created_at: str = Field(description="ISO 8601 UTC: when it began (the sign-in)")
    last_refreshed_at: str = Field(description="ISO 8601 UTC: its latest refresh, its start if none (an open client "
                                               "refreshes every 15 minutes)")
    expires_at: str = Field(description="ISO 8601 UTC: when its refresh token stops working (30 days after the "
                                        "sign-in); its last access token works 15 minutes more at most")


SignInSessionPage = named("SignInSessionPage", Page[SignInSession])
SignInSessionDeleted = named("SignInSessionDeleted", Deleted)


class OtherSessionsEnded(BaseModel):
    sessionsEnded: int
    currentSessionId: str | None = Field(description="The caller's session, which stays open (null: none)")


class ProfileUpdate(RequestBody):
    name: name_text(200) = Field(examples=["Ada King"])  # type: ignore[valid-type]
