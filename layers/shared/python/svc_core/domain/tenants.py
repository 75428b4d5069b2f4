"""Tenants: created with their owner (registration, the bootstrap), by a signed-in user, read by
their members, their settings changed by owners and admins, their plan and status by operators."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svc_core.auth import authenticate, tenant_policy
from svc_core.auth.context import TenantContext
from svc_core.auth.principal import Principal
from svc_core.contracts import cells, events, plans
from svc_core.data import directory_table, outbox_table, tenants_table, users_table
from svc_core.data.common import ConditionFailed, transact
from svc_core.domain import audit, people
from svc_core.domain.passwords import hash_password
from svc_core.platform import ids, timeutil
from svc_core.platform.config import settings
from svc_core.platform.errors import Conflict, Forbidden, NotFound, Unauthorized

if TYPE_CHECKING:
    from svc_core.domain.models.tenants import SettingsPatch, TenantCreate


class OwnerTaken(Conflict):
    """The address (or the provider account) has a user already; `unsaved` is what would have been
    made, {tenant, user}: ids that name nothing, made the same way as the ids of a tenant that was."""

    def __init__(self, message: str, details: dict[str, Any], unsaved: dict[str, Any]) -> None:
        super().__init__(message, details)
        self.unsaved = unsaved


def create_tenant_with_owner(*, tenant_name: str, email: str, user_name: str, password: str | None = None,
                             federated: tuple[str, str] | None = None, source_ip: str = "") -> dict[str, Any]:
    """A tenant, its owner, both creation events and the audit entry (tenant.created, by the new
    owner from source_ip), in one transaction.

    The owner signs in with a password (their e-mail address is claimed, uniquely) or with an
    identity provider's account, federated = (issuer, subject) (claimed, uniquely, instead).
    OwnerTaken (a Conflict) when the address or the provider account is taken already."""
    now = timeutil.now()
    stamp = timeutil.iso(now)
    # Both ids before any work (the password's hash takes a while): whether the transaction then
    # stores them or not, they carry the same moment, so an answer's ids tell nothing (register).
    user_id, tenant_id = ids.new_id("usr"), ids.new_id("ten")
    user = {"id": user_id, "email": email, "name": user_name, "status": "active", "created_at": stamp}
    # The user's first tenant: it counts against TENANTS_PER_USER and has the user's welcome credit.
    first_tenant = {"tenantsCreated": 1, "welcomeCreditTenant": tenant_id}
    if password is not None:
        user_items = users_table.put_new({**user, **first_tenant, "passwordHash": hash_password(password)})
    else:
        user_items = users_table.put_new_federated({**user, **first_tenant}, *federated)
    # The global directory learns the tenant, the user (and the keyed hash of the address they claim)
    # and the membership in the same transaction; all of them are homed in this cell.
    home = cells.here()
    user_items += directory_table.user_entries(user_id, authenticate.email_hash(email) if password is not None
                                               else None, home)
    tenant = _new_tenant(tenant_id, tenant_name, user["id"], stamp, welcome_grant=True)
    tenant_view = _event_data(tenant)
    try:
        transact([
            tenants_table.put_new(tenant), directory_table.tenant_entry(tenant_id, home), *user_items,
            users_table.put_membership(user["id"], tenant["id"], "owner", stamp, email=email, name=user_name),
            directory_table.membership_entry(user_id, tenant_id),
            outbox_table.put_event_item(events.new_event("tenant.created", tenant["id"], tenant_view), now),
            outbox_table.put_event_item(events.new_event("user.created", tenant["id"], user), now),
            audit.entry(tenant_id, "tenant.created", "tenant", tenant_id, actor={"type": "user", "id": user_id},
                        source_ip=source_ip, changes=audit.changed({}, {"name": tenant_name, "plan": "free"}),
                        now=now),
        ])
    except ConditionFailed:
        what = "e-mail address" if password is not None else "identity-provider account"
        raise OwnerTaken(f"A user with this {what} already exists.", {"field": "email" if password else "token"},
                         {"tenant": tenant_view, "user": user}) from None
    return {"tenant": tenant_view, "user": user}


def _new_tenant(tenant_id: str, name: str, owner_id: str, stamp: str, *, welcome_grant: bool) -> dict[str, Any]:
    """A new tenant's item: on the free plan, its counters at their start, and whether its credit
    account opens with the welcome credit (billing_ledger.ensure_account): its owner's first only."""
    # homeRegion: the cell it lives in (a multi-cell deployment), its preferences' primaryRegion by default.
    home = {"homeRegion": cells.here()} if cells.multi_cell() else {}
    return {"id": tenant_id, "name": name, "plan": "free", "status": "active", "ownerId": owner_id,
            "created_at": stamp, "updated_at": stamp, "welcomeGrant": welcome_grant, **home,
            **tenants_table.COUNTER_DEFAULTS}


