"""The permission table: what each role of a tenant member may do, as the scopes a user's token
carries. Every route names the scope it needs (http/api.py), so this table is the one place that
decides what a role may call; docs/organizations.md shows it as role x operation.

- owner: everything.
- admin: everything but buying and subscribing (billing:write). Manages members, but a change that
  makes, unmakes or removes an owner needs an owner (domain/members.py: the caller must hold every
  scope of the role a member has and of the role they get).
- member: reads what a member may see (the tenant, its members, billing, secrets' metadata,
  webhooks, events), and works on projects, agents and chat; no keys, no members' changes, no
  secrets' changes, no settings, no billing changes, no audit log.
"""

from __future__ import annotations

from svc_core.auth.scopes import ALL_SCOPES

ROLES: tuple[str, ...] = ("owner", "admin", "member")  # from the most to the least

ROLE_SCOPES: dict[str, frozenset[str]] = {
    "owner": ALL_SCOPES,
    "admin": ALL_SCOPES - {"billing:write"},
    "member": frozenset({"projects:read", "projects:write", "agents:read", "agents:write", "billing:read",
                         "secrets:read", "tenants:read", "webhooks:read", "events:read",
                         "chat:read", "chat:write", "members:read"}),
}


def may_grant(caller_scopes: frozenset[str], role: str) -> bool:
    """Whether a caller holding these scopes may give (or take away) this role: only when it holds
    every scope the role carries, so nobody hands out more than they have."""
    return ROLE_SCOPES[role] <= caller_scopes
