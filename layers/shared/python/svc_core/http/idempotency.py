"""Idempotency-Key for POST routes (billing, and the creates), on the idempotency table.

The key is scoped by tenant and operation: the record's key hashes [tenantId, operation, key], and
the request body is the payload that must match. The same key with the same body answers the first
request's answer again (and does nothing again), with `Idempotent-Replayed: true`; with another body
it is 422 IDEMPOTENCY_KEY_REUSED; while the first request is still being served it is 409
REQUEST_IN_PROGRESS (with Retry-After). A request refused or failed before its change was made
leaves no record, so it can be sent again with its key. Records live 24 hours (KEY_LIFETIME_SECONDS,
as Stripe's keys), then the key may be used afresh. A request without the header is served as it
is (no protection against a retry).

When the datastore stalls, a request may answer 503 while its change commits afterwards. The
record is claimed before the work and every write of the work carries the record's update in its
own transaction (svc_core/data/idempotency_table.py): a change that committed is recognised when
the key comes back (its answer, kept with the write, is answered again), and a claim whose request
ended without committing is taken over by the retry once its time is up (the stalled request's
late write then finds the record no longer its own, and commits nothing).

A route says `idempotent="<operation>"` (svc_core/http/api.py), or an Operation where its answer
holds what a record must not keep in clear; route() then declares the header (the binder takes it,
the document lists it), and runs the route's work in run(); the route adds ERRORS to its error
statuses and DESCRIPTION to its description.

The answer is stored as it was sent, so a replay of POST /api-keys answers the key's value again
(as Stripe answers the first response again): a client that lost the first answer can still use
the key it created, rather than hold one nobody knows. The record, with that value, lives in the
IdempotencyTable for KEY_LIFETIME_SECONDS.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import math
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from svc_core.adapters import aws
from svc_core.data.common import ConditionFailed, writes_carrying
from svc_core.http.params import Header
from svc_core.platform import timeutil
from svc_core.platform.errors import (
    Conflict,
    IdempotencyKeyReused,
    RequestInProgress,
    ServiceError,
    ServiceUnavailable,
    ValidationFailed,
)
from svc_core.platform.lazy import lazy_module

records = lazy_module("svc_core.data.idempotency_table")   # imported by the first request that sends a key
HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
KEY_LIFETIME_SECONDS = 24 * 3600
DEFAULT_CLAIM_SECONDS = 30   # a claim's time where the function's own is unknown (outside Lambda)
KEY_PATTERN = re.compile(r"^[\x21-\x7e]{1,255}$")   # visible ASCII, as Stripe's keys

IdempotencyKey = Annotated[str | None, Header(
    alias=HEADER, min_length=1, max_length=255, pattern=KEY_PATTERN.pattern,
    description="optional; the same key and body within 24 hours answer the first answer again")]
DESCRIPTION = (" Honours Idempotency-Key: the same key and body answer the first answer again; another body is "
               "422, a request still in progress 409.")
ERRORS = (409, 422)   # REQUEST_IN_PROGRESS, IDEMPOTENCY_KEY_REUSED
PARAMETER = "idempotency_key"   # the header's parameter, which route() adds to the route's function

Answer = dict[str, Any]


def _as_is(_ctx: Any, answer: Answer) -> Answer:
    return answer


@dataclass(frozen=True)
class Operation:
    """What a route's idempotent= names: the operation its keys are scoped to and, where its answer
    holds what a record must not keep in clear (a generated secret), the answer as the record keeps
    it (kept) and a kept answer as it is answered again (given), each given the tenant's context."""
    name: str
    kept: Callable[[Any, Answer], Answer] = _as_is
    given: Callable[[Any, Answer], Answer] = _as_is


def route(api: Any, operation: str | Operation, func: Callable[..., Answer]) -> Callable[..., Answer]:
    """The route function `func` made idempotent: its parameters and the Idempotency-Key header's, its
    work (given the body, the route's pydantic model, as the payload a repeat must match) run by run()."""
    signature = inspect.signature(func)
    if PARAMETER in signature.parameters:
        raise ValueError(f"{func.__name__}: an idempotent route's {PARAMETER} parameter is added by the route")

    @functools.wraps(func)
    def idempotent(**kwargs: Any) -> Answer:
        key = kwargs.pop(PARAMETER, None)
        body = next((value for value in kwargs.values() if hasattr(value, "model_dump")), None)
        return run(api, operation, key, body.model_dump(mode="json") if body is not None else None,
                   lambda: func(**kwargs))

    header = inspect.Parameter(PARAMETER, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=IdempotencyKey)
    idempotent.__signature__ = signature.replace(parameters=[*signature.parameters.values(), header])  # type: ignore[attr-defined]
    idempotent.__annotations__ = {**func.__annotations__, PARAMETER: IdempotencyKey}
    return idempotent


