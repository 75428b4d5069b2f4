"""A person's account and their tenants in different cells (docs/regions-and-storage.md, "People across
cells").

An account lives in one cell, its home (the region it registered in; an invitee's new account: the
inviting tenant's cell): its profile, password, e-mail claim and sessions. A membership (the role, the
name and address as they were when the person joined) is the tenant's content: it lives in the
tenant's home and moves with the tenant. The directory holds the facts that join them: the account's
home (`USER#<id>`, `HOME`) and that the person is a member of a tenant (`USER#<id>`, `MEMBER#<tenant>`).

So the account's cell, which checks the password and keeps the session, reads a membership of a
tenant homed elsewhere from that tenant's home, and writes the sign-in's audit entry there; the
tenant's cell reads the account of a person homed elsewhere when they join it, and ends their
sign-ins there when they leave. In a deployment of one cell every read below is this cell's own.
"""

from __future__ import annotations

from typing import Any

from svc_core.contracts import cells
from svc_core.data import directory_table, tenants_table, users_table
from svc_core.platform.errors import ServiceUnavailable
from svc_core.platform.log import logger


def _peer():
    """The module reaching other cells, on first use: a deployment of one cell never loads it."""
    from svc_core.data import peer_cell
    return peer_cell


def home_of_tenant(tenant_id: str) -> str:
    """The region of the cell holding the tenant (this one in a deployment of one cell)."""
    if not cells.multi_cell():
        return cells.here()
    home = directory_table.tenant_home(tenant_id)
    return (home or {}).get("homeRegion") or cells.here()


def _unreachable(region: str, what: str) -> ServiceUnavailable:
    return ServiceUnavailable(f"The cell in {region}, which holds {what}, could not be reached; retry shortly.",
                              {"region": region})


def memberships(user_id: str, here: list[dict[str, Any]], wanted: str | None = None) -> list[dict[str, Any]]:
    """Every membership of the user, each with `homeRegion` (the cell holding its tenant): `here` (the
    user's memberships in this cell's users table) for the tenants homed here, and in a deployment of
    several cells, those of tenants homed elsewhere read from their homes. `wanted`: a tenant asked
    for by name, looked for in its home even before the directory's copy here lists the membership
    (one made a moment ago in another cell). A membership whose home cannot be reached is left out
    (and logged): the others still sign in."""
    if not cells.multi_cell():
        return [{**m, "homeRegion": cells.here()} for m in here]
    found: dict[str, dict[str, Any]] = {}
    local = {m["tenantId"]: m for m in here}
    tenant_ids = list(dict.fromkeys([*local, *directory_table.tenants_of_user(user_id), *([wanted] if wanted else [])]))
    for tenant_id in tenant_ids:
        home = home_of_tenant(tenant_id)
        if home == cells.here():
            if tenant_id in local:
                found[tenant_id] = {**local[tenant_id], "homeRegion": home}
            continue
        try:
            membership = _peer().membership(_peer().place(home), user_id, tenant_id)
        except Exception:  # that cell is down or unknown: the other memberships still count
            logger.warning("a membership's cell could not be read", extra={"tenant_id": tenant_id, "region": home})
            continue
        if membership is not None:
            found[tenant_id] = {**membership, "homeRegion": home}
    return list(found.values())


def tenant(membership: dict[str, Any]) -> dict[str, Any] | None:
    """The tenant item of a membership, from the cell holding it."""
    home = membership.get("homeRegion") or cells.here()
    if home == cells.here():
        return tenants_table.get(membership["tenantId"])
    try:
        return _peer().tenant(_peer().place(home), membership["tenantId"])
    except Exception as exc:
        raise _unreachable(home, "the tenant") from exc


def account(user_id: str) -> dict[str, Any] | None:
    """The user's profile (no password hash when read from another cell), from the account's home."""
    found = users_table.get(user_id)
    if found is not None or not cells.multi_cell():
        return found
    home = (directory_table.user_home(user_id) or {}).get("homeRegion")
    if not home or home == cells.here():
        return None
    try:
        return _peer().account(_peer().place(home), user_id)
    except Exception as exc:
        raise _unreachable(home, "the account") from exc


def open_session_at_home(home: str, entry: dict[str, Any]) -> None:
    """A new session of an account of another cell (an invitation accepted here), written in that
    cell: sessions are kept with the account, wherever it signs in."""
    write_in(home, [entry], "the account's sessions")


def write_in(region: str, entries: list[dict[str, Any]], what: str) -> None:
    """This cell's TransactWriteItems entries, applied at once to the same tables of another cell."""
    try:
        _peer().write(_peer().place(region), entries)
    except Exception as exc:
        raise _unreachable(region, what) from exc


def user_id_for_email(email: str) -> str | None:
    """The id of the account of this address, in this cell or (through the directory) in any other."""
    found = users_table.id_for_email(email)
    if found is not None or not cells.multi_cell():
        return found
    from svc_core.auth.authenticate import email_hash
    claim = directory_table.user_by_email_hash(email_hash(email))
    return claim["userId"] if claim else None


