"""Members: list, change a role, remove, leave, transfer the ownership (docs/organizations.md)."""

from __future__ import annotations  # the models are named lazily (svc_core/domain/models)

from typing import Annotated

from svc_core.domain import members
from svc_core.domain.paging import DEFAULT_LIMIT, MAX_LIMIT
from svc_core.http.api import AUTHENTICATED, Api
from svc_core.http.params import IdCursor, Query
from svc_core.platform.lazy import lazy_module

models = lazy_module("svc_core.domain.models.members")
api = Api()
TAGS = ["Members"]

_RULES = ("The last owner cannot be removed or demoted (409, details.reason last_owner). Making, unmaking or "
          "removing an owner needs a signed-in owner (403, details.reason owner_required); otherwise the caller "
          "must hold every scope of the member's role and of the new one (403, details.reason role_exceeds_caller).")
_CREDENTIALS = ("The member's sign-ins holding tokens for this tenant end (their access tokens are refused from "
                "the next request) and every API key they hold in it (made by them, or by a key they held) is "
                "revoked: cliKeysRevoked and apiKeysRevoked count them.")


@api.get("/api/v1/members", scope="members:read", response_model="models.MemberPage", tags=TAGS,
         summary="List the tenant's members, in the order their accounts were made")
def list_members(limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
                 cursor: IdCursor = None):
    return members.list_members(api.tenant_context(), limit, cursor)


@api.patch("/api/v1/members/{userId}", scope="members:write", response_model="models.Member", tags=TAGS,
           errors=(409,), summary="Change a member's role",
           description=_RULES + " A role with fewer scopes ends the member's sign-ins holding tokens for this "
                                "tenant and revokes every API key they hold holding a scope the new role lacks. "
                                "Emits member.role_changed.")
def change_member_role(userId: str, body: models.MemberRoleChange):
    return members.change_role(api.tenant_context(), userId, body)


@api.delete("/api/v1/members/{userId}", scope="members:write", response_model="models.MemberRemoved", tags=TAGS,
            errors=(409,), summary="Remove a member from the tenant",
            description=_RULES + " " + _CREDENTIALS + " Frees a seat. Emits member.removed.")
def remove_member(userId: str):
    return members.remove_member(api.tenant_context(), userId)


@api.post("/api/v1/members/leave", scope=AUTHENTICATED, response_model="models.MemberRemoved", tags=TAGS,
          errors=(409,), summary="Leave the tenant (a signed-in user; an API key gets 403)",
          description="The last owner cannot leave (409, details.reason last_owner). " + _CREDENTIALS
                      + " The caller's own token is refused from the next request. Emits member.removed.")
def leave_tenant():
    return members.leave(api.tenant_context())


@api.post("/api/v1/members/transfer-ownership", scope="members:write", response_model="models.OwnershipTransferred",
          tags=TAGS, errors=(409,), summary="Make another member an owner and step down to admin (a signed-in owner)",
          description="Anyone but a signed-in owner gets 403 (details.reason owner_required). The caller's sign-ins "
                      "holding tokens for this tenant end (they carried an owner's scopes): sign in again. "
                      "Emits member.role_changed for each member whose role changed.")
def transfer_ownership(body: models.OwnershipTransfer):
    return members.transfer_ownership(api.tenant_context(), body)


api.snapstart()  # SnapStart's hooks (svc_core/platform/snapshot.py); a no-op outside Lambda
lambda_handler = api.handler
