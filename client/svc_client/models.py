"""Typed views of the API's resources.

Attributes are snake_case; the JSON names follow the API's rule (timestamps keep their
snake_case `_at` names, every other field is camelCase). Fields the service adds later are kept
(extra="allow"), so an older client does not break on a newer server; `.raw()` gives the JSON.
"""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


def _alias(name: str) -> str:
    return name if name.endswith("_at") else to_camel(name)


class ApiModel(BaseModel):
    model_config = ConfigDict(alias_generator=_alias, populate_by_name=True, extra="allow")

    def raw(self) -> dict[str, Any]:
        """The JSON object as the API names its fields."""
        return self.model_dump(by_alias=True, mode="json")


T = TypeVar("T")


class Page(ApiModel, Generic[T]):
    items: list[T]
    next_cursor: str | None = None


class Deleted(ApiModel):
    id: str
    deleted: bool


# ---- projects, agents, runs -------------------------------------------------------------

class Project(ApiModel):
    id: str
    name: str
    description: str | None = None
    language: str | None = None
    created_at: str
    updated_at: str | None = None


class AgentConfig(ApiModel):
    autonomy_level: str
    model: str | None = None
    step_limit: int | None = None
    tools: list[str] | None = None


class Agent(ApiModel):
    id: str
    name: str
    system_prompt: str
    config: AgentConfig
    created_at: str
    updated_at: str | None = None


class RunUsage(ApiModel):
    input_tokens: int = 0
    output_tokens: int = 0
    micro_credits: int = 0


class RunError(ApiModel):
    code: str
    message: str
    retry_after_seconds: int | None = None   # MODEL_THROTTLED: the provider's wait (at most 60 s)


class Run(ApiModel):
    id: str
    agent_id: str
    project_id: str
    goal: str
    status: str
    output: str | None = None
    steps: list[dict[str, Any]] = Field(default_factory=list)
    usage: RunUsage = Field(default_factory=RunUsage)
    model: str | None = None
    created_at: str
    completed_at: str | None = None
    error: RunError | None = None
    background: bool = False
    cancel_requested: bool = False


# ---- identity ------------------------------------------------------------------------------

class User(ApiModel):
    id: str
    email: str | None = None
    name: str | None = None
    status: str | None = None
    created_at: str | None = None


class TenantSummary(ApiModel):
    id: str
    name: str
    plan: str | None = None
    status: str | None = None
    role: str | None = None


class Me(ApiModel):
    credential: str
    user: User | None = None
    tenant: TenantSummary
    tenants: list[TenantSummary] = Field(default_factory=list)
    scopes: list[str] = Field(default_factory=list)


class TokenGrant(ApiModel):
    """An access token and its life in seconds (login, refresh, exchange)."""
    access_token: str = Field(repr=False)
    token_type: str = "Bearer"
    expires_in: int | None = None
    refresh_token: str | None = Field(default=None, repr=False)
    refresh_expires_in: int | None = None
    user: User | None = None
    tenant: TenantSummary | None = None


class LoggedOut(ApiModel):
    logged_out: bool
    session_id: str | None = None


class PasswordResetRequested(ApiModel):
    """The answer to a forgotten password's request: the same whether or not the address has an account."""
    email: str
    expires_in: int


class PasswordReset(ApiModel):
    """A password set with a reset link: the account's address (to sign in with next)."""
    email: str
    sessions_ended: int


class PasswordChanged(ApiModel):
    sessions_ended: int
    current_session_id: str | None = None


class SignInSession(ApiModel):
    """An open sign-in of the user (a refresh-token family); `current` is the caller's."""
    id: str
    current: bool
    tenant_id: str
    current_tenant_id: str
    created_at: str
    last_refreshed_at: str
    expires_at: str


class OtherSessionsEnded(ApiModel):
    sessions_ended: int
    current_session_id: str | None = None


class DeviceLoginStarted(ApiModel):
    login_id: str
    auth_url: str
    verification_code: str
    expires_in: int = 600
    interval: int = 5


class DeviceLoginStatus(ApiModel):
    login_id: str
    status: Literal["pending", "approved", "expired", "consumed"] | str
    # With status expired: "timed_out", or "denied" when the user denied it in the browser.
    reason: str | None = None


class CliToken(ApiModel):
    token: str = Field(repr=False)
    key_id: str
    user: User
    tenant: TenantSummary


# ---- API keys ------------------------------------------------------------------------------

class EarlierValue(ApiModel):
    """A value a rotation replaced that still works, until works_until (its overlap)."""
    hint: str | None = None
    works_until: str


class ApiKey(ApiModel):
    id: str
    name: str
    type: str
    environment: str
    scopes: list[str] = Field(default_factory=list)
    tenant_id: str | None = None
    created_by: str | None = None
    hint: str | None = None
    status: str
    created_at: str
    last_used_at: str | None = None
    last_used_ip: str | None = None
    expires_at: str | None = None
    revoked_at: str | None = None
    rotated_at: str | None = None
    earlier_values: list[EarlierValue] = Field(default_factory=list)


