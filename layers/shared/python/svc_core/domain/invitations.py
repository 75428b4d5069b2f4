"""Invitations: an owner or admin invites an e-mail address into the tenant with a role; the
invitee follows the e-mailed link and joins, signing in or registering (docs/invitations.md).

The link carries the token `ivt_<ULID>.<secret>`: the invitation's id and 32 random bytes. Only the
SHA-256 of the token is stored, and only the latest link's: a resend makes a new one and the old
one is dead. A link works once (the acceptance is a conditional write from pending with that hash),
for the invited address only (compared normalised), for LINK_DAYS after it was sent, and not after
a revocation.

Seats: a pending invitation holds one of the plan's seats from the moment it is made (the tenant's
seatsUsed counter, in the invitation's own transaction); accepting keeps it (it becomes the
member's), revoking gives it back. An invitation that expired gives its seat back when it is next
seen: listing the invitations, or inviting when the seats are full (sweep_expired), marks every
expired pending invitation of the tenant expired and frees its seat, each in one transaction.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import re
import secrets
from typing import TYPE_CHECKING, Any

from svc_core.adapters import email
from svc_core.auth import authenticate, roles
from svc_core.auth.context import TenantContext
from svc_core.contracts import cells, email_address, events, plans
from svc_core.data import api_keys_table, directory_table, invitations_table, outbox_table, tenants_table, users_table
from svc_core.data.common import ConditionFailed, transact
from svc_core.domain import accounts, audit, branded_email, people
from svc_core.domain.fields.invitations import NEW_PASSWORD_MIN, PREFIX, TOKEN_PATTERN
from svc_core.domain.paging import tenant_list_page
from svc_core.domain.passwords import hash_password
from svc_core.platform import ids, timeutil
from svc_core.platform.errors import Conflict, Forbidden, NotFound, ServiceUnavailable, ValidationFailed
from svc_core.platform.log import logger

if TYPE_CHECKING:
    from svc_core.auth.principal import Principal
    from svc_core.contracts.brand import Brand
    from svc_core.domain.models.invitations import AcceptBody, InvitationCreate

LINK_DAYS = 7
_TOKEN = re.compile(TOKEN_PATTERN)
ACCEPT_PAGE = "/api/v1/invitations/accept-page"


# ---- views and reads ---------------------------------------------------------------------------

def _status(record: dict[str, Any], now: float) -> str:
    if record["status"] == "pending" and record["expiresAt"] <= now:
        return "expired"  # not swept yet: its seat is freed when it is
    return record["status"]


def _view(record: dict[str, Any], now: float) -> dict[str, Any]:
    return {"id": record["id"], "email": record["email"], "role": record["role"], "status": _status(record, now),
            "invitedBy": record["invitedBy"], "created_at": record["created_at"],
            "expires_at": timeutil.iso(record["expiresAt"])}


def _not_found(invitation_id: str) -> NotFound:
    return NotFound("The invitation does not exist.", {"id": invitation_id, "resource": "invitation"})


def _read(ctx: TenantContext, invitation_id: str) -> dict[str, Any]:
    record = invitations_table.get(ctx.tenant_id, invitation_id) if ids.is_id(invitation_id, PREFIX) else None
    if record is None:
        raise _not_found(invitation_id)
    return record


def list_invitations(ctx: TenantContext, limit: int, cursor: str | None) -> dict[str, Any]:
    now = timeutil.now()
    sweep_expired(ctx.tenant_id, now)
    return tenant_list_page(invitations_table, ctx.tenant_id, limit, cursor, id_prefix=PREFIX,
                            view=lambda record: _view(record, now))


def sweep_expired(tenant_id: str, now: float) -> int:
    """Mark the tenant's expired pending invitations expired and give their seats back; how many."""
    freed = 0
    for record in invitations_table.pending_expired(tenant_id, int(now)):
        try:
            transact([invitations_table.settle_entry(tenant_id, record["id"], status="expired",
                                                     expected_status="pending", at=timeutil.iso(now), now=int(now),
                                                     expired_by=int(now)),
                      tenants_table.count_entry(tenant_id, "seatsUsed", -1)])
            freed += 1
        except ConditionFailed:
            pass  # settled (or resent) meanwhile: its seat is someone else's business
    return freed


