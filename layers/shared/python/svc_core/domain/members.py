"""A tenant's members: the list, a role changed, a member removed, a member leaving, ownership
transferred (docs/organizations.md).

The rules, for every change:
- the last owner is never removed, demoted, nor leaves: the tenant's `owners` counter is changed in
  the change's own transaction and never goes below one (409 CONFLICT, reason last_owner), so two
  owners demoting each other at once leave one;
- making, unmaking or removing an owner needs a signed-in owner (403, reason owner_required): not an
  admin, not an API key whatever its scopes; the caller's ownership is checked in the same transaction;
- otherwise the caller must hold every scope of the member's role and of the role given
  (roles.may_grant; 403, reason role_exceeds_caller): nobody hands out or takes away more than they hold.

Every change writes its event (member.removed, member.role_changed) and its audit entry in its own
transaction. Then the person's credentials follow the change: a removed member's sign-ins that have
tokens for the tenant end (their access tokens are refused from the next request, their refresh tokens
at once) and their command-line keys in it are revoked; a member given a role with fewer scopes gets the
same for their sign-ins (their tokens carry the old role's scopes), and their command-line keys holding
a scope the new role lacks are revoked. The same holds for every other key they hold (made by them, or
by a key they hold): a key acts for its holder and never does more than the holder may, so removal
revokes them all and a demotion those holding a scope the new role lacks (accounts.keys_held_by).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svc_core.auth.context import TenantContext
from svc_core.auth.roles import ROLE_SCOPES, may_grant
from svc_core.contracts import cursors, events
from svc_core.data import directory_table, outbox_table, tenants_table, users_table
from svc_core.data.common import ConditionFailed, transact
from svc_core.domain import accounts, audit
from svc_core.domain.paging import id_page
from svc_core.platform import ids, timeutil
from svc_core.platform.errors import Conflict, Forbidden, NotFound

if TYPE_CHECKING:
    from svc_core.domain.models.members import MemberRoleChange, OwnershipTransfer

USER_PREFIX = "usr"


def _not_found(user_id: str) -> NotFound:
    return NotFound("No such member of this tenant.", {"id": user_id, "resource": "member"})


def _member(tenant_id: str, user_id: str) -> dict[str, Any]:
    found = users_table.membership(user_id, tenant_id) if ids.is_id(user_id, USER_PREFIX) else None
    if found is None:
        raise _not_found(user_id)
    return found


def _view(membership: dict[str, Any]) -> dict[str, Any]:
    email, name = membership.get("email"), membership.get("name")
    if email is None and name is None:  # a membership written before it carried them
        user = users_table.get(membership["userId"]) or {}
        email, name = user.get("email"), user.get("name")
    return {"userId": membership["userId"], "email": email, "name": name, "role": membership["role"],
            "joined_at": membership["created_at"]}


def list_members(ctx: TenantContext, limit: int, cursor: str | None) -> dict[str, Any]:
    """The tenant's members in user-id order (the order their accounts were made)."""
    found, last = users_table.members_of(ctx.tenant_id, limit, cursors.id_after(cursor, USER_PREFIX))
    return id_page(found, last, _view)


# ---- who may change what --------------------------------------------------------------------


def _signed_in_owner(ctx: TenantContext) -> bool:
    if ctx.principal.credential != "user":
        return False
    mine = users_table.membership(ctx.actor, ctx.tenant_id)
    return mine is not None and mine["role"] == "owner"


def _authorise(ctx: TenantContext, *roles: str) -> list[dict[str, Any]]:
    """Refuse unless the caller may take away or give these roles. Returns the checks to put in the
    change's transaction (an owner's change: that the caller is still an owner)."""
    if "owner" in roles:
        if not _signed_in_owner(ctx):
            raise Forbidden("Only a signed-in owner may make, unmake or remove an owner.",
                            {"reason": "owner_required"})
        return [users_table.role_check_entry(ctx.actor, ctx.tenant_id, "owner")]
    for role in roles:
        if not may_grant(ctx.scopes, role):
            raise Forbidden(f"The {role} role holds scopes the caller does not hold.",
                            {"reason": "role_exceeds_caller", "role": role,
                             "scopes": sorted(ROLE_SCOPES[role] - ctx.scopes)})
    return []


