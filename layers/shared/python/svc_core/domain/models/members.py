"""Members' request and response models (svc_core/domain/models says why they live apart)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from svc_core.auth.roles import ROLES
from svc_core.domain.models.common import Page, named
from svc_core.domain.models.request_body import RequestBody, id_of

Role = Literal[ROLES]  # type: ignore[valid-type]
UserId = id_of("usr")


class MemberRoleChange(RequestBody):
    role: Role = Field(description="The member's new role. Making or unmaking an owner needs a signed-in "
                                   "owner; otherwise the caller must hold every scope of both roles.")


class OwnershipTransfer(RequestBody):
    userId: UserId = Field(description="The member who becomes an owner; the caller becomes an admin.")  # type: ignore[valid-type]


class Member(BaseModel):
    userId: str
    email: str | None
    name: str | None
    role: Role
    joined_at: str


MemberPage = named("MemberPage", Page[Member])


class MemberRemoved(BaseModel):
    userId: str
    removed: bool
    sessionsEnded: int = Field(description="The member's sign-ins that had tokens for this tenant, ended now: "
                                           "their access tokens are refused from their next request")
    cliKeysRevoked: int = Field(description="The member's command-line keys (svc_cli_) in this tenant, revoked")
    apiKeysRevoked: int = Field(description="The other API keys the member held in this tenant (made by them, or "
                                            "by a key they held), revoked: a key never outlives its holder's "
                                            "membership")


class OwnershipTransferred(BaseModel):
    previousOwner: Member = Field(description="The caller, now an admin")
    newOwner: Member
