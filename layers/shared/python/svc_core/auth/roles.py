"""What each role of a tenant member may do: the scopes a user's token carries.

- owner: everything.
- admin: everything but buying and subscribing (billing:write).
- member: read everything a member may see (the tenant included), and work on projects, agents and chat; no keys, no
  secrets' changes, no billing changes.
"""

from __future__ import annotations

from svc_core.auth.scopes import ALL_SCOPES

ROLE_SCOPES: dict[str, frozenset[str]] = {
    "owner": ALL_SCOPES,
    "admin": ALL_SCOPES - {"billing:write"},
    "member": frozenset({"projects:read", "projects:write", "agents:read", "agents:write", "billing:read",
                         "secrets:read", "tenants:read", "webhooks:read", "events:read",
                         "chat:read", "chat:write"}),
}
