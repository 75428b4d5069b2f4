"""Whose each item of a cell is: the tenant (or user) an item of each table of template.yaml belongs
to, and the tenant of a files bucket's object by its key. The residency audit (ops/residency.py) checks
each item's place by it; a move between cells (domain/tenant_moves.py) copies and deletes a tenant's
items by it. Plain Python over items as the data modules read them (adapters.dynamo.from_item).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# ---- owners and the rules that find them --------------------------------------------------------


@dataclass(frozen=True)
class Owner:
    """Whose an item is. kind: tenant, user (the account's home: profile, e-mail claim, sign-ins),
    webhook (a tenant's, found through the webhooks table), cell (no tenant's: this cell's own
    records, e.g. rate counters), opaque (keyed by a hash nothing here can map to a tenant)."""
    kind: str
    id: str = ""

    def __str__(self) -> str:
        return f"{self.kind} {self.id}".strip()


CELL = Owner("cell")
OPAQUE = Owner("opaque")


def _tenant(value: Any) -> Owner | None:
    return Owner("tenant", value) if isinstance(value, str) and value else None


def _user(value: Any) -> Owner | None:
    return Owner("user", value) if isinstance(value, str) and value else None


def _attribute(name: str) -> Callable[[dict[str, Any]], Owner | None]:
    return lambda item: _tenant(item.get(name))


def _before_hash(name: str) -> Callable[[dict[str, Any]], Owner | None]:
    """<tenantId>#<...> keys (a chat session's messages and events)."""
    def owner(item: dict[str, Any]) -> Owner | None:
        value = item.get(name)
        return _tenant(value.split("#", 1)[0]) if isinstance(value, str) and "#" in value else None
    return owner


def _users_item(item: dict[str, Any]) -> Owner | None:
    pk, sk = str(item.get("pk", "")), str(item.get("sk", ""))
    if sk.startswith("MEMBER#"):  # a membership lives in the tenant's cell
        return _tenant(item.get("tenantId") or sk[len("MEMBER#"):])
    if pk.startswith("USER#"):
        return _user(pk[len("USER#"):])
    if sk in ("EMAIL", "IDP"):  # the claim of an address or an identity-provider account: the user's
        return _user(item.get("userId"))
    return None


def _billing_item(item: dict[str, Any]) -> Owner | None:
    pk = str(item.get("pk", ""))
    if pk.startswith("giftcard#"):  # the issuing operator's record in this cell (redeemedBy is only an id)
        return CELL
    if pk.startswith("stripe-customer#"):
        return _tenant(item.get("tenantId"))
    return _tenant(pk)


def _sessions_item(item: dict[str, Any]) -> Owner | None:
    return _user(item.get("userId"))


def _cli_sessions_item(item: dict[str, Any]) -> Owner | None:
    # Pending: nobody's yet (a device asked, nobody approved); approved or consumed: the user's.
    return _user(item.get("userId")) or (CELL if item.get("status") in ("pending", "expired", "denied") else None)


def _webhook_deliveries_item(item: dict[str, Any]) -> Owner | None:
    return _tenant(item.get("tenantId")) or (Owner("webhook", item["webhookId"]) if item.get("webhookId") else None)


@dataclass(frozen=True)
class Rule:
    how: str  # how an item's owner is found: what the audit says of the table
    owner: Callable[[dict[str, Any]], Owner | None]


BY_TENANT_KEY = Rule("the partition key tenantId", _attribute("tenantId"))

# Every table of template.yaml (a unit test holds them alike). The directory's own items are checked
# apart (directory_problems): it is the one table every cell holds.
TABLE_RULES: dict[str, Rule] = {
    "TenantsTable": Rule("the tenant's item: its id", _attribute("id")),
    "UsersTable": Rule("MEMBER#<tenantId> items: that tenant; USER#<userId> (profile) and the EMAIL / IDP "
                       "claims (userId): the user", _users_item),
    "SessionsTable": Rule("a sign-in: its userId (the account's cell)", _sessions_item),
    "CliSessionsTable": Rule("a device login: its userId once approved; pending or expired ones are the cell's",
                             _cli_sessions_item),
    "ApiKeysTable": Rule("KEY# and SECRET# items: tenantId", _attribute("tenantId")),
    "RateLimitsTable": Rule("the cell's: counters and marks of this cell's traffic, no tenant content",
                            lambda item: CELL),
    "IdempotencyTable": Rule("tenantId where the record carries it; else opaque (keyed by a hash of tenant, "
                             "operation and key, kept 24 h)", lambda item: _tenant(item.get("tenantId")) or OPAQUE),
    "OutboxTable": Rule("an event envelope: tenantId", _attribute("tenantId")),
    "EventsTable": BY_TENANT_KEY,
    "AuditLogTable": BY_TENANT_KEY,
    "InvitationsTable": BY_TENANT_KEY,
    "WebhooksTable": BY_TENANT_KEY,
    "WebhookDeliveriesTable": Rule("tenantId where the item carries it; the delivery marks: their webhookId's "
                                   "tenant (the webhooks table)", _webhook_deliveries_item),
    "OAuthFlowsTable": Rule("a pending flow: tenantId", _attribute("tenantId")),
    "OAuthConnectionsTable": BY_TENANT_KEY,
    "SecretsTable": BY_TENANT_KEY,
    "AgentsTable": BY_TENANT_KEY,
    "RunsTable": BY_TENANT_KEY,
    "ChatSessionsTable": BY_TENANT_KEY,
    "ChatMessagesTable": Rule("sessionKey = <tenantId>#<sessionId>", _before_hash("sessionKey")),
    "ChatEventsTable": Rule("sessionKey = <tenantId>#<sessionId>", _before_hash("sessionKey")),
    "BillingTable": Rule("pk = tenantId; stripe-customer# items: tenantId; gift cards: the cell's "
                         "(the issuer's record)", _billing_item),
    "UsageTable": BY_TENANT_KEY,
    "ProjectsTable": BY_TENANT_KEY,
}
OBJECT_PREFIXES = ("tenants/", "audit-exports/")  # <prefix><tenantId>/...: adapters/project_files_bucket.py, audit_exports.py


def object_owner(key: str) -> Owner | None:
    """The tenant of a files bucket's object, from its key; None for a key of no known shape."""
    for prefix in OBJECT_PREFIXES:
        if key.startswith(prefix):
            tenant_id = key[len(prefix):].split("/", 1)[0]
            return _tenant(tenant_id) if "/" in key[len(prefix):] else None
    return None

# Each table's Settings field (its environment variable in capitals), by its logical id in template.yaml.
TABLE_SETTINGS: dict[str, str] = {
    "TenantsTable": "tenants_table", "UsersTable": "users_table", "SessionsTable": "sessions_table",
    "CliSessionsTable": "cli_sessions_table", "ApiKeysTable": "api_keys_table",
    "RateLimitsTable": "rate_limits_table", "IdempotencyTable": "idempotency_table",
    "OutboxTable": "outbox_table", "EventsTable": "events_table", "AuditLogTable": "audit_log_table",
    "InvitationsTable": "invitations_table", "WebhooksTable": "webhooks_table",
    "WebhookDeliveriesTable": "webhook_deliveries_table", "OAuthFlowsTable": "oauth_flows_table",
    "OAuthConnectionsTable": "oauth_connections_table", "SecretsTable": "secrets_table",
    "AgentsTable": "agents_table", "RunsTable": "runs_table", "ChatSessionsTable": "chat_sessions_table",
    "ChatMessagesTable": "chat_messages_table", "ChatEventsTable": "chat_events_table",
    "BillingTable": "billing_table", "UsageTable": "usage_table", "ProjectsTable": "projects_table",
}
