"""The models a deployment offers across providers: ids, the tenant's choice, prices checked before
any call, the fallback model, and the guard that keeps the tests off real providers."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from svc_core.adapters.models import registry
from svc_core.adapters.models.base import ConverseResult
from svc_core.adapters.models.registry import ModelConfigurationError, ModelRef, WithFallback
from svc_core.domain import metering
from svc_core.platform.errors import ModelThrottled, ModelUnavailable, ValidationFailed

HAIKU = "us.anthropic.claude-haiku-4-5-20251001-v1:0"


def settings_with(**values) -> SimpleNamespace:
    base = {"model_provider": "openai", "model_id": "gpt-4.1-mini", "model_allowed_ids": "",
            "model_fallback_id": "", "openai_base_url": "http://127.0.0.1:9/v1",
            "anthropic_base_url": "http://127.0.0.1:9", "bedrock_endpoint_url": "http://127.0.0.1:9",
            "model_api_keys_secret": "", "model_timeout_seconds": 5.0}
    return SimpleNamespace(**{**base, **values})


@pytest.mark.parametrize("model_id, provider, expected", [
    ("gpt-4.1-mini", "openai", ModelRef("openai", "gpt-4.1-mini")),                  # bare: the default provider's
    ("anthropic:claude-haiku-4-5", "openai", ModelRef("anthropic", "claude-haiku-4-5")),
    (f"bedrock:{HAIKU}", "openai", ModelRef("bedrock", HAIKU)),
    (HAIKU, "bedrock", ModelRef("bedrock", HAIKU)),                                 # its ':0' is no provider
    ("openai:llama3.1:8b", "bedrock", ModelRef("openai", "llama3.1:8b")),           # an Ollama tag stays whole
    ("gpt-4.1-mini", "offline", ModelRef("offline", "offline")),                    # offline answers every bare id
    ("openai:gpt-4.1-mini", "offline", ModelRef("openai", "gpt-4.1-mini")),         # a prefix wins
])
def test_a_model_id_names_its_provider_or_is_the_default_providers(model_id, provider, expected):
    assert registry.resolve(model_id, settings_with(model_provider=provider)) == expected


def test_results_name_bedrock_models_as_bedrock_does_and_the_others_with_their_provider():
    assert ModelRef("bedrock", HAIKU).id == HAIKU
    assert ModelRef("openai", "gpt-4.1-mini").id == "openai:gpt-4.1-mini"
    assert ModelRef("anthropic", "claude-haiku-4-5").id == "anthropic:claude-haiku-4-5"
    assert ModelRef("offline", "offline").id == "offline"


def test_a_tenant_chooses_among_the_allowed_models_of_every_provider_in_either_form():
    settings = settings_with(model_provider="bedrock", model_id=HAIKU,
                             model_allowed_ids="openai:gpt-4.1-mini,anthropic:claude-haiku-4-5")
    assert registry.choose_model(settings, "openai:gpt-4.1-mini") == "openai:gpt-4.1-mini"
    assert registry.choose_model(settings, f"bedrock:{HAIKU}") == HAIKU          # the allowed list's form
    for refused in ("gpt-4.1-mini", "anthropic:claude-sonnet-4-5", "openai:gpt-4.1"):   # bare = bedrock's here
        with pytest.raises(ValidationFailed) as error:
            registry.choose_model(settings, refused, field="config.model")
        assert error.value.details["fields"][0]["field"] == "config.model"


def test_an_unknown_provider_is_a_configuration_error():
    with pytest.raises(ModelConfigurationError, match="MODEL_PROVIDER"):
        registry.resolve("x", settings_with(model_provider="azure"))


def test_every_offered_model_needs_a_price_and_the_refusal_names_each_missing_one():
    priced = settings_with(model_allowed_ids="anthropic:claude-haiku-4-5,openai:llama3.1",
                           model_fallback_id=f"bedrock:{HAIKU}")
    metering.check_models(priced)
    unpriced = settings_with(model_allowed_ids="openai:my-finetune,anthropic:claude-haiku-4-5",
                             model_fallback_id="nope")
    assert metering.unpriced_models(unpriced) == ["openai:my-finetune", "nope (openai:nope)"]
    with pytest.raises(ModelConfigurationError) as refused:
        metering.check_models(unpriced)
    assert "openai:my-finetune" in str(refused.value) and metering.CURRENT in str(refused.value)


@pytest.mark.parametrize("model_id", [
    "us.offline", "global.openai:gpt-4.1-nano", "eu.anthropic:claude-haiku-4-5", "us.openai:llama3.1",
    "apac.offline", "us.anthropic.claude-unknown-v1:0", "xx.anthropic.claude-haiku-4-5-20251001-v1:0",
    "us.us.anthropic.claude-haiku-4-5-20251001-v1:0",
])
def test_a_price_is_the_exact_ids_or_a_bedrock_inference_profiles_of_its_model_and_nothing_else(model_id):
    with pytest.raises(metering.UnpricedModel):
        metering.price_of(model_id)
    for profile in ("us", "eu", "apac", "jp", "au", "ca", "us-gov", "global"):
        assert metering.price_of(f"{profile}.anthropic.claude-haiku-4-5-20251001-v1:0") == \
            metering.price_of("anthropic.claude-haiku-4-5-20251001-v1:0")
    assert metering.profile_model("global.openai:gpt-4.1-nano") is None
    assert metering.profile_model(HAIKU) == "anthropic.claude-haiku-4-5-20251001-v1:0"


@pytest.mark.parametrize("provider", ["bedrock", "openai", "anthropic", "offline"])
def test_an_id_with_an_unknown_prefix_is_refused_whichever_provider_answers_it(provider):
    """The deploy check, the local stack's start and the check before a call (check_models) all
    refuse it: `us.offline` is no model of any provider, even where the offline model would answer."""
    for model_id in ("us.offline", "global.openai:gpt-4.1-nano", "eu.anthropic:claude-haiku-4-5",
                     "bedrock:us.offline"):
        settings = settings_with(model_provider=provider, model_id="offline" if provider == "offline" else HAIKU,
                                 model_allowed_ids=f"bedrock:{HAIKU}" if provider != "bedrock" else "",
                                 model_fallback_id=model_id)
        if provider in ("openai", "anthropic"):
            settings.model_id = f"bedrock:{HAIKU}"
        assert metering.unpriced_models(settings), (provider, model_id)
        with pytest.raises(ModelConfigurationError, match="no price"):
            metering.check_models(settings)
    fine = settings_with(model_provider=provider, model_id=f"bedrock:{HAIKU}",
                         model_allowed_ids="bedrock:eu.anthropic.claude-haiku-4-5-20251001-v1:0")
    assert metering.unpriced_models(fine) == []


@pytest.mark.parametrize("provider, model_id", [("openai", "not-in-the-table"), ("bedrock", "us.offline"),
                                                ("bedrock", "global.openai:gpt-4.1-nano")])
def test_an_unpriced_model_is_refused_before_the_provider_is_ever_made(monkeypatch, provider, model_id):
    made = []
    monkeypatch.setattr(registry, "_new_provider", lambda ref, settings: made.append(ref))
    settings = settings_with(model_provider=provider, model_id=model_id)
    with pytest.raises(ModelConfigurationError):
        metering.require_priced_models(settings)
    assert made == []


def test_prices_of_the_new_providers_and_the_old_versions_records_unchanged():
    usage = {"inputTokens": 1000, "outputTokens": 1000, "cacheReadInputTokens": 1000}
    assert metering.cost(usage, "openai:gpt-4.1-mini") == 400 + 1_600 + 100
    assert metering.cost(usage, "anthropic:claude-haiku-4-5") == 1_000 + 5_000 + 100
    assert metering.cost(usage, HAIKU) == metering.cost(usage, HAIKU, version="2026-11-01")
    assert metering.cost(usage, "openai:llama3.1") == metering.cost(usage, "offline")   # self-hosted: nominal
    with pytest.raises(metering.UnpricedModel):
        metering.cost(usage, "openai:gpt-4.1-mini", version="2026-11-01")   # a version never changes


def test_the_tests_cannot_reach_a_provider_off_this_machine(monkeypatch):
    registry.forget_providers()
    for provider, setting in (("openai", "openai_base_url"), ("anthropic", "anthropic_base_url")):
        settings = settings_with(model_provider=provider, model_id="m", **{setting: "https://api.example.com"})
        with pytest.raises(registry.RealModelForbidden):
            registry.provider_for(settings)
    with pytest.raises(registry.RealModelForbidden):
        registry.provider_for(settings_with(model_provider="bedrock", model_id=HAIKU, bedrock_endpoint_url=""))
    loopback = registry.provider_for(settings_with(model_provider="openai", model_id="m"))
    assert (loopback.name, loopback.model_id, loopback.model) == ("openai", "openai:m", "m")
    registry.forget_providers()


class Fails:
    def __init__(self, name: str, error: Exception | None) -> None:
        self.name, self.model_id, self.error, self.calls = "openai", name, error, 0

    def converse(self, request):
        self.calls += 1
        if self.error:
            raise self.error
        return ConverseResult({"role": "assistant", "content": [{"text": "ok"}]}, "end_turn",
                              {"inputTokens": 1, "outputTokens": 1}, self.model_id, self.name)

    def converse_stream(self, request):
        self.calls += 1
        if self.error:
            raise self.error
        return iter([{"messageStart": {"role": "assistant"}}, {"messageStop": {"stopReason": "end_turn"}}])


@pytest.mark.parametrize("error, falls_back", [
    (ModelThrottled(details={"model": "a"}), True),
    (ModelUnavailable("x", {"model": "a", "reason": "service_error"}), True),
    (ModelUnavailable("x", {"model": "a", "reason": "unreachable"}), True),
    (ModelUnavailable("x", {"model": "a", "reason": "timeout"}), True),
    (ModelUnavailable("x", {"model": "a", "reason": "invalid_request"}), False),   # the other would refuse it too
    (ModelUnavailable("x", {"model": "a", "reason": "credentials"}), False),       # the operator's to fix
])
def test_the_fallback_answers_only_what_another_model_may_not_share(error, falls_back):
    primary, fallback = Fails("openai:a", error), Fails("openai:b", None)
    both = WithFallback(primary, fallback)
    if falls_back:
        assert both.converse({}).model_id == "openai:b"           # metered as the model that answered
        events = list(both.converse_stream({}))
        assert events[0] == {"messageStart": {"role": "assistant"}} and both.model_id == "openai:b"
    else:
        with pytest.raises(type(error)):
            both.converse({})
        assert fallback.calls == 0


def test_the_fallback_is_not_asked_when_the_chosen_model_answers():
    primary, fallback = Fails("openai:a", None), Fails("openai:b", None)
    both = WithFallback(primary, fallback)
    assert both.converse({}).model_id == "openai:a"
    list(both.converse_stream({}))
    assert both.model_id == "openai:a" and fallback.calls == 0
