"""API keys: created, listed, rotated and revoked through the API (there is no dashboard).

The full value is returned once, by create (and by rotate for the new value); only an HMAC
of it is stored. A key never holds a scope its creator does not hold.

Managing a key is authorised on the key itself, not only by the route's keys:write
(authorise_key_change, used by rotate and revoke):
- a key may always rotate or revoke itself (`svc logout` revokes the login's own key);
- otherwise the caller must hold every scope of the key: a weaker credential neither receives a
  stronger key's new value nor revokes it;
- a `cli` key belongs to the one who made it (for a device login, the user: createdBy). Only
  they rotate it: the user's own token, the key itself, or another key whose createdBy is that
  user (one read of the caller's key record). Another user's CLI key may be revoked, never
  rotated, and only by a signed-in user (credential "user") with keys:write (an owner or admin)
  who also holds all its scopes.
A `cli` key made through POST /api-keys belongs to its caller (createdBy), as any key does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from svc_core.auth import authenticate, key_format
from svc_core.auth.context import TenantContext
from svc_core.auth.roles import ROLE_SCOPES, ROLES
from svc_core.contracts import rotation
from svc_core.data import api_keys_table, directory_table, users_table
from svc_core.data.common import ConditionFailed
from svc_core.domain import audit
from svc_core.domain.paging import tenant_list_page
from svc_core.platform import ids, timeutil
from svc_core.platform.errors import Conflict, Forbidden, NotFound

if TYPE_CHECKING:
    from svc_core.domain.models.api_keys import ApiKeyCreate, ApiKeyRotate

MAX_LIVE_VALUES = 5   # the current value and at most four in their overlap (as a webhook's secrets)


def _status(record: dict[str, Any], now: float) -> str:
    if record.get("revokedAt") is not None:
        return "revoked"
    if record.get("expiresAt") is not None and now >= record["expiresAt"]:
        return "expired"
    return "active"


def _view(record: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": record["id"], "name": record["name"], "type": record["type"],
        "environment": record["environment"], "scopes": list(record["scopes"]),
        "tenantId": record["tenantId"], "createdBy": record["createdBy"], "hint": record["hint"],
        "status": _status(record, timeutil.now()),
        "created_at": timeutil.iso(record["createdAt"]), "last_used_at": timeutil.iso(record.get("lastUsedAt")),
        "lastUsedIp": record.get("lastUsedIp"),
        "expires_at": timeutil.iso(record.get("expiresAt")), "revoked_at": timeutil.iso(record.get("revokedAt")),
        "rotated_at": timeutil.iso(record.get("rotatedAt")),
        "earlierValues": _earlier_values(record),
    }


def _earlier_values(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The values a rotation replaced that still work (in their overlap), each with its hint (None for
    a value rotated out before hints were kept) and its end; none for a key no longer active."""
    now = timeutil.now()
    if _status(record, now) != "active":
        return []
    return [{"hint": s.get("hint"), "worksUntil": timeutil.iso(s["notAfter"])}
            for s in (record.get("secrets") or [])[1:] if s.get("notAfter") is not None and s["notAfter"] > now]