# ---- the link and its e-mail ---------------------------------------------------------------------

def _new_token(invitation_id: str) -> tuple[str, str]:
    token = f"{invitation_id}.{secrets.token_urlsafe(32)}"
    return token, _digest(token)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def accept_link(base_url: str, token: str) -> str:
    # In the fragment: a browser never sends it to a server, so no access log or proxy sees it.
    return f"{base_url.rstrip('/')}{ACCEPT_PAGE}#token={token}"


def _message(to: str, tenant_name: str, role: str, inviter: str, link: str, expires_at: str,
             brand: Brand | None = None) -> email.Message:
    """The invitation in the operator's brand: its name in the subject and the text (branded_email)."""
    brand = brand or branded_email.current_brand()
    subject = f"You are invited to join {tenant_name} on {brand.name}"
    text = (f"{inviter} invited you to join {tenant_name} on {brand.name} as {role}.\n\n"
            f"Accept the invitation (the link works once, until {expires_at}):\n{link}\n\n"
            "If you did not expect this invitation, ignore this e-mail.\n")
    e = html.escape
    body = (f"<p>{e(inviter)} invited you to join <strong>{e(tenant_name)}</strong> on {e(brand.name)} "
            f"as {e(role)}.</p>"
            f"<p>{branded_email.link(link, 'Accept the invitation', brand)} "
            f"(the link works once, until {e(expires_at)}).</p>"
            "<p>If you did not expect this invitation, ignore this e-mail.</p>")
    return branded_email.message(to, subject, text, body, brand)


def _send(record: dict[str, Any], tenant: dict[str, Any], inviter: str, token: str, base_url: str) -> None:
    link = accept_link(base_url, token)
    try:
        message_id = email.send(_message(record["email"], tenant["name"], record["role"], inviter, link,
                                         timeutil.iso(record["expiresAt"])))
    except (email.EmailNotConfigured, email.EmailNotSent) as exc:
        # Never the token nor the link in a log line.
        logger.warning("invitation e-mail not sent", extra={"invitationId": record["id"], "reason": str(exc)})
        raise ServiceUnavailable("The invitation is saved but its e-mail could not be sent; resend it.",
                                 {"id": record["id"], "reason": "email_not_sent"}) from None
    logger.info("invitation e-mail sent", extra={"invitationId": record["id"], "messageId": message_id})


def _inviter_name(ctx: TenantContext) -> str:
    if ctx.principal.credential == "user":
        user = people.account(ctx.principal.subject) or {}
        return user.get("name") or "A member"
    return "An administrator"


# ---- create, resend, revoke ------------------------------------------------------------------------

def _check_role(ctx: TenantContext, role: str) -> None:
    """An owner is made by a signed-in owner only; any other role by a caller holding all its scopes."""
    if role == "owner":
        membership = (users_table.membership(ctx.principal.subject, ctx.tenant_id)
                      if ctx.principal.credential == "user" else None)
        if not membership or membership["role"] != "owner":
            raise Forbidden("Only a signed-in owner can invite an owner.", {"reason": "owner_required"})
    elif not roles.may_grant(ctx.principal.scopes, role):
        raise Forbidden("The role has permissions the caller does not have.", {"reason": "role_exceeds_caller"})


def _seats_full(tenant: dict[str, Any]) -> Forbidden:
    plan, limit = tenant["plan"], plans.LIMITS[tenant["plan"]].seats
    bigger = [p for p in plans.PLANS if plans.rank(p) > plans.rank(plan)
              and (plans.LIMITS[p].seats is None or plans.LIMITS[p].seats > limit)]
    details = {"feature": "seats", "limit": limit, "currentPlan": plan}
    if bigger:
        details["requiredPlan"] = bigger[0]
    return Forbidden("Every seat of the plan is taken (members and pending invitations).", details)


