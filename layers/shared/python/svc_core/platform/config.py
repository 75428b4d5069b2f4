"""Deployment settings, read from the environment once per container.

template.yaml sets these variables on every function; the local stack and the tests set the
same names. Nothing else reads os.environ for settings.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Settings:
    projects_table: str
    api_keys_table: str
    rate_limits_table: str
    outbox_table: str
    tenants_table: str
    users_table: str
    sessions_table: str
    cli_sessions_table: str
    webhooks_table: str
    webhook_deliveries_table: str
    webhook_delivery_queue_url: str
    oauth_flows_table: str
    oauth_connections_table: str
    secrets_table: str
    agents_table: str
    oauth_providers: str
    oauth_client_secrets_secret_id: str
    tenant_data_key_id: str
    oauth_http_timeout_seconds: float
    public_base_url: str
    idp_issuer: str
    idp_audience: str
    idp_jwks_url: str
    idp_jwks_cooldown_seconds: int
    refresh_token_days: int
    login_failures_allowed: int
    event_bus_name: str
    event_source: str
    signing_keys_secret_id: str
    key_pepper_secret_id: str
    jwt_issuer: str
    jwt_audience: str
    jwt_lifetime_seconds: int
    rate_limit_per_window: int
    rate_limit_window_seconds: int
    max_body_bytes: int
    secrets_cache_seconds: int
    key_cache_seconds: int
    tenant_policy_cache_seconds: int
    stage: str
    # BYOS storage: the region serving a request, and the probe of a customer's endpoint.
    aws_region: str = "us-east-1"
    allow_loopback_endpoints: bool = False     # loopback endpoints (and http) for local development only
    storage_probe_connect_timeout_seconds: float = 3.0
    storage_probe_read_timeout_seconds: float = 5.0
    # Webhook delivery: seconds before each retry (comma-separated), the HTTP timeout, the dead letters.
    webhook_retry_schedule: str = "5,300,1800,7200,18000,36000,36000"
    webhook_timeout_seconds: float = 15.0
    webhook_delivery_dead_letter_queue_url: str = ""
    # Models (svc_core/adapters/models): the provider, the default model, the models a tenant may choose; usage records.
    # Unset, the provider is the offline one: only a deployed stack (template.yaml) calls Bedrock.
    model_provider: str = "offline"
    model_id: str = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
    model_allowed_ids: str = ""
    usage_table: str = "usage"
    # Agent runs, and the project files their tools read and write (platform storage).
    runs_table: str = "runs"
    project_files_bucket: str = "project-files"
    # Runs that go on in the background (the worker's queue), and how long one request or one worker
    # invocation may work on a run before handing the rest to the worker (seconds).
    agent_run_queue_url: str = ""
    agent_run_sync_budget_seconds: float = 20.0
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
    # Billing: the ledger's table, Idempotency-Key records, the payment provider ("test": settles at once,
    # says so; "stripe": the Stripe API with the keys in the secret), what a new tenant starts with.
    billing_table: str = "billing"
    idempotency_table: str = "idempotency"
    payment_provider: str = "test"
    stripe_secret_id: str = "svc/stripe"
    stripe_api_base: str = ""               # empty: Stripe's own; tests point it at a loopback server
    stripe_plan_prices: str = "{}"          # JSON {plan: Stripe price id}
    billing_welcome_micro_credits: int = 1_000_000
    # Sign-in: failures per account and hour from all addresses before attempts on it are slowed to one
    # per login_slow_seconds (login_failures_allowed: per account and address in 15 minutes).
    login_account_failures_per_hour: int = 50
    login_slow_seconds: int = 5
    # Public routes that create or check credentials (register, sign-in, refresh, device login, token
    # exchange): requests per source address and route group in each rate-limit window.
    address_rate_limit_per_window: int = 30
    # Browser front-ends: the origins (comma-separated scheme://host[:port]) whose pages may call the API
    # with credentials (svc_core.http.cors). Empty: none.
    cors_allowed_origins: str = ""


def _int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


@lru_cache(maxsize=1)
def settings() -> Settings:
    env = os.environ.get
    return Settings(
        projects_table=env("PROJECTS_TABLE", "projects"),
        api_keys_table=env("API_KEYS_TABLE", "api-keys"),
        rate_limits_table=env("RATE_LIMITS_TABLE", "rate-limits"),
        outbox_table=env("OUTBOX_TABLE", "outbox"),
        tenants_table=env("TENANTS_TABLE", "tenants"),
        users_table=env("USERS_TABLE", "users"),
        sessions_table=env("SESSIONS_TABLE", "sessions"),
        webhooks_table=env("WEBHOOKS_TABLE", "webhooks"),
        webhook_deliveries_table=env("WEBHOOK_DELIVERIES_TABLE", "webhook-deliveries"),
        webhook_delivery_queue_url=env("WEBHOOK_DELIVERY_QUEUE_URL", ""),
        cli_sessions_table=env("CLI_SESSIONS_TABLE", "cli-sessions"),
        oauth_flows_table=env("OAUTH_FLOWS_TABLE", "oauth-flows"),
        oauth_connections_table=env("OAUTH_CONNECTIONS_TABLE", "oauth-connections"),
        secrets_table=env("SECRETS_TABLE", "secrets"),
        agents_table=env("AGENTS_TABLE", "agents"),
        oauth_providers=env("OAUTH_PROVIDERS", "[]"),  # JSON list; parsed by domain/oauth_connections.py
        oauth_client_secrets_secret_id=env("OAUTH_CLIENT_SECRETS_SECRET_ID", "svc/oauth-client-secrets"),
        tenant_data_key_id=env("TENANT_DATA_KEY_ID", "alias/svc-tenant-data"),
        oauth_http_timeout_seconds=float(env("OAUTH_HTTP_TIMEOUT_SECONDS", "5")),
        public_base_url=env("PUBLIC_BASE_URL", ""),
        idp_issuer=env("IDP_ISSUER", ""),
        idp_audience=env("IDP_AUDIENCE", ""),
        idp_jwks_url=env("IDP_JWKS_URL", ""),
        idp_jwks_cooldown_seconds=_int("IDP_JWKS_COOLDOWN_SECONDS", 30),
        refresh_token_days=_int("REFRESH_TOKEN_DAYS", 30),
        login_failures_allowed=_int("LOGIN_FAILURES_ALLOWED", 5),
        event_bus_name=env("EVENT_BUS_NAME", "svc-events"),
        event_source=env("EVENT_SOURCE", "svc.api"),
        signing_keys_secret_id=env("SIGNING_KEYS_SECRET_ID", "svc/jwt-signing-keys"),
        key_pepper_secret_id=env("KEY_PEPPER_SECRET_ID", "svc/api-key-pepper"),
        jwt_issuer=env("JWT_ISSUER", "https://api.svc.local"),
        jwt_audience=env("JWT_AUDIENCE", "svc-api"),
        jwt_lifetime_seconds=_int("JWT_LIFETIME_SECONDS", 900),
        rate_limit_per_window=_int("RATE_LIMIT_PER_WINDOW", 1000),
        rate_limit_window_seconds=_int("RATE_LIMIT_WINDOW_SECONDS", 60),
        max_body_bytes=_int("MAX_BODY_BYTES", 256 * 1024),
        secrets_cache_seconds=_int("SECRETS_CACHE_SECONDS", 300),
        key_cache_seconds=_int("API_KEY_CACHE_SECONDS", 60),
        tenant_policy_cache_seconds=_int("TENANT_POLICY_CACHE_SECONDS", 60),
        stage=env("STAGE", "dev"),
        aws_region=env("AWS_REGION") or env("AWS_DEFAULT_REGION") or "us-east-1",
        allow_loopback_endpoints=env("ALLOW_LOOPBACK_ENDPOINTS", "false").strip().lower() == "true",
        storage_probe_connect_timeout_seconds=float(env("STORAGE_PROBE_CONNECT_TIMEOUT_SECONDS", "3")),
        storage_probe_read_timeout_seconds=float(env("STORAGE_PROBE_READ_TIMEOUT_SECONDS", "5")),
        webhook_retry_schedule=env("WEBHOOK_RETRY_SCHEDULE") or "5,300,1800,7200,18000,36000,36000",
        webhook_timeout_seconds=float(env("WEBHOOK_TIMEOUT_SECONDS", "15")),
        webhook_delivery_dead_letter_queue_url=env("WEBHOOK_DELIVERY_DLQ_URL", ""),
        model_provider=env("MODEL_PROVIDER") or "offline",
        model_id=env("MODEL_ID") or Settings.model_id,
        model_allowed_ids=env("MODEL_ALLOWED_IDS", ""),
        usage_table=env("USAGE_TABLE", "usage"),
        runs_table=env("RUNS_TABLE", "runs"),
        project_files_bucket=env("PROJECT_FILES_BUCKET", "project-files"),
        agent_run_queue_url=env("AGENT_RUN_QUEUE_URL", ""),
        agent_run_sync_budget_seconds=float(env("AGENT_RUN_SYNC_BUDGET_SECONDS", "20")),
        agent_run_worker_budget_seconds=float(env("AGENT_RUN_WORKER_BUDGET_SECONDS", "600")),
        chat_sessions_table=env("CHAT_SESSIONS_TABLE", "chat-sessions"),
        chat_messages_table=env("CHAT_MESSAGES_TABLE", "chat-messages"),
        chat_events_table=env("CHAT_EVENTS_TABLE", "chat-events"),
        chat_turn_queue_url=env("CHAT_TURN_QUEUE_URL", ""),
        chat_stream_heartbeat_seconds=float(env("CHAT_STREAM_HEARTBEAT_SECONDS", "15")),
        chat_stream_poll_ms=_int("CHAT_STREAM_POLL_MS", 100),
        chat_stream_max_seconds=float(env("CHAT_STREAM_MAX_SECONDS", "300")),
        chat_stream_buffered_seconds=float(env("CHAT_STREAM_BUFFERED_SECONDS", "25")),
        billing_table=env("BILLING_TABLE", "billing"),
        idempotency_table=env("IDEMPOTENCY_TABLE", "idempotency"),
        payment_provider=env("PAYMENT_PROVIDER") or "test",
        stripe_secret_id=env("STRIPE_SECRET_ID", "svc/stripe"),
        stripe_api_base=env("STRIPE_API_BASE", ""),
        stripe_plan_prices=env("STRIPE_PLAN_PRICES") or "{}",
        billing_welcome_micro_credits=_int("BILLING_WELCOME_MICRO_CREDITS", 1_000_000),
        address_rate_limit_per_window=_int("ADDRESS_RATE_LIMIT_PER_WINDOW", 30),
        login_account_failures_per_hour=_int("LOGIN_ACCOUNT_FAILURES_PER_HOUR", 50),
        login_slow_seconds=_int("LOGIN_SLOW_SECONDS", 5),
        cors_allowed_origins=env("CORS_ALLOWED_ORIGINS", ""),
    )
