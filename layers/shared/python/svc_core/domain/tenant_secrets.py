"""Tenant secrets: named values (API keys of other services, passwords) that a tenant keeps for
the service to use on its behalf, e.g. its agents. The API manages them and answers their
metadata only; the value is never answered, logged or stored in clear.

The value is sealed with KMS (svc_core/adapters/sealing.py: a data key under an encryption context,
AES-256-GCM) bound to {purpose, tenantId, secretId, version}: it opens only for that tenant,
that secret and that version, so a sealed value copied into another item, another tenant or
over a newer version does not open. Only the current value is kept: a new value is a new
version and replaces the old one.

reveal() gives the value in clear to the service's own code (no route answers it).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from svc_core.adapters import sealing
from svc_core.auth.context import TenantContext
from svc_core.data import secrets_table
from svc_core.data.common import ConditionFailed
from svc_core.domain import audit
from svc_core.domain.fields.secrets import NAME_PATTERN
from svc_core.domain.paging import tenant_list_page
from svc_core.platform import ids, timeutil
from svc_core.platform.errors import Conflict, NotFound

if TYPE_CHECKING:
    from svc_core.domain.models.secrets import SecretCreate, SecretUpdate

PREFIX = "sec"
PURPOSE = "tenant-secret"
_NAME = re.compile(NAME_PATTERN)


def _view(record: dict[str, Any]) -> dict[str, Any]:
    return {"id": record["id"], "name": record["name"], "description": record.get("description"),
            "version": record["version"], "created_at": record["created_at"], "updated_at": record["updated_at"]}


def _recorded(record: dict[str, Any]) -> dict[str, Any]:
    """What the audit log records of a secret: its name, description and version (a new value is a
    new version), never the value."""
    return {f: record.get(f) for f in ("name", "description", "version")}


def _not_found(secret_id: str) -> NotFound:
    return NotFound("The secret does not exist.", {"id": secret_id, "resource": "secret"})


def _context(tenant_id: str, secret_id: str, version: int) -> dict[str, str]:
    return {"purpose": PURPOSE, "tenantId": tenant_id, "secretId": secret_id, "version": str(version)}


def _name_taken() -> Conflict:
    # The body is valid: the tenant's current secrets are what it conflicts with.
    return Conflict("A secret of this name already exists in the tenant (names are compared without case).",
                    {"resource": "secret", "fields": [{"field": "name", "in": "body", "reason": "already used"}]})


def _read(tenant_id: str, secret_id: str, store) -> dict[str, Any]:
    record = store.get(tenant_id, secret_id) if ids.is_id(secret_id, PREFIX) else None
    if record is None:
        raise _not_found(secret_id)
    return record


def create_secret(ctx: TenantContext, body: SecretCreate, store=secrets_table) -> dict[str, Any]:
    if store.id_of_name(ctx.tenant_id, body.name) is not None:  # saves a KMS call; the write checks again
        raise _name_taken()
    stamp = timeutil.iso(timeutil.now())
    secret_id = ids.new_id(PREFIX)
    record = {"id": secret_id, "name": body.name, "description": body.description, "version": 1,
              "created_at": stamp, "updated_at": stamp,
              "sealed": sealing.seal(body.value.encode("utf-8"), _context(ctx.tenant_id, secret_id, 1))}
    view = _view(record)
    try:
        store.create(ctx.tenant_id, record, answer=view, also=[audit.entry(
            ctx.tenant_id, "secret.created", "secret", secret_id, ctx=ctx,
            changes=audit.changed({}, _recorded(record)))])
    except ConditionFailed:
        raise _name_taken() from None  # claimed by a concurrent create
    return view


def get_secret(ctx: TenantContext, secret_id: str, store=secrets_table) -> dict[str, Any]:
    return _view(_read(ctx.tenant_id, secret_id, store))


def list_secrets(ctx: TenantContext, limit: int, cursor: str | None, store=secrets_table) -> dict[str, Any]:
    return tenant_list_page(store, ctx.tenant_id, limit, cursor, id_prefix=PREFIX, view=_view)


def update_secret(ctx: TenantContext, secret_id: str, body: SecretUpdate, store=secrets_table) -> dict[str, Any]:
    current = _read(ctx.tenant_id, secret_id, store)
    updated = {**current, "updated_at": timeutil.iso_after(timeutil.now(), current["updated_at"])}
    if "description" in body.model_fields_set:
        updated["description"] = body.description
    if "value" in body.model_fields_set:
        updated["version"] = current["version"] + 1
        updated["sealed"] = sealing.seal(body.value.encode("utf-8"),
                                         _context(ctx.tenant_id, secret_id, updated["version"]))
    changes = audit.changed(_recorded(current), _recorded(updated))
    try:
        store.replace(ctx.tenant_id, updated, current["version"], current["updated_at"], also=[audit.entry(
            ctx.tenant_id, "secret.updated", "secret", secret_id, ctx=ctx, changes=changes)])
    except ConditionFailed:
        raise Conflict("The secret changed or was deleted while it was being updated; read it again.",
                       {"id": secret_id}) from None
    return _view(updated)


def delete_secret(ctx: TenantContext, secret_id: str, store=secrets_table) -> dict[str, Any]:
    current = _read(ctx.tenant_id, secret_id, store)
    try:
        store.delete(ctx.tenant_id, secret_id, current["name"], current["version"], current["updated_at"],
                     also=[audit.entry(ctx.tenant_id, "secret.deleted", "secret", secret_id, ctx=ctx,
                                       changes=audit.changed(_recorded(current), {}))])
    except ConditionFailed:
        raise Conflict("The secret changed while it was being deleted; try again.", {"id": secret_id}) from None
    return {"id": secret_id, "deleted": True}


def reveal(tenant_id: str, name_or_id: str, store=secrets_table) -> str:
    """The current value of a tenant's secret, named by its id or its name (any case), for the
    service's own use (an agent calling another service). NotFound when the tenant has no such
    secret; sealing.Unsealable when the stored value does not open for it (moved or altered)."""
    secret_id = name_or_id if ids.is_id(name_or_id, PREFIX) else (
        store.id_of_name(tenant_id, name_or_id) if _NAME.fullmatch(name_or_id) else None)
    record = store.get(tenant_id, secret_id) if secret_id else None
    if record is None:
        raise _not_found(name_or_id)
    context = _context(tenant_id, record["id"], record["version"])
    return sealing.unseal(record["sealed"], context).decode("utf-8")

