"""The command-line device login: the spec's state machine, with PKCE (S256) and a state value.

    (none) --start--> pending --complete (a signed-in user, matching state)--> approved
    pending --deny (a signed-in user, matching state)--> denied
    approved --token (matching PKCE verifier)--> consumed      any of these --10 min--> expired

A denied session is stored as denied but reads `expired` with `reason: "denied"`: the spec's
status values are pending, approved, expired and consumed, and a client that follows it stops
polling on expired. An expired session's reason is `timed_out` or `denied`.

Every move is one conditional write (data/cli_sessions_table.py): a session is approved once
and consumed once, whatever the concurrency. Expiry is checked in code on every read.
The token a consumed session yields is a new `svc_cli_` API key for the approving user and
tenant, with the scopes of the user's role there; it is listed and revocable like any key.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from typing import TYPE_CHECKING, Any

from svc_core.auth.principal import Principal
from svc_core.auth.roles import ROLE_SCOPES
from svc_core.data import cli_sessions_table, tenants_table, users_table
from svc_core.data.cli_sessions_table import WrongState
from svc_core.domain import audit
from svc_core.domain.api_keys import issue_key
from svc_core.platform import ids, timeutil
from svc_core.platform.config import settings
from svc_core.platform.errors import (
    Conflict,
    Forbidden,
    LoginSessionConsumed,
    LoginSessionExpired,
    NotFound,
    Unauthorized,
)

if TYPE_CHECKING:
    from svc_core.domain.models.device_login import DecisionBody, StartBody, TokenBody

LIFETIME_SECONDS = 600
POLL_INTERVAL_SECONDS = 5
_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L: read aloud and typed without doubt


def _verification_code() -> str:
    raw = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(8))
    return f"{raw[:4]}-{raw[4:]}"


def challenge_of(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def start(body: StartBody, base_url: str) -> dict[str, Any]:
    now = int(timeutil.now())
    login_id = secrets.token_urlsafe(32)
    code = _verification_code()
    cli_sessions_table.create({
        "loginId": login_id, "state": body.state, "codeChallenge": body.codeChallenge,
        "codeChallengeMethod": "S256", "cliVersion": body.cliVersion, "platform": body.platform,
        "verificationCode": code, "status": "pending", "createdAt": now, "expiresAt": now + LIFETIME_SECONDS,
    })
    return {"loginId": login_id, "authUrl": _auth_url(base_url, login_id, body.state),
            "verificationCode": code, "expiresIn": LIFETIME_SECONDS, "interval": POLL_INTERVAL_SECONDS}


def _auth_url(base_url: str, login_id: str, state: str) -> str:
    """The dashboard's approval route when there is a dashboard, else the API's own page. The page
    needs the state to approve; in the fragment it never reaches a server or a log (the dashboard's
    routes are all in the fragment, so there the login id rides in it too)."""
    dashboard = settings().dashboard_url.rstrip("/")
    if dashboard:
        return f"{dashboard}/#/device?loginId={login_id}&state={state}"
    return f"{base_url}/api/v1/cli/auth/approve?loginId={login_id}#state={state}"


def _session(login_id: str) -> dict[str, Any]:
    session = cli_sessions_table.get(login_id) if login_id else None
    if session is None:
        raise NotFound("No such login session.", {"id": login_id, "resource": "cli_login"})
    return session


def _status(session: dict[str, Any], now: float) -> str:
    """The stored state at `now`: pending, approved, consumed, denied or expired (internal)."""
    if session["status"] in ("pending", "approved") and now >= session["expiresAt"]:
        return "expired"
    return session["status"]


def _public_status(current: str) -> dict[str, Any]:
    """The spec's view of a state: denied reads expired, and an expired session says why."""
    if current == "denied":
        return {"status": "expired", "reason": "denied"}
    if current == "expired":
        return {"status": "expired", "reason": "timed_out"}
    return {"status": current}


def status(login_id: str) -> dict[str, Any]:
    return {"loginId": login_id, **_public_status(_status(_session(login_id), timeutil.now()))}