def _event_data(tenant: dict[str, Any]) -> dict[str, Any]:
    """What tenant.created says of the tenant."""
    return {k: tenant[k] for k in ("id", "name", "plan", "status", "created_at")}


# ---- the tenants API ---------------------------------------------------------------------


DEFAULT_SETTINGS: dict[str, Any] = {"displayName": None, "defaultProjectLanguage": None, "ipAllowlist": [],
                                    "billingEmail": None, "timezone": "UTC"}


def _view(tenant: dict[str, Any], role: str) -> dict[str, Any]:
    return {"id": tenant["id"], "name": tenant["name"], "plan": tenant["plan"], "status": tenant["status"],
            "role": role, "settings": {**DEFAULT_SETTINGS, **(tenant.get("settings") or {})},
            "planDetails": plans.describe(tenant["plan"]), "created_at": tenant["created_at"],
            "updated_at": tenant.get("updated_at", tenant["created_at"])}


def _memberships_of(principal: Principal) -> dict[str, dict[str, Any]]:
    """The tenants the caller may see, with the caller's membership of each (in whichever cell it is)."""
    if principal.credential != "user":
        return {principal.tenant_id: {"tenantId": principal.tenant_id, "role": "api_key"}}  # a key: one tenant
    _, memberships = users_table.with_memberships(principal.subject)
    return {m["tenantId"]: m for m in people.memberships(principal.subject, memberships)}


def _roles_of(principal: Principal) -> dict[str, str]:
    return {tenant_id: m["role"] for tenant_id, m in _memberships_of(principal).items()}


def _tenant_of(membership: dict[str, Any]) -> dict[str, Any] | None:
    if (membership.get("homeRegion") or cells.here()) == cells.here():
        return tenants_table.get_consistent(membership["tenantId"])
    return people.tenant(membership)


def list_tenants(ctx: TenantContext) -> dict[str, Any]:
    memberships = _memberships_of(ctx.principal)
    found = [t for t in (_tenant_of(m) for m in memberships.values()) if t is not None]
    found.sort(key=lambda t: t["created_at"])
    return {"items": [_view(t, memberships[t["id"]]["role"]) for t in found], "nextCursor": None}


def get_tenant(ctx: TenantContext, tenant_id: str) -> dict[str, Any]:
    membership = _memberships_of(ctx.principal).get(tenant_id)
    role = membership and membership["role"]
    tenant = _tenant_of(membership) if membership else None
    if tenant is None:  # not a member: as absent as a tenant that does not exist
        raise NotFound("No such tenant.", {"id": tenant_id, "resource": "tenant"})
    return _view(tenant, role)


CREATE_ATTEMPTS = 4   # a creation refused because another one of the same user's came first reads again


def create_tenant(ctx: TenantContext, body: TenantCreate) -> dict[str, Any]:
    """A new tenant owned by the signed-in caller, with its creation event and audit entry, in one transaction.

    At most TENANTS_PER_USER per user (their registration's included), counted on the user's
    profile in the same transaction. The welcome credit goes to the user's first tenant only, also
    claimed on the profile in that transaction. tenant.created is recorded in the new tenant and in
    the tenant the caller's token is for (whose webhooks can receive it: the new one has none yet)."""
    if ctx.principal.credential != "user":
        raise Forbidden("Only a signed-in user can create a tenant (an API key belongs to one tenant).")
    user_id, ceiling = ctx.principal.subject, settings().tenants_per_user
    for _ in range(CREATE_ATTEMPTS):
        creator, memberships = users_table.with_memberships(user_id)
        if creator is None:
            raise Unauthorized("The user no longer exists.")
        counted = creator.get("tenantsCreated")
        # A profile from before tenants were counted: its owner registered with a tenant (which has its
        # welcome credit) and may have made more, each owned since; those are counted.
        first = counted is not None and "welcomeCreditTenant" not in creator
        if counted is None:
            counted = max(1, sum(m["role"] == "owner" for m in memberships))
        if counted >= ceiling:
            raise Forbidden(f"A user may create at most {ceiling} tenants (the one made at registration included).",
                            {"limit": ceiling, "reason": "tenant_limit"})
        now = timeutil.now()
        stamp = timeutil.iso(now)
        tenant = _new_tenant(ids.new_id("ten"), body.name, user_id, stamp, welcome_grant=first)
        event_data = _event_data(tenant)
        try:
            transact([
                tenants_table.put_new(tenant),
                users_table.tenant_created_entry(user_id, counted=counted, at_most=ceiling,
                                                 welcome_tenant=tenant["id"] if first else None),
                users_table.put_membership(user_id, tenant["id"], "owner", stamp,
                                           email=creator.get("email"), name=creator.get("name")),
                directory_table.tenant_entry(tenant["id"], cells.here()),
                directory_table.membership_entry(user_id, tenant["id"]),
                outbox_table.put_event_item(events.new_event("tenant.created", tenant["id"], event_data), now),
                outbox_table.put_event_item(events.new_event("tenant.created", ctx.tenant_id, event_data), now),
                audit.entry(tenant["id"], "tenant.created", "tenant", tenant["id"], ctx=ctx,
                            changes=audit.changed({}, {"name": body.name, "plan": "free"}), now=now),
            ])
        except ConditionFailed:
            continue  # the ceiling reached or the welcome credit claimed meanwhile, or a collision: read again
        return _view(tenant, "owner")
    raise Conflict("Other tenants of this user were being created at the same time; try again.")