def directory_entries(record: dict[str, Any], live_secrets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The global directory's writes for a change of the key's values: an item for each value live
    after the change (with its end), none for the values of `record` that are not (ended, revoked)."""
    live = {s["hash"] for s in live_secrets}
    return [*(directory_table.key_entry(s["hash"], record["tenantId"], record["id"], s["notAfter"]) for s in live_secrets),
            *(directory_table.key_removal_entry(s["hash"]) for s in record.get("secrets") or () if s["hash"] not in live)]


def issue_key(*, tenant_id: str, created_by: str, name: str, key_type: str, environment: str,
              scopes: list[str], expires_in_days: int | None = None, key_id: str | None = None,
              also: Sequence[dict[str, Any]] = (), store=api_keys_table) -> dict[str, Any]:
    """Create a key and return its view with the full value (the only time it is shown). `also`:
    more writes of the same transaction (the audit entry of the key, named key_id); the global
    directory's item of the value is one more."""
    now = int(timeutil.now())
    value = key_format.generate(key_type)
    secret_hash = authenticate.hash_key(value)
    expires_at = now + expires_in_days * 86400 if expires_in_days else None
    record = {
        "id": key_id or ids.new_id("key"), "tenantId": tenant_id, "name": name, "type": key_type,
        "environment": environment, "scopes": sorted(scopes), "createdBy": created_by,
        "createdAt": now, "expiresAt": expires_at, "hint": key_format.display_hint(value),
        "secrets": [{"hash": secret_hash, "notAfter": expires_at, "hint": key_format.display_hint(value)}],
        "generation": 1,
    }
    store.create(record, secret_hash, also=[*also, *directory_entries({**record, "secrets": []}, record["secrets"])])
    return {**_view(record), "key": value}


def create_key(ctx: TenantContext, body: ApiKeyCreate, store=api_keys_table) -> dict[str, Any]:
    scopes = sorted(ctx.scopes) if body.scopes is None else body.scopes
    not_held = sorted(set(scopes) - ctx.scopes)
    if not_held:
        raise Forbidden("A key cannot hold scopes its creator does not hold.", {"scopes": not_held})
    key_id = ids.new_id("key")
    # A person's key holds what their role holds, checked in the key's own transaction: a key made
    # while its maker is removed or demoted is never made beyond the role left (docs/organizations.md).
    standing = [users_table.roles_check_entry(ctx.actor, ctx.tenant_id, roles_holding(scopes))] \
        if ctx.principal.credential == "user" else []
    created = {"name": body.name, "type": body.type, "environment": body.environment, "scopes": sorted(scopes),
               "expiresInDays": body.expiresInDays}
    try:
        return issue_key(tenant_id=ctx.tenant_id, created_by=ctx.actor, name=body.name, key_type=body.type,
                         environment=body.environment, scopes=scopes, expires_in_days=body.expiresInDays,
                         key_id=key_id, store=store,
                         also=[*standing, audit.entry(ctx.tenant_id, "api_key.created", "api_key", key_id, ctx=ctx,
                                                      changes=audit.changed({}, created))])
    except ConditionFailed:
        if not standing:
            raise
        raise Forbidden("The caller's role in the tenant no longer holds these scopes.",
                        {"reason": "role_changed"}) from None


def roles_holding(scopes: list[str]) -> list[str]:
    """The roles holding every one of these scopes."""
    return [role for role in ROLES if set(scopes) <= ROLE_SCOPES[role]]


def _record(ctx: TenantContext, key_id: str, store) -> dict[str, Any]:
    record = store.get(ctx.tenant_id, key_id) if ids.is_id(key_id, "key") else None
    if record is None:
        raise NotFound("The API key does not exist.", {"id": key_id, "resource": "api_key"})
    return record


def get_key(ctx: TenantContext, key_id: str, store=api_keys_table) -> dict[str, Any]:
    return _view(_record(ctx, key_id, store))


def list_keys(ctx: TenantContext, limit: int, cursor: str | None, store=api_keys_table) -> dict[str, Any]:
    return tenant_list_page(store, ctx.tenant_id, limit, cursor, id_prefix="key", view=_view)


def _caller_identities(ctx: TenantContext, store) -> set[str]:
    """Who the caller speaks for: its subject, and for an API key also whoever created that key."""
    identities = {ctx.actor}
    if ctx.principal.credential == "api_key":
        caller = store.get(ctx.tenant_id, ctx.actor)
        if caller is not None:
            identities.add(caller["createdBy"])
    return identities


def authorise_key_change(ctx: TenantContext, record: dict[str, Any], action: Literal["rotate", "revoke"],
                         store=api_keys_table) -> None:
    """Raise Forbidden unless the caller may rotate or revoke this key (the rules are in the
    module's docstring). Every operation on an existing key goes through here."""
    if ctx.actor == record["id"]:
        return
    missing = sorted(set(record["scopes"]) - ctx.scopes)
    if missing:
        raise Forbidden(f"Only a credential holding every scope of the key may {action} it.",
                        {"scopes": missing})
    if record["type"] != "cli" or record["createdBy"] in _caller_identities(ctx, store):
        return
    if action == "revoke" and ctx.principal.credential == "user" and "keys:write" in ctx.scopes:
        return
    raise Forbidden(f"A CLI key belongs to its user; another credential may not {action} it.",
                    {"reason": "cli_key_of_another_user", "owner": record["createdBy"]})


def revoke_key(ctx: TenantContext, key_id: str, store=api_keys_table) -> dict[str, Any]:
    """Revoke: every value of the key is refused from its next use. Revoking twice is harmless."""
    record = _record(ctx, key_id, store)
    authorise_key_change(ctx, record, "revoke", store)
    if record.get("revokedAt") is None:
        now = int(timeutil.now())
        try:
            store.revoke(record, now, also=[audit.entry(
                ctx.tenant_id, "api_key.revoked", "api_key", key_id, ctx=ctx,
                changes={"status": {"old": _status(record, now), "new": "revoked"}}), *directory_entries(record, [])])
            record = {**record, "revokedAt": now}
        except ConditionFailed:
            record = _record(ctx, key_id, store)  # revoked meanwhile by another request
        authenticate.forget_key(key_id)
    return _view(record)


def rotate_key(ctx: TenantContext, key_id: str, body: ApiKeyRotate, store=api_keys_table) -> dict[str, Any]:
    """A new value; every earlier live value works until now + overlap at the latest (and never past
    the key's own expiry): 0 ends them all at once (contracts/rotation.py)."""
    record = _record(ctx, key_id, store)
    authorise_key_change(ctx, record, "rotate", store)
    now = int(timeutil.now())
    if _status(record, now) != "active":
        raise Conflict("Only an active key can be rotated.", {"id": key_id, "status": _status(record, now)})
    value = key_format.generate(record["type"])
    ends_by = now + body.overlapSeconds
    if record.get("expiresAt") is not None:
        ends_by = min(ends_by, record["expiresAt"])
    if 1 + len(rotation.still_live(record["secrets"], now, ends_by, "notAfter")) > MAX_LIVE_VALUES:
        raise Conflict(f"At most {MAX_LIVE_VALUES - 1} earlier values may work at once; rotate with a shorter "
                       "overlapSeconds (0 ends the earlier ones now), or wait until one ends.",
                       {"id": key_id, "limit": MAX_LIVE_VALUES})
    changes = {"generation": {"old": api_keys_table.generation(record), "new": api_keys_table.generation(record) + 1},
               "earlierValuesEndAt": {"old": None, "new": timeutil.iso(max(ends_by, now))}}
    new_hash = authenticate.hash_key(value)
    # The values live after the rotation, as the table keeps them (contracts/rotation.py).
    live = rotation.rotated(record["secrets"], {"hash": new_hash, "notAfter": record.get("expiresAt"),
                                                "hint": key_format.display_hint(value)}, now, ends_by, "notAfter")
    try:
        updated = store.rotate(record, new_hash, key_format.display_hint(value), ends_by, now,
                               also=[audit.entry(ctx.tenant_id, "api_key.rotated", "api_key", key_id, ctx=ctx,
                                                 changes=changes), *directory_entries(record, live)])
    except ConditionFailed:
        raise Conflict("The key changed while it was being rotated; read it again.", {"id": key_id}) from None
    authenticate.forget_key(key_id)
    return {**_view(updated), "key": value}