class ApiKeyWithSecret(ApiKey):
    key: str = Field(repr=False)


# ---- tenants, regions, storage ----------------------------------------------------------------

class TenantSettings(ApiModel):
    display_name: str | None = None
    default_project_language: str | None = None
    ip_allowlist: list[str] = Field(default_factory=list)
    billing_email: str | None = None
    timezone: str = "UTC"


class PlanDetails(ApiModel):
    plan: str
    features: list[str] = Field(default_factory=list)
    limits: dict[str, Any] = Field(default_factory=dict)


class Tenant(ApiModel):
    id: str
    name: str
    plan: str
    status: str
    role: str | None = None
    settings: TenantSettings = Field(default_factory=TenantSettings)
    plan_details: PlanDetails | None = None
    created_at: str
    updated_at: str | None = None


class Region(ApiModel):
    id: str
    name: str
    jurisdiction: str
    compliance_levels: list[str] = Field(default_factory=list)
    available: bool = True


class RegionList(ApiModel):
    items: list[Region]
    next_cursor: str | None = None
    default_region: str | None = None
    jurisdictions: list[str] = Field(default_factory=list)


class RegionalPreferences(ApiModel):
    tenant_id: str
    primary_region: str
    secondary_region: str | None = None
    data_residency_required: bool = False
    data_residency_region: str | None = None
    compliance_level: str = "standard"
    is_default: bool = False
    updated_at: str | None = None


class StorageConfig(ApiModel):
    tenant_id: str
    storage_mode: str
    platform_region: str | None = None
    byos_provider: str | None = None
    byos_endpoint: str | None = None
    byos_bucket: str | None = None
    byos_region: str | None = None
    byos_access_key_set: bool = False
    byos_secret_key_set: bool = False
    byos_access_key_last4: str | None = None
    is_default: bool = False
    updated_at: str | None = None


class StorageValidation(ApiModel):
    ok: bool
    source: str
    byos_provider: str | None = None
    byos_endpoint: str | None = None
    byos_bucket: str | None = None
    steps: list[dict[str, Any]] = Field(default_factory=list)
    checked_at: str | None = None


class FeatureCheck(ApiModel):
    feature_key: str
    enabled: bool
    current_plan: str
    required_plan: str | None = None
    description: str | None = None


class RoutingInfo(ApiModel):
    request_id: str
    serving_region: str
    home_region: str | None = None       # the cell holding the tenant's data
    home_base_url: str | None = None     # that cell's URL (null: a single-cell deployment)
    stage: str
    api_version: str
    tenant_id: str
    plan: str
    primary_region: str
    secondary_region: str | None = None
    data_residency: dict[str, Any] = Field(default_factory=dict)
    storage: dict[str, Any] = Field(default_factory=dict)


# ---- members, invitations, the audit log ---------------------------------------------------

class Member(ApiModel):
    user_id: str
    email: str | None = None
    name: str | None = None
    role: str
    joined_at: str


class MemberRemoved(ApiModel):
    user_id: str
    removed: bool
    sessions_ended: int
    cli_keys_revoked: int
    api_keys_revoked: int = 0


class OwnershipTransferred(ApiModel):
    previous_owner: Member
    new_owner: Member


class Invitation(ApiModel):
    id: str
    email: str
    role: str
    status: str
    invited_by: str
    created_at: str
    expires_at: str


class InvitationLookup(ApiModel):
    tenant_name: str
    role: str
    email: str
    expires_at: str
    account_exists: bool


class AuditActor(ApiModel):
    type: str
    id: str


class AuditTarget(ApiModel):
    type: str
    id: str


class AuditEntry(ApiModel):
    id: str
    tenant_id: str
    action: str
    actor: AuditActor
    target: AuditTarget
    changes: dict[str, Any] = Field(default_factory=dict)
    source_ip: str = ""
    request_id: str | None = None
    created_at: str


class AuditExport(ApiModel):
    id: str
    url: str
    expires_at: str
    entries: int


# ---- webhooks, secrets ---------------------------------------------------------------------

class Webhook(ApiModel):
    id: str
    url: str
    events: list[str]
    enabled: bool = True
    description: str | None = None
    disabled_reason: str | None = None
    disabled_at: str | None = None
    first_failure_at: str | None = None
    version: int = 1
    created_at: str
    updated_at: str | None = None


class WebhookCreated(Webhook):
    """The create's answer: `secret` is the one the service generated (shown this once), None when
    you supplied it."""
    secret: str | None = Field(default=None, repr=False)


class WebhookRotated(Webhook):
    secret: str | None = Field(default=None, repr=False)
    previous_secrets_expire_at: str | None = None


class DeliveryAttempt(ApiModel):
    event_id: str
    event_type: str
    attempt: int
    outcome: str
    status_code: int | None = None
    latency_ms: int | None = None
    error: str | None = None
    next_retry_at: str | None = None
    attempted_at: str
    resent_by: str | None = None


class Event(ApiModel):
    """An event of the event log, as the webhooks carry it: {id, type, timestamp, tenantId, data}."""
    id: str
    type: str
    timestamp: str
    tenant_id: str
    data: dict[str, Any] = Field(default_factory=dict)