def _taking_a_seat(tenant: dict[str, Any], entries: list[dict[str, Any]], now: float) -> None:
    """Commit entries with one more seat taken; when the seats are full, free the expired
    invitations' seats and try once more, then refuse (403 seats)."""
    seat = tenants_table.count_entry(tenant["id"], "seatsUsed", 1, at_most=plans.LIMITS[tenant["plan"]].seats)
    try:
        transact([*entries, seat])
    except ConditionFailed:
        if not sweep_expired(tenant["id"], now):
            raise _seats_full(tenant) from None
        try:
            transact([*entries, seat])
        except ConditionFailed:
            raise _seats_full(tenant) from None


def _tenant(tenant_id: str) -> dict[str, Any]:
    tenant = tenants_table.get_consistent(tenant_id)
    if tenant is None:
        raise NotFound("No such tenant.", {"id": tenant_id, "resource": "tenant"})
    return tenant


def _joinable_tenant(tenant_id: str) -> dict[str, Any]:
    """The invitation's tenant, if it is active: a suspended tenant is joined by no one, and its links
    say so alike when looked up and when accepted (403)."""
    tenant = _tenant(tenant_id)
    if tenant["status"] != "active":
        raise Forbidden("The tenant is suspended: no one can join it until it is active again.",
                        {"reason": "tenant_suspended", "tenantId": tenant_id})
    return tenant


def create_invitation(ctx: TenantContext, body: InvitationCreate, base_url: str) -> dict[str, Any]:
    _check_role(ctx, body.role)
    key = email_address.normalise(body.email)
    user_id = people.user_id_for_email(body.email)
    if user_id and users_table.membership(user_id, ctx.tenant_id):
        raise Conflict("This address is already a member of the tenant.", {"reason": "already_member"})
    now = timeutil.now()
    if any(r["emailKey"] == key and _status(r, now) == "pending" for r in _all_of(ctx.tenant_id)):
        raise Conflict("This address has a pending invitation; resend it instead.", {"reason": "already_invited"})
    tenant = _tenant(ctx.tenant_id)
    invitation_id = ids.new_id(PREFIX)
    token, token_hash = _new_token(invitation_id)
    stamp = timeutil.iso(now)
    record = {"id": invitation_id, "email": body.email, "emailKey": key, "role": body.role, "status": "pending",
              "invitedBy": ctx.principal.subject, "created_at": stamp, "sent_at": stamp, "updated_at": stamp,
              "expiresAt": int(now) + LINK_DAYS * 86400, "secretHash": token_hash}
    _taking_a_seat(tenant, [
        invitations_table.put_new_entry(ctx.tenant_id, record),
        audit.entry(ctx.tenant_id, "invitation.created", "invitation", invitation_id, ctx=ctx, now=now,
                    changes=audit.changed({}, {"email": body.email, "role": body.role, "status": "pending",
                                               "expires_at": timeutil.iso(record["expiresAt"])})),
    ], now)
    _send(record, tenant, _inviter_name(ctx), token, base_url)
    return _view(record, now)


def _all_of(tenant_id: str) -> list[dict[str, Any]]:
    found, after = [], None
    while True:
        items, after = invitations_table.list_for_tenant(tenant_id, 100, after)
        found += items
        if after is None:
            return found


