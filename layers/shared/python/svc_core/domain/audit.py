"""The audit log's entries: who did what to which object of a tenant, from where, and which fields
changed (never a secret's value).

An entry is one more item of the transaction that makes the change (`entry(...)` returns it), so a
change and its entry are stored together or not at all. Actor: the user (usr_…) or the API key
(key_…) whose credential made the request, or "service" for what the service does on its own.
Entries are kept RETENTION_DAYS (then DynamoDB's TTL removes them); no route changes or deletes one.
"""

from __future__ import annotations

from typing import Any

from svc_core.auth.context import TenantContext
from svc_core.data import audit_log_table
from svc_core.platform import ids, timeutil

AUDIT_PREFIX = "aud"
RETENTION_DAYS = 400   # a year and a month: a yearly review still finds last year's same month

# Every action the log records; the API reference lists them (GET /audit-log's action filter).
ACTIONS: tuple[str, ...] = (
    "api_key.created", "api_key.rotated", "api_key.revoked",
    "invitation.created", "invitation.resent", "invitation.revoked", "invitation.accepted",
    "member.added", "member.role_changed", "member.removed", "member.left", "ownership.transferred",
    "tenant.created", "tenant.settings_changed", "tenant.region_preferences_changed", "tenant.storage_changed",
    "webhook.created", "webhook.updated", "webhook.deleted", "webhook.secret_rotated",
    "secret.created", "secret.updated", "secret.deleted",
    "billing.credits_purchased", "billing.gift_card_redeemed", "billing.plan_changed",
    "user.signed_in",
)

# Field names whose values never enter the log (their names do, as "[redacted]").
_SECRET_FIELDS = frozenset({"secret", "value", "password", "passwordHash", "token", "apiKey", "key",
                            "secretAccessKey", "accessKeyId", "accountKey", "sasToken", "credentials",
                            "privateKey", "clientSecret", "refreshToken", "accessToken"})
REDACTED = "[redacted]"


def redact(changes: dict[str, Any] | None) -> dict[str, Any]:
    """The changed fields with every secret's value replaced, at any depth."""
    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: (REDACTED if k in _SECRET_FIELDS and v is not None else clean(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value
    return clean(changes or {})


def actor_of(ctx: TenantContext | None) -> dict[str, str]:
    if ctx is None:
        return {"type": "service", "id": "service"}
    kind = "user" if ctx.principal.credential == "user" else "api_key"
    return {"type": kind, "id": ctx.principal.subject}


def new_entry(tenant_id: str, action: str, target_type: str, target_id: str, *,
              ctx: TenantContext | None = None, actor: dict[str, str] | None = None, source_ip: str | None = None,
              request_id: str | None = None, changes: dict[str, Any] | None = None,
              now: float | None = None) -> dict[str, Any]:
    """The entry as it is stored and shown. The actor, address and request come from ctx (the request's
    caller) unless given (a sign-in, which has no context yet; the service's own actions)."""
    if action not in ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
    moment = timeutil.now() if now is None else now
    return {"id": ids.new_id(AUDIT_PREFIX), "tenantId": tenant_id, "action": action,
            "actor": actor or actor_of(ctx), "target": {"type": target_type, "id": target_id},
            "changes": redact(changes),
            "sourceIp": source_ip if source_ip is not None else (ctx.source_ip if ctx else ""),
            "requestId": request_id if request_id is not None else (ctx.request_id if ctx else None),
            "created_at": timeutil.iso(moment)}


def entry(tenant_id: str, action: str, target_type: str, target_id: str, **fields: Any) -> dict[str, Any]:
    """A TransactWriteItems entry appending the audit entry (new_entry's arguments) to the log."""
    made = new_entry(tenant_id, action, target_type, target_id, **fields)
    moment = timeutil.now() if fields.get("now") is None else fields["now"]
    return audit_log_table.put_entry(made, int(moment) + RETENTION_DAYS * 86400)
