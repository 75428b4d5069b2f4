"""What each invocation consumes of what AWS bills, recorded as the local stack runs it (bench/cost.py
prices it).

With DEVSTACK_METER=DIR the local stack appends one JSON line per invocation to DIR/<pid>.jsonl:

    {"function", "started" (epoch s), "ms" (the handler's time), "cold", "source" ("api" or the event
     source: aws:sqs, aws:dynamodb, ...), "route" (method and resource, for an API event), "status",
     "requestBytes", "responseBytes", "logBytes" (what the handler wrote to stdout: its log lines and
     metrics), "metrics" (each EMF metric by namespace, name and dimensions), "calls": [...]}

and each AWS call made in it: {"service", "operation", "ms", "overhead" (made by the layer's authentication
or rate limits, svc_core/auth, rather than the route's own work), "status", "units" (DynamoDB's
ConsumedCapacity: read and write units by table and index, as the engine answered them), "chunks"
(SQS and EventBridge bill a request per 64 KB of its payload; SES a message per recipient)}.

DynamoDB is asked for its ConsumedCapacity on every call that takes ReturnConsumedCapacity (INDEXES:
the table's and each index's units), which changes nothing else of the answer. Calls outside any
invocation (provisioning, the pollers' own reads) are not recorded: they are what Lambda's event source
mappings do for the deployment, priced apart (docs/costs.md).
"""

from __future__ import annotations

import contextvars
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_current: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("devstack_meter", default=None)
_write_lock = threading.Lock()
_installed: list[bool] = []

CHUNK = 64 * 1024
_CAPACITY_OPERATIONS = {"GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan", "BatchGetItem",
                        "BatchWriteItem", "TransactGetItems", "TransactWriteItems", "ExecuteStatement",
                        "BatchExecuteStatement", "ExecuteTransaction"}
_AUTH_CODE = os.sep + os.path.join("svc_core", "auth") + os.sep


def directory() -> Path | None:
    value = os.environ.get("DEVSTACK_METER")
    return Path(value) if value else None


def install() -> None:
    """Record every call of the layer's clients, and the handlers' output, from now on (once a process)."""
    if _installed:
        return
    from svc_core.adapters import aws
    aws.register_handler("before-parameter-build", _before_parameter_build, "devstack-meter-params")
    aws.register_handler("after-call", _after_call, "devstack-meter-after")
    sys.stdout = _CountingStream(sys.stdout)
    _installed.append(True)


@contextmanager
def invocation(function: str, event: Any, cold: bool) -> Iterator[dict[str, Any]]:
    """One invocation's record, written when it ends (nothing is kept when the meter is off)."""
    out = directory()
    if out is None or not _installed:
        yield {}
        return
    record: dict[str, Any] = {"function": function, "started": time.time(), "cold": cold, **_describe(event),
                              "logBytes": 0, "metrics": [], "calls": []}
    token = _current.set(record)
    began = time.perf_counter()
    try:
        yield record
    finally:
        record["ms"] = (time.perf_counter() - began) * 1000
        _current.reset(token)
        line = json.dumps(record, default=str) + "\n"
        with _write_lock:
            out.mkdir(parents=True, exist_ok=True)
            with open(out / f"{os.getpid()}.jsonl", "a") as file:
                file.write(line)


def answered(record: dict[str, Any], response: Any) -> None:
    """The handler's answer, as API Gateway sees it: its status and body size."""
    if not record or not isinstance(response, dict):
        return
    record["status"] = response.get("statusCode")
    body = response.get("body") or ""
    record["responseBytes"] = len(body.encode() if isinstance(body, str) else body)


def _describe(event: Any) -> dict[str, Any]:
    if isinstance(event, dict) and "httpMethod" in event:
        body = event.get("body") or ""
        return {"source": "api", "route": f"{event['httpMethod']} {event.get('resource')}",
                "requestBytes": len(body.encode() if isinstance(body, str) else body)}
    records = event.get("Records") if isinstance(event, dict) else None
    if records:
        first = records[0]
        return {"source": first.get("eventSource") or first.get("EventSource") or "records", "records": len(records)}
    return {"source": "direct"}