def resend_invitation(ctx: TenantContext, invitation_id: str, base_url: str) -> dict[str, Any]:
    """A new link (the old one dies) valid LINK_DAYS from now. A pending invitation keeps its seat; one
    marked expired takes a seat again."""
    record = _read(ctx, invitation_id)
    if record["status"] not in ("pending", "expired"):
        raise Conflict(f"The invitation is {record['status']}.", {"reason": record["status"]})
    _check_role(ctx, record["role"])
    now = timeutil.now()
    token, token_hash = _new_token(invitation_id)
    expires_at = int(now) + LINK_DAYS * 86400
    entries = [invitations_table.renew_entry(ctx.tenant_id, invitation_id, expected_status=record["status"],
                                             secret_hash=token_hash, expires_at=expires_at, at=timeutil.iso(now)),
               audit.entry(ctx.tenant_id, "invitation.resent", "invitation", invitation_id, ctx=ctx, now=now,
                           changes=audit.changed(
                               {"status": record["status"], "expires_at": timeutil.iso(record["expiresAt"])},
                               {"status": "pending", "expires_at": timeutil.iso(expires_at)}))]
    tenant = _tenant(ctx.tenant_id)
    try:
        if record["status"] == "expired":
            _taking_a_seat(tenant, entries, now)
        else:
            transact(entries)
    except ConditionFailed:
        raise Conflict("The invitation changed meanwhile; read it again.", {"reason": "changed"}) from None
    renewed = {**record, "status": "pending", "expiresAt": expires_at}
    _send(renewed, tenant, _inviter_name(ctx), token, base_url)
    return _view(renewed, now)


def revoke_invitation(ctx: TenantContext, invitation_id: str) -> dict[str, Any]:
    """The link stops working; a pending invitation's seat is given back. Revoking a revoked one
    changes nothing; an accepted one cannot be revoked (remove the member instead)."""
    record = _read(ctx, invitation_id)
    now = timeutil.now()
    if record["status"] == "revoked":
        return _view(record, now)
    if record["status"] == "accepted":
        raise Conflict("The invitation was accepted; remove the member instead.", {"reason": "accepted"})
    entries = [invitations_table.settle_entry(ctx.tenant_id, invitation_id, status="revoked",
                                              expected_status=record["status"], at=timeutil.iso(now), now=int(now)),
               audit.entry(ctx.tenant_id, "invitation.revoked", "invitation", invitation_id, ctx=ctx, now=now,
                           changes={"status": {"old": record["status"], "new": "revoked"}})]
    if record["status"] == "pending":
        entries.append(tenants_table.count_entry(ctx.tenant_id, "seatsUsed", -1))
    try:
        transact(entries)
    except ConditionFailed:
        raise Conflict("The invitation changed meanwhile; read it again.", {"reason": "changed"}) from None
    return _view({**record, "status": "revoked"}, now)


# ---- the invitee's side (public) -------------------------------------------------------------------

def _by_token(token: str, now: float) -> dict[str, Any]:
    """The pending, unexpired invitation this token is the live link of; 404 for a token that names
    nothing (or a dead link of a resent one), 409 for one used, revoked or expired."""
    if not _TOKEN.fullmatch(token or ""):
        raise NotFound("The invitation link is not valid.", {"resource": "invitation"})
    invitation_id = token.split(".", 1)[0]
    tenant_id = invitations_table.tenant_of(invitation_id)
    record = invitations_table.get(tenant_id, invitation_id) if tenant_id else None
    if record is None:
        raise NotFound("The invitation link is not valid.", {"resource": "invitation"})
    status = _status(record, now)
    if status == "pending" and not hmac.compare_digest(record.get("secretHash", ""), _digest(token)):
        raise NotFound("The invitation link is not valid.", {"resource": "invitation"})  # an older link
    if status != "pending":
        raise Conflict(f"The invitation is {status}.", {"reason": status})
    return record


def mask(address: str) -> str:
    """The address as the accept page shows it to whoever holds the link: a***@example.com."""
    local, _, domain = address.partition("@")
    return f"{local[:1]}***@{domain}"


def lookup(token: str) -> dict[str, Any]:
    now = timeutil.now()
    record = _by_token(token, now)
    tenant = _joinable_tenant(record["tenantId"])
    _sender_checks(record, now)  # what accepting would refuse, the page says first
    return {"tenantName": tenant["name"], "role": record["role"], "email": mask(record["email"]),
            "expires_at": timeutil.iso(record["expiresAt"]),
            "accountExists": people.user_id_for_email(record["email"]) is not None}


def _bad_field(name: str, reason: str) -> ValidationFailed:
    return ValidationFailed("The request is not valid.", {"fields": [{"field": name, "in": "body", "reason": reason}]})


