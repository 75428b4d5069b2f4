"""Deployment settings, read from the environment once per container.

Each setting is declared once, below: its name, type and default. It is read from the environment
variable of its name in capitals (PROJECTS_TABLE for projects_table) unless setting() names another;
a variable that is not set leaves the default (and, where setting() says so, a blank one too).
template.yaml sets these variables on the functions; the local stack and the tests set the same
names; tests/unit/test_settings.py checks that the template and this table agree. Nothing else
reads os.environ for settings.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any


def setting(default: Any, *, env: str | tuple[str, ...] | None = None, blank_is_default: bool = False) -> Any:
    """A setting whose variable is not its name in capitals (env: the first of several that is set
    wins), or whose blank value means the default."""
    return field(default=default, metadata={"env": env, "blank_is_default": blank_is_default})


@dataclass(frozen=True)
class Settings:
    # Tables, queues and the bucket: template.yaml sets each to its resource's name or URL.
    projects_table: str = "projects"
    api_keys_table: str = "api-keys"
    rate_limits_table: str = "rate-limits"
    outbox_table: str = "outbox"
    tenants_table: str = "tenants"
    users_table: str = "users"
    sessions_table: str = "sessions"
    cli_sessions_table: str = "cli-sessions"
    webhooks_table: str = "webhooks"
    webhook_deliveries_table: str = "webhook-deliveries"
    events_table: str = "events"   # the event log: every published event, per tenant, 30 days
    audit_log_table: str = "audit-log"   # security-relevant actions, append-only (domain/audit.py)
    invitations_table: str = "invitations"
    # Cells (svc_core/contracts/cells.py): every cell of the deployment as JSON {region: public base URL}
    # (empty: this one only), and the global directory that says which cell is each tenant's home.
    cells: str = ""
    directory_table: str = "directory"
    # E-mail (adapters/email.py): the SES identity messages are sent from (empty: none is sent) and
    # the configuration set whose bounces and complaints are logged.
    email_sender: str = ""
    email_configuration_set: str = ""
    webhook_delivery_queue_url: str = ""
    # The queue the bus puts every event on for the fan-out, and its dead letters (a move between cells
    # carries a tenant's messages from this cell's webhook queues to its new home's).
    webhook_queue_url: str = ""
    webhook_dead_letter_queue_url: str = setting("", env="WEBHOOK_DLQ_URL")
    oauth_flows_table: str = "oauth-flows"
    oauth_connections_table: str = "oauth-connections"
    secrets_table: str = "secrets"
    agents_table: str = "agents"
    # OAuth connections: the providers (a JSON list, parsed by domain/oauth_connections.py), their
    # client secrets' secret, the KMS key that seals tenants' data, the providers' HTTP timeout.
    oauth_providers: str = "[]"
    oauth_client_secrets_secret_id: str = "svc/oauth-client-secrets"
    tenant_data_key_id: str = "alias/svc-tenant-data"
    oauth_http_timeout_seconds: float = 5.0
    # Where a browser reaches the API (empty: the request's own host).
    public_base_url: str = ""
    # Where a browser reaches the dashboard (empty: none; the device login then approves on the API's page).
    dashboard_url: str = ""
    # The operator's brand (contracts/brand.py checks each value; template.yaml's Brand* parameters) and
    # where the dashboard's files are, for a logo or favicon shipped with it (empty: not known).
    brand_name: str = ""
    brand_logo: str = ""
    brand_favicon: str = ""
    brand_color: str = ""
    brand_files_url: str = ""
    # An external identity provider whose tokens may be exchanged (empty: none).
    idp_issuer: str = ""
    idp_audience: str = ""
    idp_jwks_url: str = ""
    idp_jwks_cooldown_seconds: int = 30
    refresh_token_days: int = 30
    login_failures_allowed: int = 5
    # The event bus and the source its events carry.
    event_bus_name: str = "svc-events"
    event_source: str = "svc.api"
    # Credentials: signing keys and the API key pepper (secrets), the service JWTs.
    signing_keys_secret_id: str = "svc/jwt-signing-keys"
    key_pepper_secret_id: str = "svc/api-key-pepper"
    jwt_issuer: str = "https://api.svc.local"
    jwt_audience: str = "svc-api"
    jwt_lifetime_seconds: int = 900
    # Requests per credential and window; the largest body; how long containers keep what they read.
    rate_limit_per_window: int = 1000
    rate_limit_window_seconds: int = 60
    max_body_bytes: int = 256 * 1024
    secrets_cache_seconds: int = 300
    # The AWS Parameters and Secrets Lambda Extension: template.yaml says "true" when its layer is attached
    # (adapters/secrets_cache.py then reads through it); the port is the extension's own variable.
    secrets_extension_attached: bool = False
    secrets_extension_port: int = setting(2773, env="PARAMETERS_SECRETS_EXTENSION_HTTP_PORT", blank_is_default=True)
    key_cache_seconds: int = setting(60, env="API_KEY_CACHE_SECONDS")
    tenant_policy_cache_seconds: int = 60
    stage: str = "dev"
    # A prod stage refuses the test payment provider and the offline model (it would give credits away
    # and answer with canned text) unless this says it is meant (template.yaml's AllowTestProviders).
    allow_test_providers: bool = False
    # Password hashes: argon2id with RFC 9106's low-memory parameters ("standard"), or light ones
    # ("light": 1 MiB, one pass; the test suite's, hundreds of accounts on two cores; STAGE=prod refuses it).
    password_hashing: str = setting("standard", blank_is_default=True)
    # BYOS storage: the region serving a request, and the probe of a customer's endpoint.
    aws_region: str = setting("us-east-1", env=("AWS_REGION", "AWS_DEFAULT_REGION"), blank_is_default=True)
    allow_loopback_endpoints: bool = False     # loopback endpoints (and http) for local development only
    storage_probe_connect_timeout_seconds: float = 3.0
    storage_probe_read_timeout_seconds: float = 5.0
    # Webhook delivery: seconds before each retry (comma-separated), the HTTP timeout, the dead letters.
    webhook_retry_schedule: str = setting("5,300,1800,7200,18000,36000,36000", blank_is_default=True)
    webhook_timeout_seconds: float = 15.0
    webhook_delivery_dead_letter_queue_url: str = setting("", env="WEBHOOK_DELIVERY_DLQ_URL")
    # Models (svc_core/adapters/models/registry.py): the provider of a bare model id, the default model, the
    # models a tenant may choose, the fallback; where each provider is reached, its keys, one call's time
    # budget; usage records. Unset, the provider is the offline one: only a deployed stack calls a model.
    model_provider: str = setting("offline", blank_is_default=True)
    model_id: str = setting("us.anthropic.claude-haiku-4-5-20251001-v1:0", blank_is_default=True)
    model_allowed_ids: str = ""
    model_fallback_id: str = ""
    model_timeout_seconds: float = setting(30.0, blank_is_default=True)
    model_api_keys_secret: str = ""   # a JSON secret: {"openai": "...", "anthropic": "..."}
    openai_base_url: str = setting("https://api.openai.com/v1", blank_is_default=True)
    openai_api_key_header: str = setting("authorization", blank_is_default=True)   # Azure OpenAI: api-key
    openai_max_tokens_field: str = setting("max_tokens", blank_is_default=True)    # newer OpenAI models: max_completion_tokens
    anthropic_base_url: str = setting("https://api.anthropic.com", blank_is_default=True)
    bedrock_endpoint_url: str = ""    # another server speaking Bedrock's API (local development, tests)
    usage_table: str = "usage"
    # Agent runs, and the project files their tools read and write (platform storage).
    runs_table: str = "runs"
    project_files_bucket: str = "project-files"
    # Runs that go on in the background (the worker's queue), and how long one request or one worker
    # invocation may work on a run before handing the rest to the worker (seconds).
    agent_run_queue_url: str = ""
    agent_run_sync_budget_seconds: float = 20.0
    # Moves of a tenant between cells (domain/tenant_moves.py): the worker's queue; after the switch, how long
    # the clean-up waits before it looks at the old cell's deliveries (the longest run of the webhook
    # delivery and fan-out functions, their Timeout: one that began before the switch has ended by then),
    # and at most for the deliveries still sending or waiting there to be sent on to the new cell; how
    # long it waits for the old cell's outbox to publish the tenant's last events once writes are paused.
    tenant_move_queue_url: str = ""
    tenant_move_delivery_grace_seconds: float = 30.0
    tenant_move_delivery_drain_seconds: float = 300.0
    tenant_move_outbox_drain_seconds: float = 60.0
    agent_run_worker_budget_seconds: float = 600.0
    # Chat: sessions, messages, the stored events of assistant turns, and the queue of turns.
    chat_sessions_table: str = "chat-sessions"
    chat_messages_table: str = "chat-messages"
    chat_events_table: str = "chat-events"
    chat_turn_queue_url: str = ""
    # The chat stream (GET .../chat/sessions/{id}/stream): heartbeat comment, table poll, the longest a
    # stream stays open (the client resumes with Last-Event-ID), the buffered answer's time budget.
    chat_stream_heartbeat_seconds: float = 15.0
    chat_stream_poll_ms: int = 100
    chat_stream_max_seconds: float = 300.0
    chat_stream_buffered_seconds: float = 25.0
    # The event stream (GET /events/stream): how often it reads the log, heartbeat, the longest a stream lasts.
    event_stream_poll_ms: int = 250
    event_stream_heartbeat_seconds: float = 15.0
    event_stream_max_seconds: float = 300.0
    # Streams (every route answering text/event-stream): how many may be open at once per credential and
    # per tenant, and how long a stream's lease lasts unless renewed (a container that died frees its slots then).
    stream_cap_per_credential: int = 10
    stream_cap_per_tenant: int = 50
    stream_lease_seconds: int = 60
    # How often an open stream looks whether its credential still stands (a sign-in ended by a removal,
    # a demotion or a logout; a key revoked): one read of the credential's counter; it ends within this.
    stream_credential_check_seconds: float = 0.5
    # Billing: the ledger's table, Idempotency-Key records, the payment provider ("test": settles at once,
    # says so; "stripe": the Stripe API with the keys in the secret), what a user's first tenant starts with.
    billing_table: str = "billing"
    idempotency_table: str = "idempotency"
    payment_provider: str = setting("test", blank_is_default=True)
    stripe_secret_id: str = "svc/stripe"
    stripe_api_base: str = ""               # empty: Stripe's own; tests point it at a loopback server
    stripe_plan_prices: str = setting("{}", blank_is_default=True)   # JSON {plan: Stripe price id}
    billing_welcome_micro_credits: int = 1_000_000
    # The most tenants one user may create (POST /tenants), their registration's included.
    tenants_per_user: int = 5
    # Sign-in: failures per account and hour from all addresses before attempts on it from addresses it is
    # not known at share one per login_slow_seconds (login_failures_allowed: per account and address in
    # 15 minutes); an address is known for login_known_address_days after the password was given from it.
    login_account_failures_per_hour: int = 50
    login_slow_seconds: int = 5
    login_known_address_days: int = 90
    # A forgotten password: the most reset links e-mailed to one account in an hour (more asks send nothing).
    password_reset_mails_per_hour: int = 3
    # Public routes that create or check credentials, per source address and route group in each rate-limit
    # window, sized for an office behind one address: requests of those that count every request (register,
    # refresh, device login, token exchange); failed sign-ins (401, 429) of login, which counts only those.
    address_rate_limit_per_window: int = 200
    address_sign_in_failures_per_window: int = 50
    # Browser front-ends: the origins (comma-separated scheme://host[:port]) whose pages may call the API
    # with credentials (svc_core.http.cors). Empty: none.
    cors_allowed_origins: str = ""

    def __post_init__(self) -> None:
        if self.password_hashing not in ("standard", "light"):
            raise UnsafeSettings(f"PASSWORD_HASHING={self.password_hashing} is neither standard nor light")
        if self.stage == "prod" and self.password_hashing != "standard":
            raise UnsafeSettings("STAGE=prod refuses PASSWORD_HASHING=light")
        if not 1 <= self.model_timeout_seconds <= 600:
            raise UnsafeSettings(f"MODEL_TIMEOUT_SECONDS={self.model_timeout_seconds} is not between 1 and 600")
        if self.stage == "prod" and not self.allow_test_providers:
            unsafe = [f"{name}={value}" for name, value, test in (
                ("PAYMENT_PROVIDER", self.payment_provider, "test"), ("MODEL_PROVIDER", self.model_provider, "offline"))
                if value == test]
            if unsafe:
                raise UnsafeSettings(f"STAGE=prod refuses {', '.join(unsafe)}: set the real provider, or "
                                     "ALLOW_TEST_PROVIDERS=true (AllowTestProviders) if this is meant")


class UnsafeSettings(ValueError):
    """Settings a stage must not run with: the function fails at start rather than serve with them."""


_PARSE = {"str": str, "int": int, "float": float, "bool": lambda text: text.strip().lower() == "true"}


def variables(name: str) -> tuple[str, ...]:
    """The environment variables a setting is read from, in order."""
    env = next(f for f in fields(Settings) if f.name == name).metadata.get("env") or name.upper()
    return (env,) if isinstance(env, str) else env


def _read(name: str, blank_is_default: bool) -> str | None:
    for variable in variables(name):
        text = os.environ.get(variable)
        if text is not None and (text or not blank_is_default):
            return text
    return None


@lru_cache(maxsize=1)
def settings() -> Settings:
    values = {}
    for f in fields(Settings):
        text = _read(f.name, f.metadata.get("blank_is_default", False))
        if text is not None:
            values[f.name] = _PARSE[f.type](text)
    return Settings(**values)
