"""Users signing in: registration, login, refresh-token rotation, logout, and "who am I".

Registration never says whether an address has an account: for one that has, the answer is the
same 201 with a body of the same shape (ids that name nothing), and nothing is created or changed.
Registration takes the HTML standard's valid e-mail addresses (ASCII, so no look-alike mixes of
scripts); addresses are compared normalised (email_address.py).

Failed sign-ins are counted per (account, source address): after LOGIN_FAILURES_ALLOWED (5) in a
15-minute window, that address is refused for that account until the window ends; other addresses
are not. Failures are also counted per account and hour from every address: past
LOGIN_ACCOUNT_FAILURES_PER_HOUR (50), attempts on the account from addresses it is not known at
share one attempt every LOGIN_SLOW_SECONDS (5 s). An address is known at an account once the
account's password was given from it (LOGIN_KNOWN_ADDRESS_DAYS, 90, since the last time): its
attempts are never slowed, so failures from elsewhere cannot keep the owner out. A correct password
from an unknown address gets no pass while the account is slowed: it waits for the shared attempt
like any other, since letting it through would tell an attacker, at full speed, which guess was right.

A login opens a session (a refresh-token family, data/sessions_table.py) and returns a
15-minute access token (a service JWT whose `sid` names the session) and a refresh token
`rt_<session id>.<secret>` (in a deployment of several cells `rt_<session id>.<secret>.<region>`: the
region of the account's cell, which keeps the session; another cell answers it 421 there); only the
SHA-256 of refresh tokens is stored. A user's scopes are those of their role in the tenant the token is
for (roles.py), read from the tenant's cell when it is another than the account's (people.py).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from svc_core.auth import cell_routing, rate_limit, tokens
from svc_core.auth.authenticate import email_hash
from svc_core.auth.principal import Principal
from svc_core.auth.roles import ROLE_SCOPES
from svc_core.contracts import cells, email_address
from svc_core.data import api_keys_table, rate_limits_table, sessions_table, tenants_table, users_table
from svc_core.data.common import ConditionFailed, transact
from svc_core.domain import audit, passwords, people, region_preferences
from svc_core.platform import ids, timeutil
from svc_core.platform.config import settings
from svc_core.platform.errors import Forbidden, RateLimited, Unauthorized, ValidationFailed

if TYPE_CHECKING:
    from svc_core.domain.models.accounts import LoginBody, RegisterBody

LOGIN_WINDOW_SECONDS = 15 * 60       # failures per (account, address)
ACCOUNT_WINDOW_SECONDS = 60 * 60     # failures per account, from every address
_REFRESH = re.compile(r"rt_(ses_[0-9A-HJKMNP-TV-Z]{26})\.([A-Za-z0-9_-]{43})(?:\.([a-z]{2}(?:-[a-z]+)+-[0-9]+))?")


def _user_view(user: dict[str, Any]) -> dict[str, Any]:
    return {k: user[k] for k in ("id", "email", "name", "status", "created_at")}


def _tenant_view(tenant: dict[str, Any], role: str) -> dict[str, Any]:
    return {"id": tenant["id"], "name": tenant["name"], "plan": tenant["plan"], "status": tenant["status"],
            "role": role}


def register(body: RegisterBody, source_ip: str = "") -> dict[str, Any]:
    # On first use: only registration needs the tenants module (its outbox and events) in this function.
    from svc_core.domain.tenants import OwnerTaken, create_tenant_with_owner
    _check_region(body.region)
    cell_routing.region(body.region)
    try:
        made = create_tenant_with_owner(tenant_name=f"{body.name}'s workspace", email=body.email,
                                        password=body.password, user_name=body.name, source_ip=source_ip)
    except OwnerTaken as taken:
        # The address has an account: answer with what would have been made, nothing being stored.
        # The same ids made at the same point, the same hash, the same transaction (refused on its
        # condition): the answer's ids and its time tell nothing. The owner's account is untouched.
        made = taken.unsaved
    return {"user": _user_view(made["user"]), "tenant": {**made["tenant"], "role": "owner"}}


def _check_region(region: str | None) -> None:
    """A region the document accepts but with no cell in this deployment is refused, as a preference would be."""
    problem = region and region_preferences.region_problem(region)
    if problem:
        raise ValidationFailed("The region is not available.", {"fields": [
            {"field": "region", "in": "body", "reason": problem}]})


@lru_cache(maxsize=1)
def _dummy_hash() -> str:
    return passwords.hash_password(secrets.token_urlsafe(16))


def _password_matches(stored_hash: str | None, password: str) -> bool:
    # An unknown e-mail still pays one argon2 verification, so it takes as long as a wrong password.
    return passwords.matches(stored_hash or _dummy_hash(), password) and stored_hash is not None


def _refuse(message: str, retry: int, counter: str) -> RateLimited:
    retry = max(1, retry)
    return RateLimited(message, {"retryAfterSeconds": retry, "counter": counter}, {"Retry-After": str(retry)})


def _known_address_key(account: str, source_ip: str) -> str:
    # Hashed: the table keeps no e-mail address, nor which address it signs in from, for 90 days.
    return "login-known#" + hashlib.sha256(f"{account}\n{source_ip}".encode()).hexdigest()


def _admit_sign_in(account: str, source_ip: str, now: float) -> tuple[tuple[str, int], tuple[str, int]]:
    """Refuse the attempt when this address failed too often for this account, or slow it when
    the account failed too often from everywhere and the address is not known at the account.
    Returns the two failure counters (key, window)."""
    cfg = settings()
    pair = (f"login-address#{account}#{source_ip}", rate_limit.window_start(now, LOGIN_WINDOW_SECONDS))
    if rate_limits_table.hits_in(*pair) >= cfg.login_failures_allowed:
        raise _refuse("Too many failed sign-ins for this account from this address; try again later.",
                      pair[1] + LOGIN_WINDOW_SECONDS - int(now), "account_address")
    overall = (f"login-account#{account}", rate_limit.window_start(now, ACCOUNT_WINDOW_SECONDS))
    if (rate_limits_table.hits_in(*overall) >= cfg.login_account_failures_per_hour
            and not rate_limits_table.remembered(_known_address_key(account, source_ip), now)):
        slow = cfg.login_slow_seconds
        hits, start = rate_limits_table.count_request(f"login-slow#{account}", rate_limit.window_start(now, slow), slow)
        if hits > 1:  # one attempt per account in each slow window, from whichever address
            raise _refuse("Sign-ins to this account are slowed after many failures; try again in a few seconds.",
                          start + slow - int(now), "account")
    return pair, overall


def login(body: LoginBody, source_ip: str = "") -> dict[str, Any]:
    now = timeutil.now()
    user, memberships = password_sign_in(body.email, body.password, source_ip, now)
    membership = _membership(people.memberships(user["id"], memberships, body.tenantId), body.tenantId)
    return open_session(user, membership, now, source_ip)


def password_sign_in(email: str, password: str, source_ip: str, now: float
                     ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The active user whose e-mail and password these are, and their memberships, under the
    sign-in throttles (a failure counts against the account from this address, and overall);
    Unauthorized, Forbidden (disabled) or RateLimited otherwise."""
    account = email_address.normalise(email)
    user_id = users_table.id_for_email(email)
    if user_id is None:
        cell_routing.account(email_hash(email))  # an account of another cell: 421 to it
    pair, overall = _admit_sign_in(account, source_ip, now)
    user, memberships = users_table.with_memberships(user_id) if user_id else (None, [])
    if not _password_matches(user["passwordHash"] if user else None, password):
        rate_limits_table.count_request(*pair, LOGIN_WINDOW_SECONDS)
        rate_limits_table.count_request(*overall, ACCOUNT_WINDOW_SECONDS)
        raise Unauthorized("The e-mail address or the password is wrong.")
    # The password was given from this address: from now on it is known at the account.
    rate_limits_table.remember(_known_address_key(account, source_ip),
                               int(now) + settings().login_known_address_days * 86400)
    if user["status"] != "active":
        raise Forbidden("This account is disabled.", {"reason": "account_disabled"})
    return user, memberships


