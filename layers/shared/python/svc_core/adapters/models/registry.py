"""The models a deployment offers, and the provider that answers each.

A model id is `provider:model`, the provider one of bedrock, openai (Chat Completions: OpenAI, Azure
OpenAI v1, Ollama, vLLM, llama.cpp, LiteLLM) and anthropic (the Messages API); a bare id (no known
provider before its first colon, as Bedrock's `anthropic.claude-...-v1:0`) is one of MODEL_PROVIDER,
the deployment's default provider. `offline` is the offline model; with MODEL_PROVIDER=offline (the
local stack's and the tests' default) every bare id is answered by it.

MODEL_ID is the default model, MODEL_ALLOWED_IDS (comma-separated) the models a tenant may choose
instead (the default is always allowed), MODEL_FALLBACK_ID the model asked once when the chosen one
is throttled or unavailable for a reason that another model may not share (the service failing, not
answering, too slow). A tenant's choice outside the list is a VALIDATION_ERROR. Results, usage
records and prices name the resolved id (`ModelRef.id`: `openai:model`, `anthropic:model`, a Bedrock
id as Bedrock names it, or `offline`), so an answer is metered as the model that gave it.

The base URLs are OPENAI_BASE_URL and ANTHROPIC_BASE_URL (BEDROCK_ENDPOINT_URL only to point
Bedrock's client at another server); the keys are the JSON secret MODEL_API_KEYS_SECRET
({"openai": "...", "anthropic": "..."}), read on first use and cached per container
(adapters/secrets_cache.py), never logged. Each call has one time budget, MODEL_TIMEOUT_SECONDS.

The scripted provider is reachable only through `scripted()` (a test hook), never from the
environment. With SVC_FORBID_REAL_MODEL=1 (set for the whole test run) a provider that would leave
this machine (Bedrock's own endpoint, a base URL that is not loopback) raises.
"""

from __future__ import annotations

import ipaddress
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from svc_core.adapters.models.base import ConverseRequest, ConverseResult, ModelProvider, StreamEvent
from svc_core.adapters.models.bedrock import RealModelForbidden, forbid_if_tests
from svc_core.adapters.models.offline import OfflineProvider
from svc_core.platform import deadline as request_deadline
from svc_core.platform.errors import ModelThrottled, ModelUnavailable, ValidationFailed

PROVIDERS = ("bedrock", "openai", "anthropic", "offline")
CALLING = ("bedrock", "openai", "anthropic")       # the providers that call a model somewhere
FALLBACK_REASONS = frozenset({"service_error", "unreachable", "timeout"})
MIN_FALLBACK_SECONDS = 1.0   # less left of a request's deadline: the fallback is not asked (it could not answer)
_test_provider: list[ModelProvider] = []
_providers: dict[tuple[Any, ...], ModelProvider] = {}   # per container: each keeps its HTTP connections
_lock = threading.Lock()


class ModelConfigurationError(RuntimeError):
    """The deployment's model settings are not usable (a 500: the operator must fix them)."""


@dataclass(frozen=True)
class ModelRef:
    provider: str   # one of PROVIDERS
    name: str       # the provider's own id of the model ("offline" for the offline model)

    @property
    def id(self) -> str:
        """The id results, usage records and prices name: Bedrock's ids as Bedrock names them (as
        they always were: its vendor prefix, `anthropic.` or `us.anthropic.`, keeps them apart),
        the others' prefixed with their provider."""
        return self.name if self.provider in ("bedrock", "offline") else f"{self.provider}:{self.name}"


def default_provider(settings: Any) -> str:
    kind = (settings.model_provider or "").strip().lower()
    if kind not in PROVIDERS:
        raise ModelConfigurationError(f"MODEL_PROVIDER must be one of {', '.join(PROVIDERS)}, not {kind!r}")
    return kind


def resolve(model_id: str, settings: Any) -> ModelRef:
    """The provider and the provider's own name of a model id (prefixed, bare, or "offline")."""
    head, colon, rest = model_id.partition(":")
    if colon and head in CALLING and rest:
        return ModelRef(head, rest)
    kind = default_provider(settings)
    if model_id == "offline" or kind == "offline":
        return ModelRef("offline", "offline")
    return ModelRef(kind, model_id)


