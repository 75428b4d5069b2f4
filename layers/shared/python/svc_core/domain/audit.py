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
    "tenant.created", "tenant.settings_changed", "tenant.region_preferences_changed", "tenant.move_started",
    "tenant.failed_over", "tenant.storage_changed",
    "webhook.created", "webhook.updated", "webhook.deleted", "webhook.secret_rotated",
    "secret.created", "secret.updated", "secret.deleted",
    "billing.credits_purchased", "billing.gift_card_redeemed", "billing.plan_changed",
    "user.signed_in", "user.password_reset", "user.password_changed", "user.sessions_ended",
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


SERVICE = {"type": "service", "id": "service"}


def actor_of(ctx: TenantContext | None) -> dict[str, str]:
    if ctx is None:
        return SERVICE
    kind = "user" if ctx.principal.credential == "user" else "api_key"
    return {"type": kind, "id": ctx.principal.subject}


def actor_named(subject: str) -> dict[str, str]:
    """The actor a recorded principal (usr_…, key_…; anything else is the service's own, e.g. a
    payment provider's webhook) stands for, when the change happens outside that caller's request."""
    for prefix, kind in (("usr_", "user"), ("key_", "api_key")):
        if subject.startswith(prefix):
            return {"type": kind, "id": subject}
    return SERVICE


def changed(before: dict[str, Any], after: dict[str, Any], fields: tuple[str, ...] | None = None
            ) -> dict[str, dict[str, Any]]:
    """The fields whose value differs, each {old, new} (all of both dicts' fields unless named)."""
    names = fields if fields is not None else tuple(dict.fromkeys([*before, *after]))
    return {name: {"old": before.get(name), "new": after.get(name)}
            for name in names if before.get(name) != after.get(name)}


def new_entry(tenant_id: str, action: str, target_type: str, target_id: str, *,
              ctx: TenantContext | None = None, actor: dict[str, str] | None = None, source_ip: str | None = None,
              request_id: str | None = None, changes: dict[str, Any] | None = None,
              now: float | None = None) -> dict[str, Any]:
    """The entry as it is stored and shown. The actor, address and request come from ctx (the request's
    caller) unless given (a sign-in, which has no context yet; the service's own actions)."""
    if action not in ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
    moment = timeutil.now() if now is None else now
    # The id's time is the entry's (since/until select ids): the same millisecond as created_at.
    return {"id": f"{AUDIT_PREFIX}_{ids.new_ulid(int(moment * 1000))}", "tenantId": tenant_id, "action": action,
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


# Whose sign-ins the log records: those who may change what the log records.
SIGN_IN_ROLES = ("owner", "admin")


def sign_in_entries(tenant_id: str, user_id: str, role: str, source_ip: str, method: str,
                    **made: str) -> list[dict[str, Any]]:
    """[the user.signed_in entry] of an owner or admin signing in to the tenant (method: password,
    device_login, identity_provider; made: what the sign-in made, e.g. sessionId), else []."""
    if role not in SIGN_IN_ROLES:
        return []
    return [entry(tenant_id, "user.signed_in", "user", user_id, actor={"type": "user", "id": user_id},
                  source_ip=source_ip, changes=changed({}, {"method": method, "role": role, **made}))]


def account_entries(memberships: list[dict[str, Any]], user_id: str, action: str, *, source_ip: str,
                    request_id: str | None = None, changes: dict[str, Any] | None = None
                    ) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(membership, entry) of a change the user made to their own account (user.password_reset,
    user.password_changed, user.sessions_ended), for each tenant where they are an owner or admin:
    the tenants whose log records their sign-ins, for the same reason."""
    return [(membership, entry(membership["tenantId"], action, "user", user_id, actor={"type": "user", "id": user_id},
                               source_ip=source_ip, request_id=request_id, changes=changes))
            for membership in memberships if membership["role"] in SIGN_IN_ROLES]


def entries_if_changed(tenant_id: str, action: str, target_type: str, target_id: str,
                       changes: dict[str, Any], **fields: Any) -> list[dict[str, Any]]:
    """[entry(...)] recording `changes`, or no entry when nothing changed (a write that sets the
    values already there)."""
    return [entry(tenant_id, action, target_type, target_id, changes=changes, **fields)] if changes else []
