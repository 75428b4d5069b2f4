"""Receiving webhooks: verify a delivery's Standard Webhooks signature and read it as a typed event.

    from svc_client import verify_webhook
    event = verify_webhook(request.body, request.headers, secret="whsec_...")
    if isinstance(event, ProjectEvent):
        print(event.type, event.data.name)

Verification is the `standardwebhooks` reference implementation: the HMAC-SHA256 signature over
"<webhook-id>.<webhook-timestamp>.<body>" with the secret's key (the decoded bytes of a `whsec_...`
secret, the UTF-8 bytes of a plain one; any of several signatures during
a secret rotation), and a timestamp within 5 minutes. Deduplicate by `event.id` (= webhook-id).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from pydantic import Field
from standardwebhooks import Webhook as _Verifier

from svc_client.errors import WebhookVerificationError
from svc_client.models import ApiModel, Project, RunError, RunUsage, Tenant, User

# The event names the service sends, as its catalogue has them (a test holds the two alike); a
# webhook subscribes to some of them, or to "*"; webhook.test is sent by `svc webhooks test` only.
EVENT_TYPES = (
    "project.created", "project.updated", "project.deleted",
    "agent.started", "agent.completed", "agent.failed",
    "tenant.created", "user.created",
    "member.added", "member.removed", "member.role_changed",
)


def example_events(count: int = 2) -> list[str]:
    """Event names for a help text's examples: the first of each kind in the catalogue, so a help
    names only events that exist."""
    first_of_kind: dict[str, str] = {}
    for name in EVENT_TYPES:
        first_of_kind.setdefault(name.split(".")[0], name)
    return list(first_of_kind.values())[:count]


class WebhookEvent(ApiModel):
    """Any event: `{id, type, timestamp, tenantId, data}`; `data` as sent."""
    id: str
    type: str
    timestamp: str
    tenant_id: str
    data: Any = Field(default_factory=dict)


class ProjectEventData(Project):
    changes: list[str] | None = None   # the names of the fields the change sent


class ProjectEvent(WebhookEvent):
    """project.created, project.updated (with `changes`), project.deleted."""
    data: ProjectEventData


class AgentRunEventData(ApiModel):
    run_id: str
    agent_id: str
    project_id: str
    status: str
    model: str | None = None
    usage: RunUsage | None = None
    output: str | None = None
    error: RunError | None = None
    created_at: str | None = None
    completed_at: str | None = None


class AgentRunEvent(WebhookEvent):
    """agent.started, agent.completed, agent.failed."""
    data: AgentRunEventData


class TenantEvent(WebhookEvent):
    data: Tenant


class UserEvent(WebhookEvent):
    data: User


class MemberEventData(ApiModel):
    """member.added: the member's userId, role, tenantId and email; member.role_changed: userId, role and
    previousRole; member.removed: userId, role and reason (removed or left)."""
    user_id: str
    role: str
    tenant_id: str | None = None
    email: str | None = None
    previous_role: str | None = None
    reason: str | None = None


class MemberEvent(WebhookEvent):
    """member.added, member.role_changed, member.removed."""
    data: MemberEventData


class WebhookTestData(ApiModel):
    webhook_id: str
    message: str


class WebhookTestEvent(WebhookEvent):
    data: WebhookTestData


AnyWebhookEvent = (ProjectEvent | AgentRunEvent | TenantEvent | UserEvent | MemberEvent | WebhookTestEvent
                   | WebhookEvent)

_BY_PREFIX: dict[str, type[WebhookEvent]] = {"project.": ProjectEvent, "agent.": AgentRunEvent,
                                             "tenant.": TenantEvent, "user.": UserEvent, "member.": MemberEvent,
                                             "webhook.test": WebhookTestEvent}


def parse_webhook_event(payload: Mapping[str, Any]) -> AnyWebhookEvent:
    """An already verified payload as its typed event (WebhookEvent for a type not known here)."""
    kind = str(payload.get("type", ""))
    for prefix, cls in _BY_PREFIX.items():
        if kind.startswith(prefix):
            return cls.model_validate(payload)
    return WebhookEvent.model_validate(payload)


def signing_key(secret: str | bytes) -> bytes:
    """The HMAC key of a webhook secret: the base64-decoded part of a `whsec_...` (Standard Webhooks)
    secret, the UTF-8 bytes of a plain secret you chose (32 to 256 characters), bytes as given."""
    if isinstance(secret, bytes):
        return secret
    if secret.startswith("whsec_"):
        return base64.b64decode(secret.removeprefix("whsec_") + "==")
    return secret.encode("utf-8")


def verify_webhook(body: bytes | str, headers: Mapping[str, str], secret: str | bytes) -> AnyWebhookEvent:
    """Checks the signature and timestamp of a delivery, then parses it. Raises
    WebhookVerificationError when it does not verify (never parse an unverified body).
    `body` must be the raw bytes received, not re-serialised JSON. `secret` is the webhook's secret
    in either form (`whsec_...` or a plain one); see `signing_key`."""
    raw = body.decode() if isinstance(body, bytes) else body
    lowered = {k.lower(): v for k, v in headers.items()}
    try:
        # The library base64-decodes any str it is given; bytes are the key itself.
        payload = _Verifier(signing_key(secret)).verify(raw, lowered)
    except Exception as exc:  # the library raises its own WebhookVerificationError (and ValueError on bad input)
        raise WebhookVerificationError(f"the webhook delivery does not verify: {exc}") from exc
    return parse_webhook_event(payload)