def _before_parameter_build(params: dict[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
    record = _current.get()
    if record is None:
        return
    service = model.service_model.endpoint_prefix
    if service == "dynamodb" and model.name in _CAPACITY_OPERATIONS and "ReturnConsumedCapacity" not in params:
        params["ReturnConsumedCapacity"] = "INDEXES"
    context["devstack_meter"] = {"service": service, "operation": model.name, "overhead": _from_auth_code(),
                                 **_chunks(service, model.name, params), "_began": time.perf_counter()}


def _after_call(http_response: Any, parsed: dict[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
    record, call = _current.get(), context.pop("devstack_meter", None)
    if record is None or call is None:
        return
    call["ms"] = (time.perf_counter() - call.pop("_began")) * 1000
    call["status"] = getattr(http_response, "status_code", None)
    capacity = parsed.get("ConsumedCapacity") if isinstance(parsed, dict) else None
    if capacity:
        call["units"] = [_units(entry) for entry in (capacity if isinstance(capacity, list) else [capacity])]
    record["calls"].append(call)


def _units(entry: dict[str, Any]) -> dict[str, Any]:
    """One table's ConsumedCapacity: its own and its indexes' read and write units."""
    def of(part: dict[str, Any] | None) -> dict[str, float]:
        part = part or {}
        return {"read": float(part.get("ReadCapacityUnits", 0.0)), "write": float(part.get("WriteCapacityUnits", 0.0)),
                "total": float(part.get("CapacityUnits", 0.0))}
    indexes = {**(entry.get("GlobalSecondaryIndexes") or {}), **(entry.get("LocalSecondaryIndexes") or {})}
    return {"table": entry.get("TableName"), "total": float(entry.get("CapacityUnits", 0.0)),
            "own": of(entry.get("Table")), "indexes": {name: of(part) for name, part in indexes.items()}}


def _chunks(service: str, operation: str, params: dict[str, Any]) -> dict[str, Any]:
    """What a request counts as where the price is per 64 KB (SQS, EventBridge) or per recipient (SES)."""
    def size(value: Any) -> int:
        return len(value.encode()) if isinstance(value, str) else len(json.dumps(value, default=str).encode())

    if service == "sqs" and operation in ("SendMessage", "SendMessageBatch"):
        total = (sum(size(e.get("MessageBody", "")) for e in params.get("Entries", [])) if operation == "SendMessageBatch"
                 else size(params.get("MessageBody", "")))
        return {"chunks": max(1, -(-total // CHUNK))}
    if service == "events" and operation == "PutEvents":
        return {"chunks": sum(max(1, -(-size(e.get("Detail", "")) // CHUNK)) for e in params.get("Entries", []))}
    if service == "secretsmanager":
        return {"secret": params.get("SecretId")}   # its name or ARN (never its value): which secret is refreshed
    if service == "email" and operation in ("SendEmail", "SendRawEmail"):
        destination = params.get("Destination") or {}
        recipients = sum(len(destination.get(k, [])) for k in ("ToAddresses", "CcAddresses", "BccAddresses"))
        return {"chunks": max(1, recipients or len(params.get("Destinations", [])))}
    return {}


def _from_auth_code() -> bool:
    """Whether the call is made by the layer's authentication or rate limits (svc_core/auth): the part
    every request pays before its own work."""
    frame = sys._getframe(1)
    while frame is not None:
        if _AUTH_CODE in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


class _CountingStream:
    """sys.stdout that counts, per invocation, the bytes a handler writes (its log lines and EMF metrics:
    what Lambda sends to CloudWatch Logs), and notes each EMF metric it declares."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        record = _current.get()
        if record is not None and text:
            record["logBytes"] += len(text.encode("utf-8", "replace"))
            if '"_aws"' in text:
                record["metrics"].extend(_emf_metrics(text))
        return self._inner.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _emf_metrics(text: str) -> list[str]:
    """namespace/name{dimension=value,...} of each metric an EMF line declares."""
    found = []
    for line in text.splitlines():
        try:
            document = json.loads(line)
        except ValueError:
            continue
        for directive in (document.get("_aws") or {}).get("CloudWatchMetrics", []):
            for dimensions in directive.get("Dimensions") or [[]]:
                labels = ",".join(f"{d}={document.get(d)}" for d in dimensions)
                found += [f"{directive.get('Namespace')}/{m.get('Name')}{{{labels}}}" for m in directive.get("Metrics", [])]
    return found
