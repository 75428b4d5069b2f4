"""The model provider of a deployment, and of a tenant within what the deployment allows.

MODEL_PROVIDER is "bedrock" (the template's default) or "offline" (the local stack, the tests);
MODEL_ID is the default model, MODEL_ALLOWED_IDS (comma-separated) the models a tenant may choose
instead (the default is always allowed). A tenant's choice outside the list is a VALIDATION_ERROR.

The scripted provider is reachable only through `scripted()` (a test hook), never from the
environment. With SVC_FORBID_REAL_MODEL=1 (set for the whole test run) asking for Bedrock raises.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from svc_core.adapters.models.base import ModelProvider
from svc_core.adapters.models.bedrock import BedrockProvider, RealModelForbidden, forbid_if_tests
from svc_core.adapters.models.offline import OfflineProvider
from svc_core.platform.errors import ValidationFailed

PROVIDERS = ("bedrock", "offline")
_test_provider: list[ModelProvider] = []


class ModelConfigurationError(RuntimeError):
    """The deployment's model settings are not usable (a 500: the operator must fix them)."""


def allowed_models(settings: Any) -> list[str]:
    allowed = [m.strip() for m in (settings.model_allowed_ids or "").split(",") if m.strip()]
    return allowed if settings.model_id in allowed else [settings.model_id, *allowed]


def choose_model(settings: Any, tenant_override: str | None = None, field: str = "model") -> str:
    """The model id to use: the tenant's choice if the deployment allows it, else the default.
    field: the name the VALIDATION_ERROR gives the choice (e.g. "config.model" in an agent's body)."""
    if not tenant_override:
        return settings.model_id
    allowed = allowed_models(settings)
    if tenant_override not in allowed:
        raise ValidationFailed("This model is not available.", {"fields": [
            {"field": field, "in": "body", "reason": f"must be one of: {', '.join(allowed)}"}]})
    return tenant_override


def provider_for(settings: Any, tenant_override: str | None = None) -> ModelProvider:
    """The provider to call, with the model chosen (validated even when the provider is offline)."""
    model_id = choose_model(settings, tenant_override)
    if _test_provider:
        return _test_provider[-1]
    kind = (settings.model_provider or "").strip().lower()
    if kind == "offline":
        return OfflineProvider()
    if kind == "bedrock":
        forbid_if_tests()
        return BedrockProvider(model_id)
    raise ModelConfigurationError(f"MODEL_PROVIDER must be one of {', '.join(PROVIDERS)}, not {kind!r}")


@contextmanager
def scripted(provider: ModelProvider) -> Iterator[ModelProvider]:
    """Test hook: provider_for answers this provider (e.g. a ScriptedProvider) inside the block."""
    _test_provider.append(provider)
    try:
        yield provider
    finally:
        _test_provider.remove(provider)


__all__ = ["ModelConfigurationError", "RealModelForbidden", "allowed_models", "choose_model", "provider_for",
           "scripted"]