def _membership(memberships: list[dict[str, Any]], tenant_id: str | None) -> dict[str, Any]:
    if tenant_id is None:
        if not memberships:
            raise Forbidden("This account belongs to no tenant.")
        return sorted(memberships, key=lambda m: m["created_at"])[0]
    for membership in memberships:
        if membership["tenantId"] == tenant_id:
            return membership
    raise Forbidden("This account is not a member of that tenant.", {"tenantId": tenant_id})


def _new_refresh_token(session_id: str, kept_in: str | None = None) -> tuple[str, str]:
    token = f"rt_{session_id}.{secrets.token_urlsafe(32)}"
    if cells.multi_cell():
        token += f".{kept_in or cells.here()}"  # where the session is kept, for a cell that does not keep it
    return token, _digest(token)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _access(user: dict[str, Any], membership: dict[str, Any], session_id: str, now: float,
            refresh_token: str, expires_at: int) -> dict[str, Any]:
    tenant = people.tenant(membership)
    if tenant is None or tenant["status"] != "active":
        raise Forbidden("The tenant is not active.", {"tenantId": membership["tenantId"]})
    role = membership["role"]
    token, lifetime = tokens.mint(subject=user["id"], tenant_id=tenant["id"], scopes=ROLE_SCOPES[role],
                                  credential="user", extra={"sid": session_id})
    return {"accessToken": token, "tokenType": "Bearer", "expiresIn": lifetime, "refreshToken": refresh_token,
            "refreshExpiresIn": expires_at - int(now), "user": _user_view(user), "tenant": _tenant_view(tenant, role)}