def _invitee(record: dict[str, Any], body: AcceptBody, principal: Principal | None, source_ip: str, now: float
             ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The user who accepts, and the items creating them when new: the signed-in caller (a user
    token whose account's address is the invited one), the existing account of the invited address
    (its password, under the sign-in throttles), or a new user (name and password)."""
    if principal is not None:
        if principal.credential != "user":
            raise Forbidden("Accept an invitation as a signed-in user, not with an API key.")
        user = people.account(principal.subject)  # the account may live in another cell
        if user is None or user["status"] != "active":
            raise Forbidden("This account is disabled.", {"reason": "account_disabled"})
        if email_address.normalise(user["email"]) != record["emailKey"]:
            raise Forbidden("The invitation is for another e-mail address.", {"reason": "email_mismatch"})
        return user, []
    if users_table.id_for_email(record["email"]) is None and people.user_id_for_email(record["email"]):
        # The account lives in another cell, which alone checks its password: accepted signed in.
        raise Conflict("This address has an account in another region: sign in with it and accept the invitation "
                       "signed in (send its access token).", {"reason": "account_exists"})
    if users_table.id_for_email(record["email"]):
        if not body.password:
            raise _bad_field("password", "the account's password is required")
        user, _ = accounts.password_sign_in(record["email"], body.password, source_ip, now)
        return user, []
    if not body.name:
        raise _bad_field("name", "a name is required to create the account")
    if not body.password or len(body.password) < NEW_PASSWORD_MIN:
        raise _bad_field("password", f"at least {NEW_PASSWORD_MIN} characters are required")
    user = {"id": ids.new_id("usr"), "email": record["email"], "name": body.name, "status": "active",
            "created_at": timeutil.iso(now)}
    return user, [*users_table.put_new({**user, "passwordHash": hash_password(body.password)}),
                  *directory_table.user_entries(user["id"], authenticate.email_hash(record["email"]),
                                                cells.here())]


# ---- whether the invitation still holds: its sender's standing, the seats of the plan today ------------

def _sender_refused() -> Conflict:
    return Conflict("The one who sent this invitation may no longer invite to this role (removed from the tenant, "
                    "their role changed, or their key revoked): ask the tenant's owners or admins for a new one.",
                    {"reason": "sender_not_allowed"})


def _sender_checks(record: dict[str, Any], now: float) -> list[dict[str, Any]]:
    """Refuse (409 sender_not_allowed) unless the sender may still invite to the invitation's role: a
    user still a member whose role holds members:write and every scope of the role (an owner, for an
    owner's invitation); a key still live holding them. Returns the condition checks that keep it so
    in the acceptance's transaction (a removal or a demotion committing first makes it fail)."""
    sender, tenant_id, role = record["invitedBy"], record["tenantId"], record["role"]
    if sender.startswith("usr_"):
        membership = users_table.membership(sender, tenant_id)
        held = roles.ROLE_SCOPES[membership["role"]] if membership else frozenset()
        if not membership or (role == "owner" and membership["role"] != "owner") \
                or "members:write" not in held or not roles.may_grant(held, role):
            raise _sender_refused()
        return [users_table.role_check_entry(sender, tenant_id, membership["role"])]
    key = api_keys_table.get(tenant_id, sender)
    live = key is not None and key.get("revokedAt") is None and (key.get("expiresAt") is None or key["expiresAt"] > now)
    if not live or role == "owner" or "members:write" not in key["scopes"] \
            or not roles.may_grant(frozenset(key["scopes"]), role):
        raise _sender_refused()
    return [api_keys_table.live_check_entry(sender)]


def _seats_today(tenant: dict[str, Any], role: str) -> dict[str, Any]:
    """The tenant's counters as the acceptance moves them: the seat the invitation held becomes the
    member's, on the condition that the seats in use are within the plan the tenant is on now (a plan
    downgraded since the invitation leaves no room for it), and one owner more for an owner's."""
    counts = [tenants_table.Count("seatsUsed", 0, at_most=plans.LIMITS[tenant["plan"]].seats)]
    if role == "owner":
        counts.append(tenants_table.Count("owners", 1))
    return tenants_table.counts_entry(tenant["id"], *counts, plan=tenant["plan"])


def _over_seats(tenant: dict[str, Any]) -> Forbidden:
    return Forbidden("The tenant has more seats in use (members and pending invitations) than its plan holds "
                     "today: its owners free seats or change the plan before anyone joins.",
                     _seats_full(tenant).details)


def accept(body: AcceptBody, principal: Principal | None, source_ip: str) -> dict[str, Any]:
    """Join the tenant with the invitation's role, and sign in there (the answer /auth/login gives)."""
    now = timeutil.now()
    record = _by_token(body.token, now)
    tenant_id, stamp = record["tenantId"], timeutil.iso(now)
    tenant = _joinable_tenant(tenant_id)  # before anything is made: no one joins a suspended tenant
    seats = plans.LIMITS[tenant["plan"]].seats
    if seats is not None and tenant.get("seatsUsed", tenants_table.COUNTER_DEFAULTS["seatsUsed"]) > seats:
        raise _over_seats(tenant)
    standing = _sender_checks(record, now)
    user, new_user_items = _invitee(record, body, principal, source_ip, now)
    role = record["role"]
    actor = {"type": "user", "id": user["id"]}
    member = {"userId": user["id"], "role": role, "tenantId": tenant_id, "email": user["email"]}
    entries = [
        invitations_table.settle_entry(tenant_id, record["id"], status="accepted", expected_status="pending",
                                       at=stamp, now=int(now), secret_hash=_digest(body.token),
                                       not_expired_at=int(now)),
        *new_user_items,
        users_table.put_membership(user["id"], tenant_id, role, stamp, email=user["email"], name=user["name"],
                                   only_new=True),
        directory_table.membership_entry(user["id"], tenant_id),
        outbox_table.put_event_item(events.new_event("member.added", tenant_id, member), now),
        audit.entry(tenant_id, "invitation.accepted", "invitation", record["id"], actor=actor, source_ip=source_ip,
                    now=now, changes={"status": {"old": "pending", "new": "accepted"},
                                      "userId": {"old": None, "new": user["id"]}}),
        audit.entry(tenant_id, "member.added", "user", user["id"], actor=actor, source_ip=source_ip, now=now,
                    changes=audit.changed({}, {"email": user["email"], "role": role, "invitationId": record["id"]})),
    ]
    if new_user_items:
        entries.append(outbox_table.put_event_item(events.new_event("user.created", tenant_id, user), now))
    entries += [_seats_today(tenant, role), *standing]
    try:
        transact(entries)
    except ConditionFailed:
        raise _why_not_accepted(record, user, bool(new_user_items), now) from None
    membership = {"tenantId": tenant_id, "role": role, "created_at": stamp}
    return accounts.open_session(user, membership, now, source_ip, method="invitation")


def _why_not_accepted(record: dict[str, Any], user: dict[str, Any], new_user: bool, now: float) -> Conflict:
    current = invitations_table.get(record["tenantId"], record["id"])
    if current is None or _status(current, now) != "pending" or current.get("secretHash") != record.get("secretHash"):
        return Conflict("The invitation was used, revoked or renewed meanwhile.",
                        {"reason": _status(current, now) if current else "revoked"})
    tenant = _tenant(record["tenantId"])
    seats = plans.LIMITS[tenant["plan"]].seats
    if seats is not None and tenant.get("seatsUsed", tenants_table.COUNTER_DEFAULTS["seatsUsed"]) > seats:
        return _over_seats(tenant)
    try:
        _sender_checks(record, now)
    except Conflict as refused:
        return refused
    if new_user:
        return Conflict("An account with this address was created meanwhile; sign in to accept.",
                        {"reason": "account_exists"})
    return Conflict("This account is already a member of the tenant.", {"reason": "already_member"})