def info(login_id: str) -> dict[str, Any]:
    """What the approval page shows; never the state, the challenge or a token."""
    session = _session(login_id)
    return {"loginId": login_id, "verificationCode": session["verificationCode"],
            "cliVersion": session["cliVersion"], "platform": session["platform"],
            **_public_status(_status(session, timeutil.now())), "created_at": timeutil.iso(session["createdAt"]),
            "expires_at": timeutil.iso(session["expiresAt"])}


def _refuse_unless(session: dict[str, Any], wanted: str, now: float) -> None:
    """A session in another state than the move needs: 409, with the state (as status reads it)."""
    current = _status(session, now)
    if current == wanted:
        return
    details = {"id": session["loginId"], **_public_status(current)}
    if current == "expired":
        raise LoginSessionExpired(details=details)
    if current == "consumed":
        raise LoginSessionConsumed(details=details)
    if current == "denied":  # the spec's expired, as the status endpoint says
        raise LoginSessionExpired("The user denied this login.", details)
    raise Conflict(f"The login session is {current}.", details)


def _decide(body: DecisionBody, principal: Principal, to_status: str) -> dict[str, Any]:
    if principal.credential != "user":
        raise Forbidden("Only a signed-in user can approve or deny a command-line login.")
    now = int(timeutil.now())
    session = _session(body.loginId)
    _refuse_unless(session, "pending", now)
    if not secrets.compare_digest(session["state"], body.state):
        # Signed in, but without the proof that this browser opened the login's authUrl: not permitted.
        raise Forbidden("The state does not match this login session.",
                        {"id": body.loginId, "reason": "state_mismatch",
                         "fields": [{"field": "state", "in": "body", "reason": "does not match"}]})
    try:
        cli_sessions_table.move(body.loginId, from_status="pending", to_status=to_status, now=now,
                                condition="#st = :state", state=body.state,
                                extra={"userId": principal.subject, "tenantId": principal.tenant_id})
    except WrongState:
        _refuse_unless(_session(body.loginId), "pending", now)  # says what it became meanwhile
        raise
    return {"loginId": body.loginId, **_public_status(to_status)}


def complete(body: DecisionBody, principal: Principal) -> dict[str, Any]:
    return _decide(body, principal, "approved")


def deny(body: DecisionBody, principal: Principal) -> dict[str, Any]:
    return _decide(body, principal, "denied")


def exchange(body: TokenBody, source_ip: str = "") -> dict[str, Any]:
    now = int(timeutil.now())
    session = _session(body.loginId)
    _refuse_unless(session, "approved", now)
    if not secrets.compare_digest(challenge_of(body.codeVerifier), session["codeChallenge"]):
        # The verifier is the exchange's credential (PKCE): a wrong one is a failed proof, not bad input.
        raise Unauthorized("The code verifier does not match the challenge.",
                           {"id": body.loginId, "reason": "code_verifier_mismatch",
                            "fields": [{"field": "codeVerifier", "in": "body", "reason": "does not match"}]})
    user, memberships = users_table.with_memberships(session["userId"])
    membership = next((m for m in memberships if m["tenantId"] == session["tenantId"]), None)
    if user is None or user["status"] != "active" or membership is None:
        raise Forbidden("The approving account can no longer sign in to this tenant.")
    tenant = tenants_table.get(session["tenantId"])
    try:  # the one write that decides which of several concurrent exchanges gets the key
        cli_sessions_table.move(body.loginId, from_status="approved", to_status="consumed", now=now,
                                extra={"consumedAt": now})
    except WrongState:
        raise LoginSessionConsumed(details={"id": body.loginId, "status": "consumed"}) from None
    key_id = ids.new_id("key")
    key = issue_key(tenant_id=session["tenantId"], created_by=user["id"],
                    name=f"CLI {session['cliVersion']} on {session['platform']}"[:100], key_type="cli",
                    environment="Development", scopes=sorted(ROLE_SCOPES[membership["role"]]), key_id=key_id,
                    also=audit.sign_in_entries(session["tenantId"], user["id"], membership["role"], source_ip,
                                               "device_login", apiKeyId=key_id))
    return {"token": key["key"], "keyId": key["id"],
            "user": {k: user[k] for k in ("id", "email", "name")},
            "tenant": {"id": tenant["id"], "name": tenant["name"], "role": membership["role"]}}

