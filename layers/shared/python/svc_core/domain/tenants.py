"""Tenants and their owners, as an operator (or the local stack's bootstrap) creates them."""

from __future__ import annotations

from typing import Any

from argon2 import PasswordHasher

from svc_core import events, ids, timeutil
from svc_core.data import outbox_table, tenants_table, users_table
from svc_core.data.common import ConditionFailed, transact
from svc_core.errors import Conflict

_hasher = PasswordHasher()  # argon2id with the library's current recommended parameters


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def create_tenant_with_owner(*, tenant_name: str, email: str, password: str, user_name: str) -> dict[str, Any]:
    """A tenant, its owner and both creation events, in one transaction."""
    now = timeutil.now()
    stamp = timeutil.iso(now)
    user = {"id": ids.new_id("usr"), "email": email, "name": user_name, "status": "active",
            "passwordHash": hash_password(password), "created_at": stamp}
    tenant = {"id": ids.new_id("ten"), "name": tenant_name, "plan": "free", "status": "active",
              "ownerId": user["id"], "created_at": stamp}
    user_view = {k: user[k] for k in ("id", "email", "name", "status", "created_at")}
    tenant_view = {k: tenant[k] for k in ("id", "name", "plan", "status", "created_at")}
    try:
        transact([
            tenants_table.put_new(tenant), *users_table.put_new(user),
            users_table.put_membership(user["id"], tenant["id"], "owner", stamp),
            outbox_table.put_event_item(events.new_event("tenant.created", tenant["id"], tenant_view), now),
            outbox_table.put_event_item(events.new_event("user.created", tenant["id"], user_view), now),
        ])
    except ConditionFailed:
        raise Conflict("A user with this e-mail address already exists.", {"field": "email"}) from None
    return {"tenant": tenant_view, "user": user_view}
