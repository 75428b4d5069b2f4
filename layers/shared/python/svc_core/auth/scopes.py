"""The scope catalogue: every scope a credential may hold, and what it grants.

Routes name the scope they need next to their path (see api.py); the API reference and the
OpenAPI document list this table.
"""

from __future__ import annotations

SCOPES: dict[str, str] = {
    "projects:read": "read project data",
    "projects:write": "create, update, delete projects",
    "agents:read": "view agent configurations and runs",
    "agents:write": "create, configure, run agents",
    "chat:read": "view chat sessions and their messages, stream answers",
    "chat:write": "create chat sessions and send messages",
    "billing:read": "view billing summary and invoices",
    "billing:write": "purchase credits, manage subscriptions, redeem gift cards",
    "secrets:read": "list and view secret metadata",
    "secrets:write": "create, update, delete secrets",
    "tenants:read": "view the tenant, its settings, regions, storage configuration and plan features",
    "tenants:write": "change the tenant's settings, regional preferences and storage; create tenants",
    "webhooks:read": "list webhooks and their delivery log (never their secrets)",
    "webhooks:write": "register, change, test, rotate the secret of and delete webhooks; redeliver and replay events",
    "events:read": "read and stream the tenant's event log (the last 30 days)",
    "keys:read": "list and view API keys (never their values)",
    "keys:write": "create, rotate and revoke API keys",
    "members:read": "list the tenant's members and its open invitations",
    "members:write": "invite people, change members' roles, remove members (owners only make or unmake owners)",
    "audit:read": "read and export the tenant's audit log",
}

ALL_SCOPES: frozenset[str] = frozenset(SCOPES)