def _named(model_id: str, settings: Any) -> tuple[str, str]:
    """(provider, the provider's name) as written: `bedrock:X` and a bare `X` of a Bedrock deployment
    are one model; two bare ids of the offline provider stay two choices."""
    head, colon, rest = model_id.partition(":")
    return (head, rest) if colon and head in CALLING and rest else (default_provider(settings), model_id)


def provider_name(model_id: str, settings: Any) -> str:
    """The model's name as written, without its `provider:` prefix (what the deployment asked for,
    even where the offline model answers a bare id)."""
    return _named(model_id, settings)[1]


def allowed_models(settings: Any) -> list[str]:
    allowed = [m.strip() for m in (settings.model_allowed_ids or "").split(",") if m.strip()]
    return allowed if settings.model_id in allowed else [settings.model_id, *allowed]


def configured_models(settings: Any) -> list[str]:
    """Every model the deployment may call: the allowed ones and the fallback."""
    fallback = (_setting(settings, "model_fallback_id") or "").strip()
    models = allowed_models(settings)
    return [*models, fallback] if fallback and fallback not in models else models


def choose_model(settings: Any, tenant_override: str | None = None, field: str = "model") -> str:
    """The model id to use, as the allowed list names it: the tenant's choice if the deployment
    allows it (in either form: `bedrock:X` and a bare `X` of a Bedrock deployment are one model),
    else the default. field: the name the VALIDATION_ERROR gives the choice ("config.model")."""
    if not tenant_override:
        return settings.model_id
    allowed = allowed_models(settings)
    if tenant_override in allowed:
        return tenant_override
    wanted = _named(tenant_override, settings)
    for model_id in allowed:
        if _named(model_id, settings) == wanted:
            return model_id
    raise ValidationFailed("This model is not available.", {"fields": [
        {"field": field, "in": "body", "reason": f"must be one of: {', '.join(allowed)}"}]})


def provider_for(settings: Any, tenant_override: str | None = None) -> ModelProvider:
    """The provider to call, with the model chosen (validated even when the provider is offline),
    and the fallback model behind it when the deployment names one."""
    model_id = choose_model(settings, tenant_override)
    if _test_provider:
        return _test_provider[-1]
    primary = _provider(resolve(model_id, settings), settings)
    fallback_id = (_setting(settings, "model_fallback_id") or "").strip()
    if fallback_id and resolve(fallback_id, settings) != resolve(model_id, settings):
        return WithFallback(primary, _provider(resolve(fallback_id, settings), settings))
    return primary


def _setting(settings: Any, name: str) -> Any:
    """A model setting, or its default where `settings` is not a whole Settings (a check's namespace)."""
    from svc_core.platform.config import Settings
    return getattr(settings, name, getattr(Settings, name))


def _provider(ref: ModelRef, settings: Any) -> ModelProvider:
    if ref.provider == "offline":
        return OfflineProvider()
    where = tuple(_setting(settings, name) for name in (
        "model_timeout_seconds", "openai_base_url", "anthropic_base_url", "bedrock_endpoint_url",
        "openai_api_key_header", "openai_max_tokens_field", "model_api_keys_secret"))
    with _lock:
        if (ref, where) not in _providers:
            _providers[(ref, where)] = _new_provider(ref, settings)
        return _providers[(ref, where)]


def _new_provider(ref: ModelRef, settings: Any) -> ModelProvider:
    # Each provider's module loads here, on its first call: a function that calls no model never
    # imports httpx's or botocore's model code for it.
    budget = float(_setting(settings, "model_timeout_seconds"))
    if ref.provider == "bedrock":
        from svc_core.adapters.models import bedrock
        endpoint = _setting(settings, "bedrock_endpoint_url") or None
        if endpoint is None or not _is_loopback(endpoint):
            forbid_if_tests()
        return bedrock.BedrockProvider(ref.name, budget_seconds=budget, endpoint_url=endpoint, shown_as=ref.id)
    base_url = _setting(settings, f"{ref.provider}_base_url")
    if not _is_loopback(base_url):
        forbid_if_tests()
    if ref.provider == "openai":
        from svc_core.adapters.models.openai import OpenAIProvider
        return OpenAIProvider(ref.name, base_url, api_key(settings, "openai"), budget_seconds=budget,
                              api_key_header=_setting(settings, "openai_api_key_header"),
                              max_tokens_field=_setting(settings, "openai_max_tokens_field"), shown_as=ref.id)
    from svc_core.adapters.models.anthropic import AnthropicProvider
    return AnthropicProvider(ref.name, api_key(settings, "anthropic") or "", base_url, budget_seconds=budget,
                             shown_as=ref.id)


