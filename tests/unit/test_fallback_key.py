"""The local stack's key for a fallback model of another provider (devstack/__main__.py: fallback_key)."""

from __future__ import annotations

from devstack.__main__ import fallback_key


def test_a_fallback_of_another_provider_without_its_key_is_warned_of():
    keys = {"openai": "sk-primary"}
    warning = fallback_key({"ModelProvider": "openai", "ModelFallbackId": "anthropic:claude-haiku-4-5"}, keys, {})
    assert warning and "anthropic:claude-haiku-4-5" in warning and "MODEL_FALLBACK_API_KEY" in warning
    assert keys == {"openai": "sk-primary"}


def test_its_key_from_the_environment_is_the_fallback_providers():
    keys = {"openai": "sk-primary"}
    assert fallback_key({"ModelProvider": "openai", "ModelFallbackId": "anthropic:claude-haiku-4-5"}, keys,
                        {"MODEL_FALLBACK_API_KEY": "sk-ant-fallback"}) is None
    assert keys == {"openai": "sk-primary", "anthropic": "sk-ant-fallback"}


def test_no_warning_where_no_key_is_needed_or_one_is_there():
    assert fallback_key({"ModelProvider": "openai"}, {}, {}) is None                      # no fallback
    assert fallback_key({"ModelFallbackId": "offline"}, {}, {}) is None                   # the offline model
    assert fallback_key({"ModelFallbackId": "bedrock:amazon.nova-micro-v1:0"}, {}, {}) is None  # the role signs
    assert fallback_key({"ModelProvider": "openai", "ModelFallbackId": "gpt-4.1-nano"}, {"openai": "k"}, {}) is None
    # The primary's own provider: as the primary is set up (a local server that takes no key, too).
    assert fallback_key({"ModelProvider": "openai", "ModelFallbackId": "openai:llama3.2"}, {}, {}) is None