class Redelivery(ApiModel):
    id: str
    webhook_id: str
    event_id: str
    event_type: str


class Replay(ApiModel):
    """A replay's progress: done when status is completed and delivered + failed == queued."""
    id: str
    webhook_id: str
    status: str
    since: str
    until: str
    only_failed: bool
    matched: int
    queued: int
    skipped: int
    delivered: int
    failed: int
    created_at: str
    completed_at: str | None = None

    @property
    def done(self) -> bool:
        return self.status == "completed" and self.delivered + self.failed == self.queued


class QueuedEvent(ApiModel):
    id: str
    type: str
    timestamp: str
    tenant_id: str
    data: dict[str, Any] = Field(default_factory=dict)


class Secret(ApiModel):
    id: str
    name: str
    description: str | None = None
    version: int = 1
    created_at: str
    updated_at: str | None = None


class OAuthConnection(ApiModel):
    id: str
    provider: str
    user_id: str | None = None
    scopes: list[str] = Field(default_factory=list)
    token_type: str | None = None
    has_refresh_token: bool = False
    created_at: str
    access_token_expires_at: str | None = None


# ---- chat and billing (fields as the service answers them; unknown ones are kept) --------------

class ChatTurn(ApiModel):
    message_id: str
    first_event_id: int


class ChatMessage(ApiModel):
    id: str
    role: str
    content: str | None = None
    status: str | None = None
    project_id: str | None = None
    user_message_id: str | None = None
    usage: dict[str, Any] | None = None
    model: str | None = None
    error: dict[str, Any] | None = None
    first_event_id: int | None = None
    last_event_id: int | None = None
    created_at: str | None = None
    completed_at: str | None = None


class ChatSession(ApiModel):
    id: str
    title: str | None = None
    project_id: str | None = None
    agent_id: str | None = None
    last_event_id: int = 0
    active_turn: ChatTurn | None = None
    latest_turn: ChatTurn | None = None
    messages: list[ChatMessage] | None = None   # GET /chat/sessions/:id: the newest 100, oldest first
    messages_truncated: bool | None = None
    created_at: str | None = None
    updated_at: str | None = None


class ChatSent(ApiModel):
    """POST /chat/sessions/:id/messages: both messages (the assistant's pending) and the stream."""
    user_message: ChatMessage
    assistant_message: ChatMessage
    stream_url: str | None = None


class StreamToken(ApiModel):
    token: str = Field(repr=False)
    expires_at: str | None = None
    stream_url: str | None = None


class BillingBalance(ApiModel):
    micro_credits: int
    credits: str  # the same, as a decimal string of credits


class BillingUsage(ApiModel):
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    micro_credits: int = 0


class BillingPeriodUsage(ApiModel):
    period_start: str
    period_end: str
    agent_runs: BillingUsage
    chat: BillingUsage
    total_micro_credits: int


class Subscription(ApiModel):
    plan: str
    status: str
    pending_plan: str | None = None
    current_period_start: str | None = None
    current_period_end: str | None = None
    hosted_url: str | None = None
    invoice_id: str | None = None
    provider: str | None = None
    test_mode: bool = False


class BillingPack(ApiModel):
    id: str
    credits: int
    amount: int
    currency: str


class BillingSummary(ApiModel):
    plan: str
    subscription: Subscription
    balance: BillingBalance
    usage: BillingPeriodUsage
    next_charge: dict[str, Any] | None = None
    packs: list[BillingPack] = Field(default_factory=list)
    currency: str
    test_mode: bool = False


class BillingUsageDay(ApiModel):
    date: str
    model: str
    calls: int
    input_tokens: int = 0
    output_tokens: int = 0
    micro_credits: int = 0


class BillingUsageSeries(ApiModel):
    """Metered model calls per UTC day and model (a day without calls of a model has no entry)."""
    from_: str = Field(alias="from")
    to: str
    models: list[str] = Field(default_factory=list)
    days: list[BillingUsageDay] = Field(default_factory=list)


class Invoice(ApiModel):
    id: str
    number: str
    period_start: str | None = None
    period_end: str | None = None
    currency: str
    amount: int  # cents
    status: str
    lines: list[dict[str, Any]] = Field(default_factory=list)
    hosted_url: str | None = None
    reference: str | None = None
    provider: str | None = None
    test_mode: bool = False
    created_at: str


class LedgerEntry(ApiModel):
    id: str
    kind: str
    amount: int  # micro-credits
    principal: str
    request_id: str | None = None
    reason: str
    reference: str | None = None
    created_at: str


class Purchase(ApiModel):
    id: str
    status: str
    credits: int
    micro_credits: int
    amount: int
    currency: str
    checkout_url: str | None = None
    invoice_id: str | None = None
    provider: str | None = None
    test_mode: bool = False
    created_at: str
    settled_at: str | None = None


class Redemption(ApiModel):
    gift_card_id: str
    micro_credits: int
    entry_id: str
    balance: BillingBalance


class PortalSession(ApiModel):
    url: str
    test_mode: bool = False