def _commit(ctx: TenantContext, writes: list[dict[str, Any]], member: dict[str, Any], *, owners_fall: bool,
            by_owner: bool) -> None:
    """The change's transaction; when it fails, the reason: the member gone (404) or changed meanwhile
    (409), the last owner (409 last_owner), or the caller no longer an owner (403)."""
    try:
        transact(writes)
        return
    except ConditionFailed:
        pass
    current = users_table.membership(member["userId"], ctx.tenant_id)
    if current is None:
        raise _not_found(member["userId"])
    if current["role"] != member["role"]:
        raise Conflict("The member's role changed meanwhile; read it again.",
                       {"id": member["userId"], "resource": "member"})
    tenant = (tenants_table.get_consistent(ctx.tenant_id) or {}) if owners_fall else {}
    if owners_fall and tenant.get("owners", tenants_table.COUNTER_DEFAULTS["owners"]) <= 1:
        raise Conflict("A tenant keeps at least one owner: make another member an owner first.",
                       {"id": member["userId"], "resource": "member", "reason": "last_owner"})
    if by_owner and not _signed_in_owner(ctx):
        raise Forbidden("Only a signed-in owner may make, unmake or remove an owner.", {"reason": "owner_required"})
    raise Conflict("The tenant's members changed meanwhile; try again.", {"id": member["userId"], "resource": "member"})


def _event(ctx: TenantContext, event_type: str, data: dict[str, Any], now: float) -> dict[str, Any]:
    return outbox_table.put_event_item(events.new_event(event_type, ctx.tenant_id, data), now)


# ---- role changes -----------------------------------------------------------------------------


def _role_writes(ctx: TenantContext, member: dict[str, Any], role: str, now: float) -> list[dict[str, Any]]:
    """The membership's new role and its event (the owners counter is the caller's to add)."""
    user_id = member["userId"]
    return [users_table.set_role_entry(user_id, ctx.tenant_id, role, member["role"], timeutil.iso(now)),
            _event(ctx, "member.role_changed", {"userId": user_id, "role": role, "previousRole": member["role"]}, now)]


def _key_revoked_entry(ctx: TenantContext, now: float):
    """The audit entry of each key a member's change revokes, as DELETE /api-keys/:id writes it."""
    def entry(key: dict[str, Any]) -> list[dict[str, Any]]:
        old = "expired" if key.get("expiresAt") is not None and now >= key["expiresAt"] else "active"
        return [audit.entry(ctx.tenant_id, "api_key.revoked", "api_key", key["id"], ctx=ctx, now=now,
                            changes={"status": {"old": old, "new": "revoked"}})]
    return entry


def _credentials_follow(ctx: TenantContext, user_id: str, old_role: str, new_role: str, now: float) -> None:
    """A role with fewer scopes: the sign-ins holding tokens of the old role end, and every key the
    person holds (accounts.keys_held_by: any type) holding a scope the new role lacks is revoked. A role
    with more: the next refresh has them (a key keeps its own scopes)."""
    if ROLE_SCOPES[old_role] <= ROLE_SCOPES[new_role]:
        return
    accounts.end_sign_ins(user_id, int(now), ctx.tenant_id)
    accounts.revoke_keys_of(user_id, ctx.tenant_id, int(now), keep=ROLE_SCOPES[new_role],
                            also=_key_revoked_entry(ctx, now))


def change_role(ctx: TenantContext, user_id: str, body: MemberRoleChange) -> dict[str, Any]:
    member = _member(ctx.tenant_id, user_id)
    old, new = member["role"], body.role
    checks = _authorise(ctx, old, new)
    if old == new:
        return _view(member)
    if user_id == ctx.actor:
        checks = []  # the caller's own membership: its change is conditional on its role already
    now = timeutil.now()
    writes = [*_role_writes(ctx, member, new, now), *checks,
              audit.entry(ctx.tenant_id, "member.role_changed", "user", user_id, ctx=ctx,
                          changes={"role": {"old": old, "new": new}}, now=now)]
    if old == "owner":
        writes.append(tenants_table.count_entry(ctx.tenant_id, "owners", -1, at_least=1))
    elif new == "owner":
        writes.append(tenants_table.count_entry(ctx.tenant_id, "owners", 1))
    _commit(ctx, writes, member, owners_fall=old == "owner", by_owner="owner" in (old, new))
    _credentials_follow(ctx, user_id, old, new, now)
    return _view({**member, "role": new})


