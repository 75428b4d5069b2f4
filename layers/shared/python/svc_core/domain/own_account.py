"""What a signed-in person changes of their own account: the password, the sessions, the name
(docs/authentication.md, "Your own account").

Only a user's access token: an API key belongs to a tenant, not to a person, and is refused (403,
reason user_required) as the other routes of a person's own do. The account may live in another cell
than the tenant the token is for (domain/people.py): its sessions are read and ended there; its name is
written there, and in the home of each tenant whose member list shows it. Its password is checked
only in its own cell, which alone holds the hash: a change sent to another cell is refused (409
account_in_another_region), and a reset by e-mail works from anywhere.

- Changing the password needs the current one, checked under the sign-in throttles (a wrong one
  counts as a failed sign-in of the account from that address, and is answered 403
  current_password_wrong: the caller's token is fine, so not 401); then every other session of the
  account ends and the caller's stays. A pending reset link dies with the old password.
- The sessions are the account's open sign-ins, newest first, a page at a time; ending one takes its
  refresh token at once and its access tokens on their next request (another account's session is
  404, as a missing one); ending the others keeps the caller's.
The password's change and the sessions ended leave an entry in the audit log of each tenant where the
person is an owner or admin (audit.account_entries).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svc_core.contracts import cells, cursors
from svc_core.data import sessions_table, users_table
from svc_core.data.common import ConditionFailed, transact
from svc_core.domain import accounts, audit, passwords, people
from svc_core.domain.paging import id_page
from svc_core.platform import ids, timeutil
from svc_core.platform.config import settings
from svc_core.platform.errors import Conflict, Forbidden, NotFound, Unauthorized
from svc_core.platform.log import logger

if TYPE_CHECKING:
    from svc_core.auth.context import TenantContext
    from svc_core.auth.principal import Principal
    from svc_core.domain.models.accounts import ChangePasswordBody, ProfileUpdate

SESSION_PREFIX = "ses"


def _signed_in(ctx: TenantContext, what: str) -> Principal:
    if ctx.principal.credential != "user":
        raise Forbidden(f"Only a signed-in user can {what} (an API key belongs to a tenant, not to a person).",
                        {"reason": "user_required"})
    return ctx.principal


# ---- the password ----------------------------------------------------------------------------------

def change_password(ctx: TenantContext, body: ChangePasswordBody) -> dict[str, Any]:
    principal = _signed_in(ctx, "change their password")
    home = people.account_home_elsewhere(principal.subject)
    if home is not None:
        raise Conflict(f"Your account lives in the cell of {home}, which alone checks its password: change it "
                       "signed in to a tenant there, or reset it by e-mail.",
                       {"reason": "account_in_another_region", "region": home})
    account = users_table.get(principal.subject)
    if account is None:
        raise Unauthorized("The user no longer exists.")
    now = timeutil.now()
    try:
        user, memberships = accounts.password_sign_in(account["email"], body.currentPassword, ctx.source_ip, now)
    except Unauthorized:
        user = None
    if user is None or user["id"] != principal.subject:
        raise Forbidden("The current password is wrong.", {"reason": "current_password_wrong"})
    entries = audit.account_entries(people.memberships(user["id"], memberships), user["id"], "user.password_changed",
                                    source_ip=ctx.source_ip, request_id=ctx.request_id)
    try:
        people.commit_with_audit([users_table.password_changed_entry(
            user["id"], passwords.hash_password(body.newPassword), user["passwordHash"])], entries)
    except ConditionFailed:
        raise Conflict("The password was changed meanwhile: sign in again.", {"reason": "changed"}) from None
    ended = _end_others(user["id"], principal.session_id, int(now))
    logger.info("password changed", extra={"userId": user["id"], "sessionsEnded": len(ended)})
    return {"sessionsEnded": len(ended), "currentSessionId": principal.session_id}


# ---- the sessions --------------------------------------------------------------------------------------

def _view(session: dict[str, Any], current: str | None) -> dict[str, Any]:
    refreshed = session.get("rotatedAt")
    return {"id": session["id"], "current": session["id"] == current, "tenantId": session["tenantId"],
            "currentTenantId": session.get("currentTenantId") or session["tenantId"],
            "created_at": session["created_at"],
            "last_refreshed_at": timeutil.iso(int(refreshed)) if refreshed is not None else session["created_at"],
            "expires_at": timeutil.iso(int(session["expiresAt"]))}


def list_sessions(ctx: TenantContext, limit: int, cursor: str | None) -> dict[str, Any]:
    principal = _signed_in(ctx, "list their sessions")
    found, last = people.session_page(principal.subject, limit, cursors.id_after(cursor, SESSION_PREFIX),
                                      timeutil.now())
    return id_page(found, last, lambda session: _view(session, principal.session_id))


def end_session(ctx: TenantContext, session_id: str) -> dict[str, Any]:
    """End one of the caller's sessions (the current one too: that is a sign-out); one ended already
    answers the same."""
    principal = _signed_in(ctx, "end their sessions")
    session = people.session_of(principal.subject, session_id) if ids.is_id(session_id, SESSION_PREFIX) else None
    if session is None:
        raise NotFound("You have no such session.", {"id": session_id, "resource": "session"})
    now = int(timeutil.now())
    if _tokens_may_work(session, now):
        people.end_session(session, now)
        _audit_ended(ctx, [session_id])
    return {"id": session_id, "deleted": True}


def end_other_sessions(ctx: TenantContext) -> dict[str, Any]:
    """Sign out everywhere else: every session of the account but the caller's."""
    principal = _signed_in(ctx, "end their sessions")
    ended = _end_others(principal.subject, principal.session_id, int(timeutil.now()))
    _audit_ended(ctx, ended)
    return {"sessionsEnded": len(ended), "currentSessionId": principal.session_id}


