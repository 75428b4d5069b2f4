"""Metered model calls made at a chosen time, as the metering makes them: the usage record and its
debit in one transaction (svc_core/domain/billing_ledger.py), for tests of what reads the records."""

from __future__ import annotations

from datetime import datetime

RUN = "run_01JD2Q7ZB6V8S3K4X9W2M5N7PA"


def metered(tenant: str, model: str, at: str | None, input_tokens: int, output_tokens: int) -> dict:
    """One call of `model` for the tenant at the ISO time `at` (None: now); its stored record."""
    from svc_core.domain import billing_ledger, metering
    now = None if at is None else datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp()
    record = metering.usage_record(tenant, "run", RUN, model, {"inputTokens": input_tokens,
                                                               "outputTokens": output_tokens}, now=now)
    billing_ledger.record_usage(record)
    return record


def day_of(date: str, model: str, *records: dict) -> dict:
    """The usage series' entry for these records of one day and model."""
    return {"date": date, "model": model, "calls": len(records),
            "inputTokens": sum(r["inputTokens"] for r in records),
            "outputTokens": sum(r["outputTokens"] for r in records),
            "microCredits": sum(r["microCredits"] for r in records)}
