"""Invitations' request and response models (svc_core/domain/models says why they live apart)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from svc_core.domain.fields.invitations import NEW_PASSWORD_MIN, TOKEN_PATTERN
from svc_core.domain.models.accounts import Email
from svc_core.domain.models.common import Page, named
from svc_core.domain.models.request_body import RequestBody, name_text

Token = Annotated[str, StringConstraints(pattern=f"^{TOKEN_PATTERN}$")]
TOKEN_HELP = "The token of the e-mailed link (its #token= part): ivt_<id>.<secret>"


class InvitationCreate(RequestBody):
    email: Email = Field(description="The address to invite; the link works for this address only "
                                     "(compared normalised: NFKC, case-folded, trimmed)", examples=["grace@example.com"])
    role: Literal["owner", "admin", "member"] = Field(
        description="The role the invitee gets. An owner is invited by a signed-in owner only; any other role by "
                    "a caller who holds every permission of it", examples=["member"])


class Invitation(BaseModel):
    id: str = Field(examples=["ivt_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
    email: str
    role: str
    status: str = Field(description="pending, accepted, revoked or expired")
    invitedBy: str = Field(description="The user (usr_…) or API key (key_…) that invited")
    created_at: str = Field(description="ISO 8601 UTC")
    expires_at: str = Field(description="ISO 8601 UTC: 7 days after the link was sent (or resent)")


InvitationPage = named("InvitationPage", Page[Invitation])


class InvitationLookup(BaseModel):
    tenantName: str
    role: str
    email: str = Field(description="The invited address, masked (a***@example.com)")
    expires_at: str = Field(description="ISO 8601 UTC")
    accountExists: bool = Field(description="Whether the address has an account: sign in (password) or register (name "
                                            "and password)")


class AcceptBody(RequestBody):
    token: Token = Field(description=TOKEN_HELP,
                         examples=["ivt_01JD2Q7ZB6V8S3K4X9W2M5N7PA.0a8bM1cHrEexampleOnlyxXxXxXxXxXxXxXxXxXxXx1"])
    password: Annotated[str, StringConstraints(min_length=1, max_length=256)] | None = Field(
        default=None, description="The account's password; for a new account, the new password (at least "
                                  f"{NEW_PASSWORD_MIN} characters). Not needed with a signed-in user's Authorization header")
    name: name_text(200) | None = Field(default=None, description="A new account's name")  # type: ignore[valid-type]
