"""Token metering: the versioned price table and the cost of one model call, in micro-credits.

Prices are integer micro-credits (millionths of a credit) per 1,000 tokens, per model, for each
kind of token: input, output, cache read, cache write. A version of the table never changes once
used: a new price is a new version, and every usage record names the version it was priced with,
so the billing can always recompute a record.

Version 2026-11-01: one credit is one US dollar of Amazon Bedrock's on-demand list price (no
margin); cross-region inference profiles ("us.", "eu.", "apac.", "global." ...) cost what the model
costs. The offline model has a nominal, non-zero price (a tenth of the cheapest real model) so the
local stack shows costs flowing through runs and messages; its records are also marked estimated.

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
CURRENT = "2026-11-01"

_PROFILE_PREFIX = re.compile(r"^(?:us|eu|apac|jp|au|ca|us-gov|global)\.")


class UnpricedModel(LookupError):
    """A model with no price in this version of the table (a deployment error, never billed at 0)."""


def price_of(model_id: str, version: str = CURRENT) -> Price:
    try:
        table = PRICES[version]
    except KeyError:
        raise UnpricedModel(f"no price table version {version!r}") from None
    price = table.get(model_id) or table.get(_PROFILE_PREFIX.sub("", model_id))
    if price is None:
        raise UnpricedModel(f"{model_id!r} has no price in version {version}")
    return price


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
                 version: str = CURRENT, now: float | None = None) -> dict[str, Any]:
    """The usage record of one model call (what data/usage_table.py stores)."""
    if source not in SOURCES or not ids.is_id(source_id, SOURCES[source]):
        raise ValueError(f"a {source!r} usage record needs a {SOURCES.get(source, '?')}_ id, not {source_id!r}")
    created_at = timeutil.iso(timeutil.now() if now is None else now)
    return {"tenantId": tenant_id, "sk": f"{created_at}#{ids.new_ulid()}", "source": source, "sourceId": source_id,
            "model": model_id, **tokens(usage), "estimated": bool(usage.get("estimated", False)),
            "priceVersion": version, "microCredits": cost(usage, model_id, version), "created_at": created_at}


def record_call(tenant_id: str, source: str, source_id: str, result: Any) -> dict[str, Any]:
    """Meter one model call (a ConverseResult): price it, store its usage record and debit its cost
    from the tenant's credit balance, in one transaction (svc_core/domain/billing_ledger.py);
    returns the record."""
    record = usage_record(tenant_id, source, source_id, result.model_id, result.usage)
    billing_ledger.record_usage(record)
    from svc_core.platform import metrics  # on first use: not a start-up import
    metrics.model_call(source, record["model"], record["inputTokens"], record["outputTokens"], record["microCredits"])
    return record


def require_credit(tenant_id: str) -> None:
    """Before a run or a chat message calls a model: 402 PAYMENT_REQUIRED when the balance is used up."""
    billing_ledger.require_credit(tenant_id)
