"""Token metering: the versioned price table and the cost of one model call, in micro-credits.

Prices are integer micro-credits (millionths of a credit) per 1,000 tokens, per model, for each
kind of token: input, output, cache read, cache write. A version of the table never changes once
used: a new price is a new version, and every usage record names the version it was priced with,
so the billing can always recompute a record.

One credit is one US dollar of the provider's list price (no margin). Models are named as results
name them (svc_core/adapters/models/registry.py): Bedrock's ids bare, the others `openai:model` and
`anthropic:model`.

- 2026-11-01: Amazon Bedrock's on-demand prices; Bedrock's cross-region inference profiles ("us.",
  "eu.", "apac.", "global." ...) of a foundation model in the table cost what the model costs (price_of:
  the only rule besides the exact id). The offline model has a nominal, non-zero price
  (a tenth of the cheapest real model) so the local stack shows costs flowing through runs and
  messages; its records are also marked estimated.
- 2026-11-27: the same, and OpenAI's and Anthropic's own list prices (OpenAI charges nothing for
  writing its cache: its cache-write price is its input price, never used). Models served by the
  deployment's own servers through the openai provider (Ollama, vLLM, llama.cpp) cost the offline
  model's nominal price: the tokens are counted and limited as any model's.

A deployment can only offer priced models: every allowed model and the fallback must have a price in
CURRENT when a function that calls models starts and when the stack is deployed or started
(check_models), so nothing is ever called that cannot be billed. To offer another model, add a
version with its price (docs/models-and-metering.md).

Rounding: the cost of one call is sum(tokens x price per 1,000) / 1,000, rounded up once, in integer
arithmetic (a call costs at most 1 micro-credit more than its exact price, never less). A run's or a
message's cost is the sum of its calls' integers, so totals always equal the sum of the records.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from svc_core.domain import billing_ledger
from svc_core.platform import ids, timeutil


@dataclass(frozen=True)
class Price:
    """Micro-credits per 1,000 tokens."""
    input: int
    output: int
    cache_read: int
    cache_write: int


PRICES: dict[str, dict[str, Price]] = {
    "2026-11-01": {
        "anthropic.claude-haiku-4-5-20251001-v1:0": Price(input=1_000, output=5_000, cache_read=100, cache_write=1_250),
        "anthropic.claude-sonnet-4-5-20250929-v1:0": Price(input=3_000, output=15_000, cache_read=300,
                                                           cache_write=3_750),
        "anthropic.claude-3-5-haiku-20241022-v1:0": Price(input=800, output=4_000, cache_read=80, cache_write=1_000),
        "offline": Price(input=80, output=400, cache_read=8, cache_write=100),
    },
}
_SELF_HOSTED = Price(input=80, output=400, cache_read=8, cache_write=100)   # the offline model's
PRICES["2026-11-27"] = {
    **PRICES["2026-11-01"],
    "openai:gpt-4.1": Price(input=2_000, output=8_000, cache_read=500, cache_write=2_000),
    "openai:gpt-4.1-mini": Price(input=400, output=1_600, cache_read=100, cache_write=400),
    "openai:gpt-4.1-nano": Price(input=100, output=400, cache_read=25, cache_write=100),
    "openai:gpt-4o": Price(input=2_500, output=10_000, cache_read=1_250, cache_write=2_500),
    "openai:gpt-4o-mini": Price(input=150, output=600, cache_read=75, cache_write=150),
    "anthropic:claude-haiku-4-5": Price(input=1_000, output=5_000, cache_read=100, cache_write=1_250),
    "anthropic:claude-haiku-4-5-20251001": Price(input=1_000, output=5_000, cache_read=100, cache_write=1_250),
    "anthropic:claude-sonnet-4-5": Price(input=3_000, output=15_000, cache_read=300, cache_write=3_750),
    "anthropic:claude-sonnet-4-5-20250929": Price(input=3_000, output=15_000, cache_read=300, cache_write=3_750),
    "anthropic:claude-3-5-haiku-20241022": Price(input=800, output=4_000, cache_read=80, cache_write=1_000),
    **{f"openai:{name}": _SELF_HOSTED for name in (
        "llama3.1", "llama3.1:8b", "llama3.2", "llama3.2:3b", "qwen2.5", "qwen2.5:7b", "qwen3", "qwen3:8b",
        "mistral", "gpt-oss:20b", "meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-7B-Instruct",
        "Qwen/Qwen3-0.6B")},
}
CURRENT = "2026-11-27"

# The inference-profile rule, the only one besides the exact id: a cross-region inference profile of
# Bedrock ("us.", "eu.", "apac.", "jp.", "au.", "ca.", "us-gov.", "global.") followed by a Bedrock
# foundation model id (`vendor.model...`, as `anthropic.claude-haiku-4-5-20251001-v1:0`: a vendor, a
# dot, the vendor's name of the model) costs what that model costs. Nothing else is stripped: `us.offline`,
# `global.openai:gpt-4.1-nano` or `eu.anthropic:claude-haiku-4-5` name no Bedrock foundation model and
# have no price.
_INFERENCE_PROFILE = re.compile(r"^(?:us|eu|apac|jp|au|ca|us-gov|global)\.(?P<model>[a-z0-9-]+\.[^.:][^:]*(?::\d+)?)$")


_PROFILE_HEAD = re.compile(r"^(?:us|eu|apac|jp|au|ca|us-gov|global)\.")


class UnpricedModel(LookupError):
    """A model with no price in this version of the table (a deployment error, never billed at 0)."""


def profile_model(model_id: str) -> str | None:
    """The Bedrock foundation model an inference profile id names (`us.anthropic.claude-...` ->
    `anthropic.claude-...`), or None when the id is not one."""
    match = _INFERENCE_PROFILE.match(model_id)
    return match["model"] if match else None


def price_of(model_id: str, version: str = CURRENT) -> Price:
    """The price of a model as results name it: its own id's, or, for a Bedrock inference profile of a
    foundation model in the table, that model's (the only rule; any other id is unpriced)."""
    try:
        table = PRICES[version]
    except KeyError:
        raise UnpricedModel(f"no price table version {version!r}") from None
    price = table.get(model_id)
    if price is None:
        foundation = profile_model(model_id)
        price = table.get(foundation) if foundation is not None else None
    if price is None:
        raise UnpricedModel(f"{model_id!r} has no price in version {version}")
    return price


