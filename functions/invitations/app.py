"""Invitations: members:write invites, resends and revokes, members:read lists; the invitee's
look-up and acceptance are public (the link's token is the credential), counted per source address."""

from __future__ import annotations  # the models are named lazily (svc_core/domain/models)

from pathlib import Path
from typing import Annotated

from svc_core.domain import invitations
from svc_core.domain.paging import DEFAULT_LIMIT, MAX_LIMIT
from svc_core.http import refresh_cookie
from svc_core.http.api import Api
from svc_core.http.html_pages import load_page
from svc_core.http.params import IdCursor, Query
from svc_core.platform.lazy import lazy_module

models = lazy_module("svc_core.domain.models.invitations")
account_models = lazy_module("svc_core.domain.models.accounts")
api = Api()
TAGS = ["Invitations"]


@api.post("/api/v1/invitations", scope="members:write", status=201, response_model="models.Invitation", tags=TAGS,
          errors=(403, 409, 503),
          summary="Invite an e-mail address into the tenant with a role (the link is e-mailed, never answered)",
          description="403: the role needs more than the caller has (details.reason role_exceeds_caller; an owner is "
                      "invited by a signed-in owner only: owner_required), or every seat of the plan is taken "
                      "(members and pending invitations; details.feature seats, limit, currentPlan, requiredPlan). "
                      "409: the address is a member (already_member) or has a pending invitation (already_invited). "
                      "503 email_not_sent: the invitation is saved but its e-mail failed; resend it.")
def create_invitation(body: models.InvitationCreate):
    return invitations.create_invitation(api.tenant_context(), body, api.public_base_url())


@api.get("/api/v1/invitations", scope="members:read", response_model="models.InvitationPage", tags=TAGS,
         summary="List the tenant's invitations, newest first: pending, accepted, revoked or expired",
         description="Listing gives the seats of expired invitations back.")
def list_invitations(limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT, cursor: IdCursor = None):
    return invitations.list_invitations(api.tenant_context(), limit, cursor)


@api.delete("/api/v1/invitations/{id}", scope="members:write", response_model="models.Invitation", tags=TAGS,
            errors=(409,), summary="Revoke an invitation: its link stops working and its seat is given back",
            description="409 accepted: the invitation was accepted (remove the member instead).")
def revoke_invitation(id: str):
    return invitations.revoke_invitation(api.tenant_context(), id)


@api.post("/api/v1/invitations/{id}/resend", scope="members:write", response_model="models.Invitation", tags=TAGS,
          errors=(403, 409, 503),
          summary="E-mail a new link (the old one stops working); the invitation expires 7 days from now")
def resend_invitation(id: str):
    return invitations.resend_invitation(api.tenant_context(), id, api.public_base_url())


@api.get("/api/v1/invitations/lookup", public=True, throttle="invitation", response_model="models.InvitationLookup",
         tags=TAGS, errors=(403, 404, 409),
         summary="What the accept page shows about an invitation link: tenant, role, masked address, expiry",
         description="403 tenant_suspended: the tenant is suspended, so the link cannot be accepted (as accept "
                     "answers). 404: the token names no live link (unknown, or replaced by a resend). 409: the "
                     "invitation was accepted, revoked or has expired (details.reason), or its sender may no longer "
                     "send it (sender_not_allowed: removed, demoted, or the key revoked).")
def lookup_invitation(token: Annotated[str, Query(max_length=200)]):
    return invitations.lookup(token)


@api.post("/api/v1/invitations/accept", public=True, throttle="invitation", response_model="account_models.TokenPair",
          tags=TAGS, errors=(401, 403, 404, 409, 429),
          summary="Accept an invitation: join the tenant and sign in to it (the answer /auth/login gives)",
          description="The invited address's account signs in with its password (the sign-in throttles apply), or a "
                      "signed-in user of that address sends their access token; an address with no account sends a "
                      "name and a new password, and the account is created in the tenant. The refresh token is also "
                      "set as the refresh_token cookie, as at /auth/login. 403 email_mismatch: the "
                      "signed-in user's address is not the invited one; 403 tenant_suspended: the tenant is "
                      "suspended (lookup answers the same); 403 with details.feature seats: the seats in use exceed "
                      "the tenant's plan today (a downgrade since the invitation). 409: the link was used, revoked or "
                      "has expired, the account is a member already, or the sender may no longer send it "
                      "(sender_not_allowed: removed, demoted, or the key revoked).")
def accept_invitation(body: models.AcceptBody):
    pair = invitations.accept(body, api.optional_principal(), api.source_ip())
    api.set_response_header("Set-Cookie", refresh_cookie.set_cookie(pair["refreshToken"], pair["refreshExpiresIn"]))
    return pair


ACCEPT_PAGE = load_page(Path(__file__).parent / "accept_page")


@api.get("/api/v1/invitations/accept-page", public=True, raw=True, media_type="text/html", tags=TAGS,
         summary="The browser page the e-mailed link opens: shows the invitation and accepts it",
         description="The link is this page with #token=... (the fragment never reaches a server). The page calls "
                     "lookup, then accept.")
def invitation_accept_page():
    page = ACCEPT_PAGE.page()   # drawn once with the deployment's brand
    for name, value in page.headers.items():
        api.set_response_header(name, value)
    return page.html


api.snapstart()  # SnapStart's hooks (svc_core/platform/snapshot.py); a no-op outside Lambda
lambda_handler = api.handler
