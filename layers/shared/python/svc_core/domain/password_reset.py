"""A forgotten password, reset by an e-mailed link (docs/authentication.md, "A forgotten password").

Asking (`forgot`) never tells whether the address has an account: the answer is the same, and for an
address without an active account nothing is stored or sent. For an active account a link is e-mailed
with the token `prt_<id>.<secret>` (`.<region>` of the account's cell after it in a deployment of
several cells, as a refresh token names it): the reset's id and 32 random bytes. Only the token's
SHA-256 is stored, with the reset, in the account's cell; the profile names the latest link
(passwordResetId), so a newer request, a reset or a changed password leaves every earlier link dead.
A link works once (a conditional write), for LINK_MINUTES; at most PASSWORD_RESET_MAILS_PER_HOUR
mails go to one account in an hour (more asks are answered alike and send nothing).

Resetting sets the new password (argon2id), consumes the link and ends every session of the account:
refresh tokens at once, access tokens on their next request, here and in the cells of the tenants
they were minted for. The answer names the account's address, to sign in with next.

The link opens the dashboard's page when the deployment has one (`DashboardUrl`), else the API's own
(`/api/v1/auth/password/reset-page`); the token is in the fragment either way, which a browser never
sends to a server. No token or link is ever written to a log line.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import re
import secrets
from typing import TYPE_CHECKING, Any

from svc_core.adapters import email
from svc_core.auth import cell_routing, rate_limit
from svc_core.auth.authenticate import email_hash
from svc_core.contracts import cells, email_address
from svc_core.data import rate_limits_table, users_table
from svc_core.data.common import ConditionFailed
from svc_core.domain import accounts, audit, branded_email, passwords, people
from svc_core.domain.fields.password_reset import LINK_MINUTES, PREFIX, TOKEN_PATTERN
from svc_core.platform import ids, timeutil
from svc_core.platform.config import settings
from svc_core.platform.errors import Conflict, Forbidden, NotFound
from svc_core.platform.log import logger

if TYPE_CHECKING:
    from svc_core.contracts.brand import Brand
    from svc_core.domain.models.accounts import ForgotPasswordBody, ResetPasswordBody

LINK_SECONDS = LINK_MINUTES * 60
MAILS_WINDOW_SECONDS = 3600
RESET_PAGE = "/api/v1/auth/password/reset-page"
DASHBOARD_PAGE = "/#/reset-password"   # the dashboard's routes are in the fragment (dashboard/src/router.ts)
_TOKEN = re.compile(TOKEN_PATTERN)


# ---- asking for a link ---------------------------------------------------------------------------------

def forgot(body: ForgotPasswordBody, base_url: str) -> dict[str, Any]:
    """E-mail a reset link to the address's active account; the same answer for any address."""
    answer = {"email": body.email, "expiresIn": LINK_SECONDS}
    user_id = users_table.id_for_email(body.email)
    if user_id is None:
        # An account of another cell (or, for none, the cell the address's hash picks): 421 to it, as a
        # sign-in is, so the answer never tells whether an account exists.
        cell_routing.account(email_hash(body.email))
        return answer
    user = users_table.get(user_id)
    if user is None or user.get("status") != "active" or not user.get("passwordHash"):
        return answer
    now = timeutil.now()
    if not _mail_allowed(email_address.normalise(body.email), now):
        logger.info("password reset e-mail not sent: the account's hourly limit", extra={"userId": user_id})
        return answer
    reset_id = ids.new_id(PREFIX)
    token = f"{reset_id}.{secrets.token_urlsafe(32)}"
    if cells.multi_cell():
        token += f".{cells.here()}"   # the cell keeping the account, for a cell that does not
    expires_at = int(now) + LINK_SECONDS
    try:
        people.commit_with_audit(users_table.reset_requested_entries(user_id, {
            "id": reset_id, "secretHash": _digest(token), "expiresAt": expires_at,
            "created_at": timeutil.iso(now)}), [])
    except ConditionFailed:
        return answer   # disabled (or gone) meanwhile: nothing is sent
    _send(user, reset_link(base_url, token), timeutil.iso(expires_at), reset_id)
    return answer