def open_session(user: dict[str, Any], membership: dict[str, Any], now: float, source_ip: str,
                 method: str = "password") -> dict[str, Any]:
    """A new session of the user in the membership's tenant (the answer /auth/login gives), with its
    sign-in's audit entries (method: how the user proved who they are)."""
    session_id = ids.new_id("ses")
    account_home = people.account_home_elsewhere(user["id"])  # an invitation accepted here by another cell's
    refresh_token, token_hash = _new_refresh_token(session_id, account_home)
    expires_at = int(now) + settings().refresh_token_days * 86400
    # The audit entry belongs to the tenant's home: with the session when that is this cell, else
    # written there first (a sign-in whose entry could not be written is refused, and opens nothing).
    entries = people.written_at_home(membership, audit.sign_in_entries(
        membership["tenantId"], user["id"], membership["role"], source_ip, method, sessionId=session_id))
    session = {"id": session_id, "userId": user["id"], "tenantId": membership["tenantId"], "tokenHash": token_hash,
               "generation": 1, "created_at": timeutil.iso(now), "expiresAt": expires_at}
    if account_home is None:
        sessions_table.create(session, also=entries)
    else:  # the session is kept with the account; the entries are this cell's (the tenant is homed here)
        people.open_session_at_home(account_home, sessions_table.create_entry(session))
        if entries:
            transact(entries)
    return _access(user, membership, session_id, now, refresh_token, expires_at)


def _session_of(refresh_token: str | None) -> tuple[dict[str, Any], str]:
    match = _REFRESH.fullmatch(refresh_token or "")
    if match and match.group(3):
        cell_routing.region(match.group(3))  # the session is kept in the account's cell: 421 to it
    session = sessions_table.get(match.group(1)) if match else None
    if session is None:
        raise Unauthorized("The refresh token is not valid.")
    return session, _digest(refresh_token)