def run(api: Any, operation: str | Operation, key: str | None, body: dict[str, Any] | None,
        work: Callable[[], Answer]) -> Answer:
    """The answer of work(), at most once per (tenant, operation, Idempotency-Key header's value)."""
    if key is None:
        return work()
    operation = operation if isinstance(operation, Operation) else Operation(operation)
    if not KEY_PATTERN.match(key):
        raise ValidationFailed("The Idempotency-Key header is not valid.", {"fields": [
            {"field": HEADER, "in": "header", "reason": "1 to 255 visible ASCII characters"}]})
    record_id = _digest([api.tenant_context().tenant_id, operation.name, key])
    payload = _digest(body)
    token = secrets.token_hex(16)
    for _ in range(2):  # a claim lost to another request: read again what it left
        now = timeutil.now()
        found = records.get(record_id, now)
        if found is not None and found.token == token:
            break   # our own claim: the store applied it but its answer was lost, and the SDK's retry was refused
        if found is not None:
            if found.payload != payload:
                raise IdempotencyKeyReused("This Idempotency-Key was used with another request body.",
                                           {"header": HEADER})
            if found.answer is not None:
                api.set_response_header(REPLAYED_HEADER, "true")
                return operation.given(api.tenant_context(), found.answer)
            if found.running(now) or found.status != records.PENDING:
                raise _in_progress(found, now)
        try:
            records.claim(record_id, token, payload, now, _claim_seconds(api), KEY_LIFETIME_SECONDS, found)
            break
        except ConditionFailed:
            continue
    else:
        raise RequestInProgress("A request with this Idempotency-Key is still being processed; retry later.",
                                {"header": HEADER})
    try:
        with writes_carrying(lambda answer: records.fence_item(record_id, token, answer)):
            answer = work()
    except Exception as exc:
        _after_failure(exc, record_id, token)
        raise
    try:
        records.complete(record_id, token, operation.kept(api.tenant_context(), answer))
    except Exception as exc:  # the change is made: answered; a retry finds the answer kept with the write
        if not (isinstance(exc, ConditionFailed) or aws.is_unavailable(exc)):
            raise
    return answer


def _after_failure(exc: Exception, record_id: str, token: str) -> None:
    """A request that failed: its claim is released (the key may be sent again, as before any
    record), unless the datastore did not answer, when whether its change was made is unknown: the
    claim then stays until its time is up, and the record tells the retry which it was."""
    if aws.is_unavailable(exc) or isinstance(exc, ServiceUnavailable):
        return
    try:
        records.release(record_id, token)
    except Exception as release_failed:  # taken over already, or out of reach: the claim ends with its time
        if not (isinstance(release_failed, ConditionFailed) or aws.is_unavailable(release_failed)):
            raise


def _in_progress(found: Any, now: float) -> ServiceError:
    """409 for a key whose request is still being served (REQUEST_IN_PROGRESS, with when to look
    again), or whose change committed with no answer kept (CONFLICT: the change was made; a write
    that keeps its answer, as a project's create, never leaves that)."""
    if found.running(now):
        wait = max(1, math.ceil(found.pending_until - now))
        return RequestInProgress("A request with this Idempotency-Key is still being processed; retry later.",
                                 {"header": HEADER, "retryAfterSeconds": wait}, {"Retry-After": str(wait)})
    return Conflict("The request with this Idempotency-Key was carried out, but its answer was not kept; read the "
                    "resource instead.", {"header": HEADER, "committed": True})


def _claim_seconds(api: Any) -> float:
    """How long a claim holds: the function's remaining time (after it, the request is over)."""
    context = api.lambda_context()
    if context is not None and hasattr(context, "get_remaining_time_in_millis"):
        return context.get_remaining_time_in_millis() / 1000 + 1
    return DEFAULT_CLAIM_SECONDS


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
