"""The public documents' response models (svc_core/domain/models says why they live apart)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class Health(BaseModel):
    status: Literal["ok"]
    service: str = Field(description="The service name (POWERTOOLS_SERVICE_NAME).")
    stage: str = Field(description="The deployment's stage (dev or prod).")
    version: str = Field(description="The Lambda version that answered ($LATEST outside an alias): during a "
                                     "canary rollout, which of the two did.")
    local: dict[str, Any] | None = Field(default=None, description=(
        "The local stack only: its engine and background pollers, as GET /_local/status shows them. "
        "null on AWS, where the alarms watch the workers."))