def refresh(refresh_token: str | None, tenant_id: str | None = None) -> dict[str, Any]:
    """A new access token and a new refresh token; the one presented cannot be used again.

    Presenting a refresh token the family has already rotated past means two parties hold
    it: the whole family is revoked, and both are signed out."""
    now = timeutil.now()
    session, presented = _session_of(refresh_token)
    if presented in (session.get("usedHashes") or set()):
        sessions_table.revoke(session["id"], int(now))
        people.mark_ended_where_used(session, int(now))
        raise Unauthorized("This refresh token was already used; the session has been ended.",
                           {"reason": "refresh_token_reused"})
    if session.get("revokedAt") is not None or session["expiresAt"] <= now or presented != session["tokenHash"]:
        raise Unauthorized("The refresh token is not valid.")
    user, memberships = users_table.with_memberships(session["userId"])
    if user is None:  # a session opened at a tenant's cell by an account of another (an invitation accepted)
        user = people.account(session["userId"])
    if user is None or user["status"] != "active":
        raise Forbidden("This account is disabled.", {"reason": "account_disabled"})
    wanted = tenant_id or session.get("currentTenantId") or session["tenantId"]  # no name: the tenant it is in
    membership = _membership(people.memberships(user["id"], memberships, wanted), wanted)
    new_token, new_hash = _new_refresh_token(session["id"])
    try:
        sessions_table.rotate(session["id"], presented, new_hash, int(now), membership["tenantId"])
    except sessions_table.StaleToken:
        # Another refresh with this token won the race: this one is a reuse.
        sessions_table.revoke(session["id"], int(now))
        people.mark_ended_where_used(session, int(now))
        raise Unauthorized("This refresh token was already used; the session has been ended.",
                           {"reason": "refresh_token_reused"}) from None
    return _access(user, membership, session["id"], now, new_token, session["expiresAt"])


def logout(refresh_token: str | None, principal: Principal | None) -> dict[str, Any]:
    """End the session named by the refresh token or by the access token; harmless if ended."""
    now = int(timeutil.now())
    session_id = None
    if refresh_token:
        session, presented = _session_of(refresh_token)
        if presented != session["tokenHash"] and presented not in (session.get("usedHashes") or set()):
            raise Unauthorized("The refresh token is not valid.")
        session_id = session["id"]
    elif principal is not None and principal.session_id:
        session_id = principal.session_id
    if session_id is None:
        raise Unauthorized("Send the refresh token (body or cookie) or a user's access token.")
    session = sessions_table.get(session_id)
    # An access token of an account of another cell, presented at its tenant's cell: the session is
    # ended in the account's cell, which keeps it, and marked here.
    if session is None and principal is not None and people.end_session_elsewhere(principal.subject, session_id, now):
        return {"loggedOut": True, "sessionId": session_id}
    sessions_table.revoke(session_id, now)
    if session is not None:
        people.mark_ended_where_used(session, now)
    return {"loggedOut": True, "sessionId": session_id}


def me(principal: Principal) -> dict[str, Any]:
    tenant = tenants_table.get(principal.tenant_id)
    if principal.credential != "user":
        view = _tenant_view(tenant, "api_key")
        return {"credential": "api_key", "user": None, "tenant": view, "tenants": [view],
                "scopes": sorted(principal.scopes)}
    user, memberships = users_table.with_memberships(principal.subject)
    if user is None:  # an account of another cell, signed in to a tenant of this one
        user = people.account(principal.subject)
    if user is None:
        raise Unauthorized("The user no longer exists.")
    tenants = []
    for membership in sorted(people.memberships(principal.subject, memberships), key=lambda m: m["created_at"]):
        record = people.tenant(membership)
        if record is not None:
            tenants.append(_tenant_view(record, membership["role"]))
    current = next((t for t in tenants if t["id"] == principal.tenant_id), None)
    if current is None:
        raise Unauthorized("The user is no longer a member of this tenant.")
    return {"credential": "user", "user": _user_view(user), "tenant": current, "tenants": tenants,
            "scopes": sorted(principal.scopes)}