def api_key(settings: Any, provider: str) -> str | None:
    """The deployment's key for a provider (None: the server takes none, as a local Ollama)."""
    secret = (_setting(settings, "model_api_keys_secret") or "").strip()
    if not secret:
        return None
    from svc_core.adapters import secrets_cache
    keys = secrets_cache.get_json_secret(secret)
    value = keys.get(provider) if isinstance(keys, dict) else None
    return value or None


def _is_loopback(url: str) -> bool:
    host = urllib.parse.urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class WithFallback:
    """The chosen model, and another asked once when it is throttled or unavailable for a reason
    the other may not share. A stream falls back only before its first event: once part of an
    answer was given, the failure is the caller's to see. One per call (provider_for): after
    converse_stream, model_id and name are those of the model whose events it returns."""

    def __init__(self, primary: ModelProvider, fallback: ModelProvider) -> None:
        self.primary, self.fallback = primary, fallback
        self.name, self.model_id = primary.name, primary.model_id

    @staticmethod
    def _reason_to_fall_back(exc: Exception) -> bool:
        return isinstance(exc, ModelThrottled) or (
            isinstance(exc, ModelUnavailable) and exc.details.get("reason") in FALLBACK_REASONS)

    def _log(self, exc: Exception) -> None:
        from svc_core.platform.log import logger
        logger.warning("model fell back", extra={"modelId": self.primary.model_id,
                                                 "fallbackModelId": self.fallback.model_id, "error": exc.code})

    def _falls_back(self, exc: Exception) -> bool:
        """Whether the fallback is asked: a reason it may not share, and time left for it (a synchronous
        request's deadline, svc_core/platform/deadline.py: a fallback gets what the primary left of it)."""
        left = request_deadline.left()
        return self._reason_to_fall_back(exc) and (left is None or left >= MIN_FALLBACK_SECONDS)

    def converse(self, request: ConverseRequest) -> ConverseResult:
        try:
            with request_deadline.share(request_deadline.PRIMARY_SHARE):   # the fallback keeps the rest
                return self.primary.converse(request)
        except (ModelThrottled, ModelUnavailable) as exc:
            if not self._falls_back(exc):
                raise
            self._log(exc)
        return self.fallback.converse(request)

    def converse_stream(self, request: ConverseRequest) -> Iterator[StreamEvent]:
        self.name, self.model_id = self.primary.name, self.primary.model_id
        try:
            with request_deadline.share(request_deadline.PRIMARY_SHARE):   # up to its first event
                events = iter(self.primary.converse_stream(request))
                first = next(events, None)
        except (ModelThrottled, ModelUnavailable) as exc:
            if not self._falls_back(exc):
                raise
            self._log(exc)
            events = iter(self.fallback.converse_stream(request))
            self.name, self.model_id = self.fallback.name, self.fallback.model_id   # what the stream is metered as
            return events
        return _chain(first, events)


def _chain(first: StreamEvent | None, rest: Iterator[StreamEvent]) -> Iterator[StreamEvent]:
    if first is not None:
        yield first
        yield from rest


def forget_providers() -> None:
    """Test hook: build providers afresh (after a change of the model settings)."""
    with _lock:
        _providers.clear()


@contextmanager
def scripted(provider: ModelProvider) -> Iterator[ModelProvider]:
    """Test hook: provider_for answers this provider (e.g. a ScriptedProvider) inside the block."""
    _test_provider.append(provider)
    try:
        yield provider
    finally:
        _test_provider.remove(provider)


__all__ = ["CALLING", "ModelConfigurationError", "ModelRef", "PROVIDERS", "RealModelForbidden", "WithFallback",
           "allowed_models", "api_key", "choose_model", "configured_models", "default_provider", "forget_providers",
           "provider_for", "provider_name", "resolve", "scripted"]
