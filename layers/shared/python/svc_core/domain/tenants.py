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


def create_tenant_with_owner(*, tenant_name: str, email: str, user_name: str, password: str | None = None,
                             federated: tuple[str, str] | None = None) -> dict[str, Any]:
    """A tenant, its owner and both creation events, in one transaction.

    The owner signs in with a password (their e-mail address is claimed, uniquely) or with an
    identity provider's account, federated = (issuer, subject) (claimed, uniquely, instead).
    Conflict when the address or the provider account is taken already."""
    now = timeutil.now()
    stamp = timeutil.iso(now)
    user = {"id": ids.new_id("usr"), "email": email, "name": user_name, "status": "active", "created_at": stamp}
    if password is not None:
        user_items = users_table.put_new({**user, "passwordHash": hash_password(password)})
    else:
        user_items = users_table.put_new_federated(user, *federated)
    tenant = {"id": ids.new_id("ten"), "name": tenant_name, "plan": "free", "status": "active",
              "ownerId": user["id"], "created_at": stamp}
    tenant_view = {k: tenant[k] for k in ("id", "name", "plan", "status", "created_at")}
    try:
        transact([
            tenants_table.put_new(tenant), *user_items,
            users_table.put_membership(user["id"], tenant["id"], "owner", stamp),
            outbox_table.put_event_item(events.new_event("tenant.created", tenant["id"], tenant_view), now),
            outbox_table.put_event_item(events.new_event("user.created", tenant["id"], user), now),
        ])
    except ConditionFailed:
        what = "e-mail address" if password is not None else "identity-provider account"
        raise Conflict(f"A user with this {what} already exists.", {"field": "email" if password else "token"}) \
            from None
    return {"tenant": tenant_view, "user": user}
