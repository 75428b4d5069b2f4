"""Operational metrics as CloudWatch Embedded Metric Format (EMF) lines on stdout.

Lambda sends stdout to CloudWatch Logs, which extracts the metrics from each line: no API call,
nothing on the request's path but one print. Namespace POWERTOOLS_METRICS_NAMESPACE (template.yaml:
SvcApi), dimension `service` plus the ones named below. Each emission is its own Powertools
EphemeralMetrics (no shared buffer), so threads (a batch's deliveries, the local stack's gateway)
never mix their metrics, and nothing waits for a flush at the end of an invocation.

The metrics (docs/deploying.md, "Metrics"):
  Requests (Count), Latency (Milliseconds)     by StatusClass (2xx...); the route is a field of the line
  RateLimitRefusals (Count)                    the 429s the service answers itself; the route is a field
  WebhookDeliveries (Count)                    by Outcome (delivered, retrying, failed, disabled, skipped)
  WebhookDeliveryLatency (Milliseconds)        by Outcome, for attempts that reached the endpoint
  AgentRuns (Count)                            by Outcome (completed, failed, cancelled)
  ModelInputTokens, ModelOutputTokens (Count)  by Model and Source (run, chat)
  CreditsDebited (Count, micro-credits)        by Source
The route, the exact status, a tenant or a request id are never dimensions (each value would be a
metric billed on its own, every month: by route, 117 routes made 241 metrics, $72 of an idle
deployment's $81 a month, docs/costs.md): they are in the line's other fields, for CloudWatch Logs
Insights. API Gateway's own metrics (free) count each stage's requests, errors and latency.

Powertools itself is already loaded by the logger (`import aws_lambda_powertools` brings its metrics
package), so this module adds nothing measurable to a cold start (tests/unit/test_import_sets.py).
"""

from __future__ import annotations

import warnings
from typing import Any

from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit

DEFAULT_NAMESPACE = "SvcApi"  # template.yaml's POWERTOOLS_METRICS_NAMESPACE, for a process without it


def emit(metrics: dict[str, tuple[float, MetricUnit]], dimensions: dict[str, str],
         fields: dict[str, Any] | None = None) -> None:
    """One EMF line: these metrics (name: (value, unit)) under these dimensions, with extra fields.
    A metric that cannot be written is dropped with a warning, never an error of the caller's work."""
    try:
        emf = EphemeralMetrics()
        emf.namespace = emf.namespace or DEFAULT_NAMESPACE
        for name, value in dimensions.items():
            emf.add_dimension(name=name, value=value)
        for name, (value, unit) in metrics.items():
            emf.add_metric(name=name, unit=unit, value=value)
        for name, value in (fields or {}).items():
            emf.add_metadata(key=name, value=value)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            emf.flush_metrics()
    except Exception as exc:
        warnings.warn(f"metric not written: {exc}", stacklevel=2)


def request(method: str, resource: str, status: int, latency_ms: float, request_id: str | None = None) -> None:
    route = f"{method} {resource}"
    fields = {"route": route, "status": status, "request_id": request_id}
    emit({"Requests": (1, MetricUnit.Count), "Latency": (latency_ms, MetricUnit.Milliseconds)},
         {"StatusClass": f"{status // 100}xx"}, fields)
    if status == 429:
        emit({"RateLimitRefusals": (1, MetricUnit.Count)}, {}, fields)


def webhook_delivery(outcome: str, latency_ms: float | None) -> None:
    metrics = {"WebhookDeliveries": (1, MetricUnit.Count)}
    if latency_ms is not None:
        metrics["WebhookDeliveryLatency"] = (latency_ms, MetricUnit.Milliseconds)
    emit(metrics, {"Outcome": outcome})


def agent_run(outcome: str, run_id: str) -> None:
    emit({"AgentRuns": (1, MetricUnit.Count)}, {"Outcome": outcome}, {"run_id": run_id})


def model_call(source: str, model: str, input_tokens: int, output_tokens: int, micro_credits: int) -> None:
    emit({"ModelInputTokens": (input_tokens, MetricUnit.Count), "ModelOutputTokens": (output_tokens, MetricUnit.Count)},
         {"Model": model, "Source": source})
    emit({"CreditsDebited": (micro_credits, MetricUnit.Count)}, {"Source": source}, {"unit": "micro-credits"})