def _tokens_may_work(session: dict[str, Any], now: int) -> bool:
    """Not ended, and its refresh token, or the last access token it minted, not yet expired."""
    return sessions_table.is_open(session, now - settings().jwt_lifetime_seconds)


def _end_others(user_id: str, keep: str | None, now: int) -> list[str]:
    """End the account's sessions but `keep`; their ids. A session whose refresh token expired less than
    an access token's life ago may still have a working access token: it is ended too."""
    ended = []
    for session in people.open_sessions(user_id, now - settings().jwt_lifetime_seconds):
        if session["id"] != keep:
            people.end_session(session, now)
            ended.append(session["id"])
    return ended


def _audit_ended(ctx: TenantContext, session_ids: list[str]) -> None:
    if not session_ids:
        return
    _, memberships = users_table.with_memberships(ctx.principal.subject)
    people.commit_with_audit([], audit.account_entries(
        people.memberships(ctx.principal.subject, memberships), ctx.principal.subject, "user.sessions_ended",
        source_ip=ctx.source_ip, request_id=ctx.request_id, changes=audit.changed({}, {"sessionIds": session_ids})))


# ---- the name ------------------------------------------------------------------------------------------

def update_name(ctx: TenantContext, body: ProfileUpdate) -> dict[str, Any]:
    """The profile's name, in the account's cell, and the copy each membership keeps for the tenant's
    member list, in each tenant's cell; answered as GET /auth/me."""
    principal = _signed_in(ctx, "change their name")
    user_id = principal.subject
    _, here = users_table.with_memberships(user_id)
    home = people.account_home_elsewhere(user_id) or cells.here()
    writes: dict[str, list[dict[str, Any]]] = {home: [users_table.name_entry(user_id, body.name)]}
    for membership in people.memberships(user_id, here):
        writes.setdefault(membership.get("homeRegion") or cells.here(), []).append(
            users_table.membership_name_entry(user_id, membership["tenantId"], body.name))
    try:
        if home != cells.here():   # the profile first: where the account lives (503 when unreachable)
            people.write_in(home, writes.pop(home), "the account")
        for start in range(0, len(writes.get(cells.here(), [])), people.TRANSACTION_ITEMS):
            transact(writes[cells.here()][start:start + people.TRANSACTION_ITEMS])
    except ConditionFailed:
        raise Conflict("The account or one of its memberships changed meanwhile; send it again.",
                       {"reason": "changed"}) from None
    writes.pop(cells.here(), None)
    for region, entries in writes.items():   # the member lists of tenants in other cells
        try:
            people.write_in(region, entries, "the tenant's member list")
        except Exception:
            logger.warning("a member list's copy of a name could not be written", extra={"region": region})
    return accounts.me(principal)
