"""Webhooks' request and response models, a replay's and a redelivery's too (svc_core/domain/models
says why they live apart)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field, StringConstraints, WithJsonSchema

from svc_core.adapters import webhook_url
from svc_core.contracts.events import EVENT_TYPES
from svc_core.domain import events
from svc_core.domain.fields.webhooks import (
    ALL_EVENTS,
    DEFAULT_OVERLAP_SECONDS,
    MAX_DESCRIPTION,
    MAX_OVERLAP_SECONDS,
    PLAIN_SECRET_MAX,
    PLAIN_SECRET_MIN,
    PLAIN_SECRET_PATTERN,
    SECRET_MAX_BYTES,
    SECRET_MIN_BYTES,
    SECRET_PREFIX,
    WHSEC_PATTERN,
    secret_problem,
)
from svc_core.domain.models.request_body import DocumentedPattern, PatchBody, RequestBody, description_text, whole_number


def _secret(text: str) -> str:
    problem = secret_problem(text)
    if problem:
        raise ValueError(problem)
    return text


def _events(names: list[str]) -> list[str]:
    """Each name once, in the order given; "*" stands for all and alone."""
    return [ALL_EVENTS] if ALL_EVENTS in names else list(dict.fromkeys(names))


EventName = Literal[EVENT_TYPES + (ALL_EVENTS,)]  # type: ignore[valid-type]
# The pattern is documented, and check_url applies it (with a reason and a code for each refusal).
Url = Annotated[str, StringConstraints(max_length=webhook_url.MAX_URL), DocumentedPattern(webhook_url.PATTERN)]
Events = Annotated[list[EventName], Field(min_length=1, max_length=len(EVENT_TYPES) + 1),  # type: ignore[valid-type]
                   AfterValidator(_events)]
Secret = Annotated[str, AfterValidator(_secret), WithJsonSchema({"anyOf": [
    {"type": "string", "pattern": WHSEC_PATTERN, "title": "Standard Webhooks secret"},
    {"type": "string", "minLength": PLAIN_SECRET_MIN, "maxLength": PLAIN_SECRET_MAX, "pattern": PLAIN_SECRET_PATTERN,
     "title": "Plain secret"}]})]
Description = description_text(MAX_DESCRIPTION)

URL_HELP = webhook_url.HELP
EVENTS_HELP = "event names (" + ", ".join(EVENT_TYPES) + ") or \"*\" for all; at least one"
SECRET_HELP = (f"Recommended: the Standard Webhooks form, {SECRET_PREFIX} + standard base64 of {SECRET_MIN_BYTES} "
               f"to {SECRET_MAX_BYTES} random bytes (the HMAC key is the decoded bytes). Also accepted: any "
               f"{PLAIN_SECRET_MIN} to {PLAIN_SECRET_MAX} printable ASCII characters without whitespace, not "
               f"starting with {SECRET_PREFIX} in any case (the HMAC key is the secret's UTF-8 bytes). Stored "
               "sealed, never "
               "answered")
DESCRIPTION_HELP = f"at most {MAX_DESCRIPTION} characters"


class WebhookCreate(RequestBody):
    url: Url = Field(description=URL_HELP, examples=["https://hooks.example.com/svc?token=abc"])
    events: Events = Field(description=EVENTS_HELP, examples=[["project.created", "project.deleted"]])
    # repr=False: the secret stays out of every repr of the body
    secret: Secret = Field(None, repr=False, description=SECRET_HELP + "; left out, the service generates "  # type: ignore[assignment]
                                                      "a whsec_ secret and answers it this once")
    description: Description | None = Field(None, description=DESCRIPTION_HELP)


class WebhookUpdate(PatchBody):
    """Only the fields sent change; url, events and enabled may be left out, not set to null."""
    url: Url = Field(None, description=URL_HELP)  # type: ignore[assignment]
    events: Events = Field(None, description=EVENTS_HELP)  # type: ignore[assignment]
    enabled: bool = Field(None, description="false stops deliveries; true resumes them and clears "  # type: ignore[assignment]
                                            "disabledReason, disabled_at and first_failure_at")
    description: Description | None = Field(None, description=DESCRIPTION_HELP, examples=["Release announcements"])


class WebhookRotate(RequestBody):
    secret: Secret = Field(None, repr=False, description="the new secret; left out, the service "  # type: ignore[assignment]
                                                         "generates one and answers it this once")
    overlapSeconds: whole_number(0, MAX_OVERLAP_SECONDS) = Field(  # type: ignore[valid-type]
        default=DEFAULT_OVERLAP_SECONDS, description="how long the previous secrets keep signing (0 to 7 days; "
                                                     "0 ends them now)")


class Webhook(BaseModel):
    id: str = Field(examples=["whk_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
    url: str
    events: list[str]
    enabled: bool
    description: str | None
    disabledReason: str | None = Field(description="why deliveries stopped, while enabled is false")
    disabled_at: str | None = Field(description="ISO 8601 UTC; while enabled is false")
    first_failure_at: str | None = Field(description="the first failed delivery of the current run of failures "
                                                     "(null once one succeeds)")
    version: int = Field(description="1 at creation; each change adds 1")
    created_at: str = Field(description="ISO 8601 UTC")
    updated_at: str = Field(description="ISO 8601 UTC")


class WebhookCreated(Webhook):
    secret: str | None = Field(description="the secret when the service generated it (answered this once); "
                                           "null when the request supplied it")


class WebhookRotated(Webhook):
    secret: str | None = Field(description="the new secret when the service generated it (answered this once); "
                                           "null when the request supplied it")
    previous_secrets_expire_at: str | None = Field(description="when the last previous secret stops signing "
                                                               "(null: none does any more)")


class WebhookPage(BaseModel):
    items: list[Webhook]
    nextCursor: str | None


class WebhookDeleted(BaseModel):
    id: str
    deleted: bool


class TestEventData(BaseModel):
    webhookId: str
    message: str


class TestEvent(BaseModel):
    id: str = Field(examples=["evt_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
    type: Literal["webhook.test"]
    timestamp: str
    tenantId: str
    data: TestEventData


class DeliveryAttempt(BaseModel):
    eventId: str
    eventType: str
    attempt: int = Field(description="1 for the first attempt of this event to this webhook")
    outcome: str = Field(description="delivered, retrying, failed, disabled or skipped")
    statusCode: int | None = Field(description="the receiver's HTTP status; null when no answer came")
    latencyMs: int | None
    error: str | None = Field(description="what went wrong, when something did")
    next_retry_at: str | None = Field(description="ISO 8601 UTC; when the next attempt is due, if one is")
    attempted_at: str = Field(description="ISO 8601 UTC")
    resentBy: str | None = Field(description="the redelivery (rdl_...) or replay (rpl_...) that sent the event "
                                             "again; null for the event's own delivery")


class DeliveryPage(BaseModel):
    items: list[DeliveryAttempt]
    nextCursor: str | None


class ReplayRequest(RequestBody):
    since: str = Field(pattern=events.TIME_PATTERN, description="replay events from this time (ISO 8601 with its "
                                                                  "offset); the log keeps 30 days",
                       examples=["2026-11-25T10:00:00Z"])
    until: str | None = Field(None, pattern=events.TIME_PATTERN, description="up to this time (included); "
                                                                            "left out: now",
                              examples=["2026-11-25T11:00:00Z"])
    onlyFailed: bool = Field(False, description="only the events never delivered to this webhook")


class Replay(BaseModel):
    id: str = Field(examples=["rpl_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
    webhookId: str
    status: str = Field(description="running or completed")
    since: str
    until: str
    onlyFailed: bool
    matched: int = Field(description="events of the range the webhook wants, looked at so far")
    queued: int = Field(description="events queued for the webhook by this replay")
    skipped: int = Field(description="events not queued: delivered already (onlyFailed), or queued by another replay")
    delivered: int = Field(description="queued events delivered")
    failed: int = Field(description="queued events whose delivery failed for good")
    created_at: str
    completed_at: str | None = Field(description="when every matching event was queued")


class Redelivery(BaseModel):
    id: str = Field(examples=["rdl_01JD2Q7ZB6V8S3K4X9W2M5N7PA"], description="this resend's id (the attempts' resentBy)")
    webhookId: str
    eventId: str
    eventType: str