def written_at_home(membership: dict[str, Any], entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The audit entries of a sign-in: returned to be written with the session when the tenant is
    homed here; written in the tenant's home now otherwise (and [] returned)."""
    home = membership.get("homeRegion") or cells.here()
    if home == cells.here() or not entries:
        return entries
    try:
        _peer().write(_peer().place(home), entries)
    except Exception as exc:
        raise _unreachable(home, "the tenant's audit log") from exc
    return []


def account_home_elsewhere(user_id: str) -> str | None:
    """The region of the account's cell when it is another than this one."""
    if not cells.multi_cell():
        return None
    home = (directory_table.user_home(user_id) or {}).get("homeRegion")
    return home if home and home != cells.here() else None


def end_sessions_elsewhere(user_id: str, tenant_id: str, now: int) -> int:
    """A member leaving (or demoted in) a tenant of this cell whose account lives in another: their
    sessions there that minted a token for the tenant are ended. How many were live (0 for an
    account of this cell)."""
    home = account_home_elsewhere(user_id)
    if home is None:
        return 0
    session_ids = _peer().live_session_ids(_peer().place(home), user_id, tenant_id, now)
    for session_id in session_ids:
        _end_there_and_here(home, session_id, now)
    return len(session_ids)


def end_session_elsewhere(user_id: str, session_id: str, now: int) -> bool:
    """One session of an account of another cell, ended there (a sign-out presented at its tenant's
    cell); whether the account lives elsewhere."""
    home = account_home_elsewhere(user_id)
    if home is None:
        return False
    _end_there_and_here(home, session_id, now)
    return True


def _end_there_and_here(home: str, session_id: str, now: int) -> None:
    """Ended in the account's cell, which keeps the session, and marked ended here, where its access
    tokens for this cell's tenants are presented."""
    from svc_core.data import rate_limits_table, sessions_table
    from svc_core.data.common import transact
    try:
        _peer().write(_peer().place(home), sessions_table.revoke_entries(session_id, now))
    except Exception as exc:
        raise _unreachable(home, "the account's sessions") from exc
    transact([rate_limits_table.revoke_item(session_id, now)])


def mark_ended_where_used(session: dict[str, Any], now: int) -> None:
    """A session ended in the account's cell: its access tokens are refused at once in the homes of the
    tenants it minted them for too (each cell checks the mark in its own rate-limit table)."""
    if not cells.multi_cell():
        return
    from svc_core.data import rate_limits_table, sessions_table
    regions = {home_of_tenant(t) for t in sessions_table.tenants_of(session)} - {cells.here()}
    for region in sorted(regions):
        try:
            _peer().write(_peer().place(region), [rate_limits_table.revoke_item(session["id"], now)])
        except Exception:  # that cell is down: its tokens end with their 15 minutes there
            logger.warning("a session's end could not be marked in a cell", extra={"region": region})


# ---- the account's sessions, kept in its cell --------------------------------------------------------

def session_page(user_id: str, limit: int, after: str | None, now: float) -> tuple[list[dict[str, Any]], str | None]:
    """A page of the account's open sessions, newest first, from the account's cell."""
    from svc_core.data import sessions_table
    home = account_home_elsewhere(user_id)
    if home is None:
        return sessions_table.page_for_user(user_id, limit, after, now)
    try:
        return _peer().session_page(_peer().place(home), user_id, limit, after, now)
    except Exception as exc:
        raise _unreachable(home, "the account's sessions") from exc


def open_sessions(user_id: str, now: float) -> list[dict[str, Any]]:
    """Every open session of the account."""
    found, after = [], None
    while True:
        page, after = session_page(user_id, 100, after, now)
        found += page
        if after is None:
            return found


def session_of(user_id: str, session_id: str) -> dict[str, Any] | None:
    """One session, if it is the account's (None for another account's: never told apart from none)."""
    from svc_core.data import sessions_table
    home = account_home_elsewhere(user_id)
    if home is None:
        found = sessions_table.get(session_id)
    else:
        try:
            found = _peer().session(_peer().place(home), session_id)
        except Exception as exc:
            raise _unreachable(home, "the account's sessions") from exc
    return found if found is not None and found.get("userId") == user_id else None


def end_session(session: dict[str, Any], now: int) -> None:
    """End a session in the account's cell, which keeps it: its refresh token at once, its access tokens
    on their next request, here and in the homes of the tenants it minted them for."""
    from svc_core.data import sessions_table
    home = account_home_elsewhere(session["userId"])
    if home is None:
        sessions_table.revoke(session["id"], now)
    else:
        _end_there_and_here(home, session["id"], now)
    mark_ended_where_used(session, now)


TRANSACTION_ITEMS = 100   # DynamoDB's most items in one TransactWriteItems


def commit_with_audit(items: list[dict[str, Any]], entries: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """A change of the account (`items`, this cell's) and its audit entries, each (membership, entry) for
    the membership's tenant: the entries of tenants homed here in the change's own transaction (past
    its item limit, in the next ones), then those of tenants homed elsewhere written in their homes.
    ConditionFailed: the change was not made, and no entry written. A home that cannot be reached is
    logged and left: the account's change stands (a person locked out of their account by another
    cell's outage would be worse than an entry missing there)."""
    from svc_core.data.common import transact
    here = [entry for membership, entry in entries if (membership.get("homeRegion") or cells.here()) == cells.here()]
    writes = [*items, *here]
    for start in range(0, len(writes), TRANSACTION_ITEMS):
        transact(writes[start:start + TRANSACTION_ITEMS])
    for membership, entry in entries:
        if (membership.get("homeRegion") or cells.here()) == cells.here():
            continue
        try:
            written_at_home(membership, [entry])
        except ServiceUnavailable:
            logger.warning("an account change's audit entry could not be written in its tenant's cell",
                           extra={"tenant_id": membership["tenantId"], "region": membership.get("homeRegion")})
