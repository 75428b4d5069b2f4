"""The audit log's response models (svc_core/domain/models says why they live apart)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from svc_core.domain.models.common import Page, named


class AuditActor(BaseModel):
    type: str = Field(description="user, api_key or service (what the service did on its own)")
    id: str = Field(description="the user (usr_...) or the API key (key_...); `service` for the service",
                    examples=["usr_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])


class AuditTarget(BaseModel):
    type: str = Field(description="what the action changed: api_key, tenant, webhook, secret, purchase, "
                                   "gift_card, user, member, invitation", examples=["api_key"])
    id: str = Field(examples=["key_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])


class AuditEntry(BaseModel):
    """Who did what to which object of the tenant, from where, and which fields changed."""
    id: str = Field(examples=["aud_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
    tenantId: str
    action: str = Field(examples=["api_key.created"])
    actor: AuditActor
    target: AuditTarget
    changes: dict[str, Any] = Field(description="each field changed as {old, new}; never a secret's value "
                                                "(a secret field's value reads [redacted])")
    sourceIp: str = Field(description="the request's source address (empty for what the service did on its own)")
    requestId: str | None = Field(description="the request that made the change (its X-Request-Id)")
    created_at: str = Field(description="ISO 8601 UTC")


AuditEntryPage = named("AuditEntryPage", Page[AuditEntry])


class AuditExport(BaseModel):
    id: str = Field(examples=["aex_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
    url: str = Field(description="downloads the export (JSON Lines: one entry a line, newest first) until expires_at")
    expires_at: str = Field(description="ISO 8601 UTC: the link works 15 minutes")
    entries: int = Field(description="how many entries the export holds (at most 10,000)")