def transfer_ownership(ctx: TenantContext, body: OwnershipTransfer) -> dict[str, Any]:
    """The member named becomes an owner and the caller, a signed-in owner, an admin: one transaction."""
    if not _signed_in_owner(ctx):
        raise Forbidden("Only a signed-in owner may transfer the ownership.", {"reason": "owner_required"})
    if body.userId == ctx.actor:
        raise Conflict("The caller is the owner already: name another member.",
                       {"id": body.userId, "resource": "member", "reason": "same_user"})
    target = _member(ctx.tenant_id, body.userId)
    caller = _member(ctx.tenant_id, ctx.actor)
    now = timeutil.now()
    writes = _role_writes(ctx, caller, "admin", now)
    if target["role"] == "owner":  # an owner already: only the caller steps down
        writes.append(tenants_table.count_entry(ctx.tenant_id, "owners", -1, at_least=1))
    else:  # one owner for another: the count stays
        writes += _role_writes(ctx, target, "owner", now)
    writes.append(audit.entry(ctx.tenant_id, "ownership.transferred", "user", target["userId"], ctx=ctx,
                              changes={"previousOwner": ctx.actor, "newOwner": target["userId"]}, now=now))
    _commit(ctx, writes, target, owners_fall=target["role"] == "owner", by_owner=True)
    _credentials_follow(ctx, ctx.actor, "owner", "admin", now)
    return {"previousOwner": _view({**caller, "role": "admin"}), "newOwner": _view({**target, "role": "owner"})}


# ---- removal and leaving -----------------------------------------------------------------------


def remove_member(ctx: TenantContext, user_id: str) -> dict[str, Any]:
    member = _member(ctx.tenant_id, user_id)
    checks = _authorise(ctx, member["role"])
    return _remove(ctx, member, [] if user_id == ctx.actor else checks, "member.removed")


def leave(ctx: TenantContext) -> dict[str, Any]:
    """The signed-in caller leaves the tenant (an API key belongs to the tenant: it has nothing to leave)."""
    if ctx.principal.credential != "user":
        raise Forbidden("Only a signed-in user can leave a tenant.", {"reason": "user_required"})
    return _remove(ctx, _member(ctx.tenant_id, ctx.actor), [], "member.left")


def _remove(ctx: TenantContext, member: dict[str, Any], checks: list[dict[str, Any]], action: str) -> dict[str, Any]:
    """The membership ends, a seat is freed (and an owner counted off), with the event and the audit
    entry; then the member's sign-ins for the tenant end and their command-line keys in it are revoked."""
    user_id, role = member["userId"], member["role"]
    now = timeutil.now()
    counts = [tenants_table.Count("seatsUsed", -1)]
    if role == "owner":
        counts.append(tenants_table.Count("owners", -1, at_least=1))
    _commit(ctx, [users_table.delete_membership_entry(user_id, ctx.tenant_id, role),
                  directory_table.membership_removal_entry(user_id, ctx.tenant_id),
                  tenants_table.counts_entry(ctx.tenant_id, *counts), *checks,
                  _event(ctx, "member.removed", {"userId": user_id, "role": role,
                                                 "reason": "left" if action == "member.left" else "removed"}, now),
                  audit.entry(ctx.tenant_id, action, "user", user_id, ctx=ctx, changes={"role": role}, now=now)],
            member, owners_fall=role == "owner", by_owner=bool(checks))
    ended = accounts.end_sign_ins(user_id, int(now), ctx.tenant_id)
    revoked = accounts.revoke_keys_of(user_id, ctx.tenant_id, int(now),
                                      also=_key_revoked_entry(ctx, now))
    return {"userId": user_id, "removed": True, "sessionsEnded": ended, "cliKeysRevoked": revoked["cli"],
            "apiKeysRevoked": revoked["other"]}