def unpriced_models(settings: Any, version: str = CURRENT) -> list[str]:
    """The models the deployment may call (registry.configured_models) that have no price, each as
    the allowed list names it and, when it differs, as results would name it."""
    from svc_core.adapters.models import registry  # on use: not a start-up import of every function
    missing = []
    for model_id in registry.configured_models(settings):
        shown = registry.resolve(model_id, settings).id
        try:
            price_of(shown, version)
            # An id written as an inference profile must be one even where the offline model answers
            # it (a bare id of MODEL_PROVIDER=offline): `us.offline` is no model of any provider.
            written = registry.provider_name(model_id, settings)
            if _PROFILE_HEAD.match(written) and written != shown:
                price_of(written, version)
        except UnpricedModel:
            missing.append(model_id if shown == model_id else f"{model_id} ({shown})")
    return missing


def check_models(settings: Any) -> None:
    """Refuse a deployment that could call a model it cannot bill (and one with an unknown provider)."""
    from svc_core.adapters.models import registry
    registry.default_provider(settings)   # raises ModelConfigurationError for an unknown MODEL_PROVIDER
    missing = unpriced_models(settings)
    if missing:
        raise registry.ModelConfigurationError(
            f"no price in version {CURRENT} of the price table (svc_core/domain/metering.py) for "
            f"{', '.join(missing)}: a model that cannot be billed is never offered. Add its price as a new "
            "version (docs/models-and-metering.md), or leave it out of ModelId / ModelAllowedIds / "
            "ModelFallbackId.")


_checked: set[tuple[str, ...]] = set()


def require_priced_models(settings: Any) -> None:
    """check_models, once per container and model settings: before the first model call of a
    function, so an unpriced model is refused before it is ever called (a 500 that says why in the log)."""
    key = (settings.model_provider, settings.model_id, settings.model_allowed_ids, settings.model_fallback_id)
    if key not in _checked:
        check_models(settings)
        _checked.add(key)


def tokens(usage: Mapping[str, Any]) -> dict[str, int]:
    """The four counts of a Converse usage, as the usage record names them."""
    return {"inputTokens": int(usage.get("inputTokens") or 0), "outputTokens": int(usage.get("outputTokens") or 0),
            "cacheReadTokens": int(usage.get("cacheReadInputTokens") or 0),
            "cacheWriteTokens": int(usage.get("cacheWriteInputTokens") or 0)}


def cost(usage: Mapping[str, Any], model_id: str, version: str = CURRENT) -> int:
    """Micro-credits of one call: the exact price rounded up to a whole micro-credit."""
    price, counts = price_of(model_id, version), tokens(usage)
    if any(n < 0 for n in counts.values()):
        raise ValueError("token counts cannot be negative")
    thousandths = (counts["inputTokens"] * price.input + counts["outputTokens"] * price.output
                   + counts["cacheReadTokens"] * price.cache_read + counts["cacheWriteTokens"] * price.cache_write)
    return -(-thousandths // 1000)


SOURCES = {"run": "run", "message": "msg"}   # what a call was made for -> the prefix of its id


def usage_record(tenant_id: str, source: str, source_id: str, model_id: str, usage: Mapping[str, Any],
                 version: str = CURRENT, now: float | None = None, failed: bool = False) -> dict[str, Any]:
    """The usage record of one model call (what data/usage_table.py stores); failed: the call failed
    after the provider had counted tokens, and what it had received is billed (base.Received)."""
    if source not in SOURCES or not ids.is_id(source_id, SOURCES[source]):
        raise ValueError(f"a {source!r} usage record needs a {SOURCES.get(source, '?')}_ id, not {source_id!r}")
    created_at = timeutil.iso(timeutil.now() if now is None else now)
    return {"tenantId": tenant_id, "sk": f"{created_at}#{ids.new_ulid()}", "source": source, "sourceId": source_id,
            "model": model_id, **tokens(usage), "estimated": bool(usage.get("estimated", False)),
            "priceVersion": version, "microCredits": cost(usage, model_id, version), "created_at": created_at,
            "failed": failed}


def record_call(tenant_id: str, source: str, source_id: str, result: Any) -> dict[str, Any]:
    """Meter one model call (a ConverseResult, or what a failed call had received: base.billable):
    price it, store its usage record and debit its cost from the tenant's credit balance, in one
    transaction (svc_core/domain/billing_ledger.py); returns the record."""
    record = usage_record(tenant_id, source, source_id, result.model_id, result.usage,
                          failed=bool(getattr(result, "failed", False)))
    billing_ledger.record_usage(record)
    from svc_core.platform import metrics  # on first use: not a start-up import
    metrics.model_call(source, record["model"], record["inputTokens"], record["outputTokens"], record["microCredits"])
    return record


def require_credit(tenant_id: str) -> None:
    """Before a run or a chat message calls a model: 402 PAYMENT_REQUIRED when the balance is used up."""
    billing_ledger.require_credit(tenant_id)
