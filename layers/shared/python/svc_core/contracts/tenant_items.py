"""Whose each item of a cell is: the tenant (or user) an item of each table of template.yaml belongs
to, the tenant of a files bucket's object by its key, and of a queue's message by its body. The
residency audit (ops/residency.py) checks each item's place by it; a move between cells
(domain/tenant_moves.py) copies and deletes a tenant's items by it. Plain Python over items as the data
modules read them (adapters.dynamo.from_item).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# ---- owners and the rules that find them --------------------------------------------------------


@dataclass(frozen=True)
class Owner:
    """Whose an item is. kind: tenant, user (the account's home: profile, e-mail claim, sign-ins),
    cell (no tenant's: this cell's own records, e.g. a source address's rate counter), opaque (keyed
    by a hash nothing here can map to a tenant). Kinds named by an id that other items resolve (the
    residency audit looks them up): webhook (its tenant, in the webhooks table), api_key (its tenant,
    in the API-keys table or the directory), session (a sign-in: its user, in the sessions table, and
    the tenants it was used for), user_credential (a user's own credential: the user and their
    tenants), email (a normalised address: the account that claims it, in the users table)."""
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
    if sk in ("EMAIL", "IDP", "PASSWORD_RESET"):  # an address's or a provider account's claim, a reset link: the user's
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


def _credential(credential_id: str) -> Owner | None:
    """A credential's counter is named by its id: an API key's (key_), a sign-in's (ses_), or a user's
    own when a token carries no sign-in (usr_, an identity provider's exchange)."""
    for prefix, kind in (("key_", "api_key"), ("ses_", "session"), ("usr_", "user_credential")):
        if credential_id.startswith(prefix):
            return Owner(kind, credential_id)
    return None


def _rate_limits_item(item: dict[str, Any]) -> Owner | None:
    """A counter or mark by its key (auth/rate_limit.py, auth/stream_slots.py, domain/accounts.py)."""
    holder = str(item.get("pk", "")).removeprefix("streams#")  # an open-streams holder: as its counter
    kind, _, rest = holder.partition("#")
    if not rest:
        return _credential(kind)
    if kind == "tenant":   # tenant#<id>, or a shard of its counter: tenant#<id>#<n>
        return _tenant(rest.partition("#")[0])
    if kind in ("login-account", "login-slow", "reset-mails"):  # an account's throttles: #<normalised address>
        return Owner("email", rest)
    if kind == "login-address":  # #<normalised address>#<source address>
        return Owner("email", rest.rpartition("#")[0]) if "#" in rest else None
    if kind in ("ip", "addr"):   # a source address's counter: this cell's traffic, nobody's
        return CELL
    if kind == "login-known":    # a hash of an address and where it signed in from: no id to resolve
        return OPAQUE
    return None


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
    "UsersTable": Rule("MEMBER#<tenantId> items: that tenant; USER#<userId> (profile), the EMAIL / IDP "
                       "claims and the PASSWORD_RESET links (userId): the user", _users_item),
    "SessionsTable": Rule("a sign-in: its userId (the account's cell)", _sessions_item),
    "CliSessionsTable": Rule("a device login: its userId once approved; pending or expired ones are the cell's",
                             _cli_sessions_item),
    "ApiKeysTable": Rule("KEY# and SECRET# items: tenantId", _attribute("tenantId")),
    "RateLimitsTable": Rule("tenant#<tenantId> (its counter's shards tenant#<tenantId>#<n>, its streams#): that tenant; "
                            "a credential's counter "
                            "(key_, ses_, usr_ ids): the key's tenant, the sign-in's or user's account and tenants; "
                            "login-* and reset-mails# throttles: the account of the address; ip#, addr#: the cell's; "
                            "login-known# (a hash): opaque", _rate_limits_item),
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


# ---- queue messages -------------------------------------------------------------------------------
# A queue's message is found its tenant by its body (JSON, as the senders write it: data/*_queue.py,
# EventBridge's targets, the stream mappings' OnFailure destinations).

def _message_tenant(body: dict[str, Any]) -> Owner | None:
    """{tenantId, ...} (a delivery, a chat turn, an agent run, a move) or a replay's {replayStep: {tenantId}}."""
    step = body.get("replayStep")
    return _tenant(body.get("tenantId")) or (_tenant(step.get("tenantId")) if isinstance(step, dict) else None)


def _detail(body: dict[str, Any]) -> dict[str, Any]:
    detail = body.get("detail")  # an EventBridge event, as a rule's SQS target receives it
    return detail if isinstance(detail, dict) else {}


def _bus_event(body: dict[str, Any]) -> Owner | None:
    """An event of the service's bus: its envelope (contracts/events.py) is the detail."""
    return _tenant(_detail(body).get("tenantId"))


def _object_event(body: dict[str, Any]) -> Owner | None:
    """An object of the bucket written or deleted (S3's event on EventBridge): the tenant in its key."""
    key = (_detail(body).get("object") or {}).get("key")
    return object_owner(key) if isinstance(key, str) else None


def _stream_failure(body: dict[str, Any]) -> Owner | None:
    """A stream mapping's OnFailure record: where the failed batch is in the stream, no item: the cell's."""
    return CELL if isinstance(body.get("DDBStreamBatchInfo"), dict) else None


def _first_of(*owners: Callable[[dict[str, Any]], Owner | None]) -> Callable[[dict[str, Any]], Owner | None]:
    return lambda body: next((found for owner in owners if (found := owner(body)) is not None), None)


BUS_EVENT = Rule("an event of the bus (EventBridge's envelope): detail.tenantId", _bus_event)
DELIVERY = Rule("a delivery {event, webhookId, tenantId} or a replay's step {replayStep: {tenantId}}", _message_tenant)
BY_TENANT_ID = Rule("{tenantId, ...}", _message_tenant)

# Every queue of template.yaml (a unit test holds them alike); the residency audit reads their messages.
QUEUE_RULES: dict[str, Rule] = {
    "WebhookQueue": BUS_EVENT,
    "WebhookDeadLetterQueue": BUS_EVENT,
    "WebhookDeliveryQueue": DELIVERY,
    "WebhookDeliveryDeadLetterQueue": DELIVERY,
    "ChatTurnQueue": BY_TENANT_ID,
    "ChatTurnDeadLetterQueue": BY_TENANT_ID,
    "AgentRunQueue": BY_TENANT_ID,
    "AgentRunDeadLetterQueue": BY_TENANT_ID,
    "TenantMoveQueue": BY_TENANT_ID,
    "TenantMoveDeadLetterQueue": Rule("a move's or a seed's {tenantId}; an object's event of ReplicaObjectsQueue: "
                                      "the tenant in its key; a stream mapping's failure record: the cell's",
                                      _first_of(_message_tenant, _object_event, _stream_failure)),
    "ReplicaObjectsQueue": Rule("an object's event (S3 on EventBridge): the tenant in detail.object.key",
                                _object_event),
    "OutboxFailureQueue": Rule("a stream mapping's failure record (where the batch is, no item): the cell's",
                               _stream_failure),
}


def message_owner(queue: str, body: str) -> Owner | None:
    """Whose a message of the queue is, by its body; None for a body no rule knows (or not JSON)."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return None
    rule = QUEUE_RULES.get(queue)
    return rule.owner(parsed) if rule is not None and isinstance(parsed, dict) else None


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