def set_user_status(user_id: str, status: str) -> dict[str, Any]:
    """Operator action: disable ("disabled") or re-enable ("active") an account.

    Disabling also ends every sign-in of the user (their access tokens stop at the next request)
    and revokes the user's command-line keys. Other API keys the user created belong to the
    tenant and keep working; the tenant's owners revoke them if they wish.
    """
    if status not in ("active", "disabled"):
        raise ValueError(status)
    users_table.set_status(user_id, status)
    if status == "active":
        return {"userId": user_id, "status": status, "sessionsEnded": 0, "cliKeysRevoked": 0}
    now = int(timeutil.now())
    ended = end_sign_ins(user_id, now)
    _, memberships = users_table.with_memberships(user_id)
    revoked = sum(revoke_cli_keys(user_id, membership["tenantId"], now) for membership in memberships)
    return {"userId": user_id, "status": status, "sessionsEnded": ended, "cliKeysRevoked": revoked}


def end_sign_ins(user_id: str, now: int, tenant_id: str | None = None) -> int:
    """End the user's sign-ins (sessions): every one, or only those that have minted an access token
    for tenant_id. Their access tokens are refused from their next request, and their refresh tokens
    from now. Returns how many were live (sessions already ended, or past the life of any token
    they minted, are left as they are)."""
    ended = 0
    for session_id in sessions_table.ids_for_user(user_id):
        session = sessions_table.get(session_id)
        if session is None or session.get("revokedAt") is not None:
            continue
        if tenant_id is not None and tenant_id not in sessions_table.tenants_of(session):
            continue
        if session["expiresAt"] + settings().jwt_lifetime_seconds <= now:
            continue  # its refresh token is dead, and so is every access token it minted
        sessions_table.revoke(session_id, now)
        people.mark_ended_where_used(session, now)
        ended += 1
    if tenant_id is not None:
        ended += people.end_sessions_elsewhere(user_id, tenant_id, now)
    return ended


def revoke_cli_keys(user_id: str, tenant_id: str, now: int, keep: frozenset[str] | None = None) -> int:
    """Revoke the user's command-line keys (`svc_cli_`, made by their device login) in the tenant;
    with keep, only those holding a scope outside it. Returns how many were revoked."""
    return revoke_keys_of(user_id, tenant_id, now, keep, types=("cli",))["cli"]


def revoke_keys_of(user_id: str, tenant_id: str, now: int, keep: frozenset[str] | None = None,
                   types: tuple[str, ...] | None = None, also=None) -> dict[str, int]:
    """Revoke the keys the user holds in the tenant (keys_held_by: those they created, and those made
    by such a key); with keep, only those holding a scope outside it; with types, only keys of these
    types. `also(key)`: more writes of each key's revocation (its audit entry). Returns how many were
    revoked: {"cli": command-line keys, "other": the rest}."""
    from svc_core.domain.api_keys import directory_entries  # on first use: the key's values leave the directory
    revoked = {"cli": 0, "other": 0}
    for key in keys_held_by(user_id, tenant_id):
        if (types is not None and key["type"] not in types) or (keep is not None and set(key["scopes"]) <= keep):
            continue
        try:
            api_keys_table.revoke(key, now, also=[*directory_entries(key, []), *(also(key) if also else ())])
            revoked["cli" if key["type"] == "cli" else "other"] += 1
        except ConditionFailed:
            pass  # revoked meanwhile
    return revoked


MAX_KEY_CHAIN = 20  # a key made by a key made by a key...: never followed further (no cycle can be made)


def holder_of(record: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> str | None:
    """The person a key acts for: its creator when a user made it, the holder of the key that made it
    when a key did; None for a key no person made (the bootstrap's, an operator's)."""
    creator = record.get("createdBy") or ""
    for _ in range(MAX_KEY_CHAIN):
        if creator.startswith("usr_"):
            return creator
        parent = by_id.get(creator)
        if parent is None:
            return None
        creator = parent.get("createdBy") or ""
    return None


def keys_held_by(user_id: str, tenant_id: str) -> list[dict[str, Any]]:
    """The tenant's unrevoked keys that act for the user (holder_of)."""
    every, after = [], None
    while True:
        keys, after = api_keys_table.list_for_tenant(tenant_id, 100, after)
        every += keys
        if after is None:
            break
    by_id = {key["id"]: key for key in every}
    return [key for key in every if not key.get("revokedAt") and holder_of(key, by_id) == user_id]