def update_settings(ctx: TenantContext, tenant_id: str, patch: SettingsPatch) -> dict[str, Any]:
    """Owners and admins (tenants:write) of the tenant their credential is for."""
    if tenant_id != ctx.tenant_id:  # another tenant of a user's: get a token for it first (refresh)
        raise NotFound("No such tenant.", {"id": tenant_id, "resource": "tenant"})
    tenant = tenants_table.get_consistent(tenant_id)
    if tenant is None:
        raise NotFound("No such tenant.", {"id": tenant_id, "resource": "tenant"})
    settings_before = {**DEFAULT_SETTINGS, **(tenant.get("settings") or {})}
    settings_now = dict(settings_before)
    for name in patch.model_fields_set:
        value = getattr(patch, name)
        settings_now[name] = DEFAULT_SETTINGS[name] if value is None else value
    if settings_now["ipAllowlist"] and not plans.has_feature(tenant["plan"], "ip_allowlist"):
        raise Forbidden("The IP allowlist needs a higher plan.",
                        {"feature": "ip_allowlist", "currentPlan": tenant["plan"],
                         "requiredPlan": plans.required_plan("ip_allowlist")})
    changes = audit.changed(settings_before, settings_now)
    recorded = audit.entries_if_changed(tenant_id, "tenant.settings_changed", "tenant", tenant_id, changes, ctx=ctx)
    try:
        updated = tenants_table.set_section(tenant_id, "settings", settings_now, timeutil.iso(timeutil.now()),
                                            also=recorded)
    except ConditionFailed:
        raise NotFound("No such tenant.", {"id": tenant_id, "resource": "tenant"}) from None
    tenant_policy.forget(tenant_id)  # this container applies the new allowlist at once
    return _view(updated, _roles_of(ctx.principal).get(tenant_id, "api_key"))


def set_plan(tenant_id: str, plan: str, *, ctx: TenantContext | None = None,
             actor: dict[str, str] | None = None) -> dict[str, Any]:
    """Move a tenant to another plan (billing, or an operator): a change of plan is recorded in the
    audit log (billing.plan_changed) by the caller in ctx, or the actor given, else the service."""
    if plan not in plans.PLANS:
        raise ValueError(plan)
    before = (tenants_table.get_consistent(tenant_id) or {}).get("plan")
    recorded = audit.entries_if_changed(tenant_id, "billing.plan_changed", "tenant", tenant_id,
                                        audit.changed({"plan": before}, {"plan": plan}), ctx=ctx, actor=actor)
    tenant = tenants_table.set_fields(tenant_id, also=recorded, plan=plan, updated_at=timeutil.iso(timeutil.now()))
    tenant_policy.forget(tenant_id)  # running containers see it within the policy cache time
    return tenant


def set_status(tenant_id: str, status: str) -> dict[str, Any]:
    """Operator action: suspend a tenant (every credential of it gets 403) or make it active again."""
    if status not in ("active", "suspended"):
        raise ValueError(status)
    tenant = tenants_table.set_fields(tenant_id, status=status, updated_at=timeutil.iso(timeutil.now()))
    tenant_policy.forget(tenant_id)
    return tenant