def _mail_allowed(account: str, now: float) -> bool:
    """One more mail to this account this hour, counted (the rate-limits table keeps the normalised
    address, as the sign-in throttles do)."""
    window = rate_limit.window_start(now, MAILS_WINDOW_SECONDS)
    hits, _ = rate_limits_table.count_request(f"reset-mails#{account}", window, MAILS_WINDOW_SECONDS)
    return hits <= settings().password_reset_mails_per_hour


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def reset_link(base_url: str, token: str) -> str:
    """The dashboard's page when there is a dashboard, else the API's own; the token in the fragment."""
    dashboard = settings().dashboard_url.rstrip("/")
    if dashboard:
        return f"{dashboard}{DASHBOARD_PAGE}?token={token}"
    return f"{base_url.rstrip('/')}{RESET_PAGE}#token={token}"


def _message(to: str, link: str, expires_at: str, brand: Brand | None = None) -> email.Message:
    brand = brand or branded_email.current_brand()
    subject = f"Reset your {brand.name} password"
    text = (f"Someone, probably you, asked to reset the password of the {brand.name} account of {to}.\n\n"
            f"Choose a new password (the link works once, until {expires_at}):\n{link}\n\n"
            "Every sign-in of the account ends when the password is reset. If you did not ask, ignore this "
            "e-mail: the password stays as it is.\n")
    e = html.escape
    body = (f"<p>Someone, probably you, asked to reset the password of the {e(brand.name)} account of "
            f"<strong>{e(to)}</strong>.</p>"
            f"<p>{branded_email.link(link, 'Choose a new password', brand)} "
            f"(the link works once, until {e(expires_at)}).</p>"
            "<p>Every sign-in of the account ends when the password is reset. If you did not ask, ignore this "
            "e-mail: the password stays as it is.</p>")
    return branded_email.message(to, subject, text, body, brand)


def _send(user: dict[str, Any], link: str, expires_at: str, reset_id: str) -> None:
    try:
        message_id = email.send(_message(user["email"], link, expires_at))
    except (email.EmailNotConfigured, email.EmailNotSent) as exc:
        # Never the token nor the link in a log line; and never told (a 503 here would say the
        # address has an account): the person asks again.
        logger.warning("password reset e-mail not sent", extra={"resetId": reset_id, "reason": str(exc)})
        return
    logger.info("password reset e-mail sent", extra={"resetId": reset_id, "messageId": message_id})


# ---- using it ---------------------------------------------------------------------------------------------

def _invalid() -> NotFound:
    return NotFound("The password reset link is not valid (or a newer one was sent): ask for a new one.",
                    {"resource": "password_reset"})


def _by_token(token: str, now: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """The reset and its user, when the token is the live link of an active account: 404 for a token that
    names nothing or a dead link (a newer one was sent, or the password changed since), 409 for one used
    (reason used) or expired (reason expired), 403 for a disabled account."""
    match = _TOKEN.fullmatch(token or "")
    if match is None:
        raise _invalid()
    parts = token.split(".")
    if len(parts) == 3:
        cell_routing.region(parts[2])   # the link is kept in the account's cell: 421 to it
    reset = users_table.password_reset(parts[0])
    if reset is None or not hmac.compare_digest(reset["secretHash"], _digest(token)):
        raise _invalid()
    if reset.get("usedAt") is not None:
        raise Conflict("This password reset link was used already: ask for a new one.", {"reason": "used"})
    if int(reset["expiresAt"]) <= now:
        raise Conflict("This password reset link has expired: ask for a new one.", {"reason": "expired"})
    user = users_table.get(reset["userId"])
    if user is None or user.get("passwordResetId") != reset["id"]:
        raise _invalid()
    if user["status"] != "active":
        raise Forbidden("This account is disabled.", {"reason": "account_disabled"})
    return reset, user


def reset(body: ResetPasswordBody, source_ip: str) -> dict[str, Any]:
    """Set the new password with the link, once; end every session of the account."""
    now = timeutil.now()
    found, user = _by_token(body.token, now)
    new_hash = passwords.hash_password(body.password)
    _, memberships = users_table.with_memberships(user["id"])
    entries = audit.account_entries(people.memberships(user["id"], memberships), user["id"], "user.password_reset",
                                    source_ip=source_ip, changes=audit.changed({}, {"method": "email_link"}))
    try:
        people.commit_with_audit(users_table.reset_used_entries(user["id"], found["id"], found["secretHash"],
                                                                new_hash, int(now)), entries)
    except ConditionFailed:
        _by_token(body.token, timeutil.now())   # used, renewed or disabled meanwhile: says which
        raise Conflict("The reset collided with another change of the account and was not made; send it again.",
                       {"reason": "changed"}) from None
    ended = accounts.end_sign_ins(user["id"], int(now))
    logger.info("password reset", extra={"userId": user["id"], "sessionsEnded": ended})
    return {"email": user["email"], "sessionsEnded": ended}
