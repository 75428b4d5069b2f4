"""The time a synchronous request has left for its model calls.

API Gateway answers 504 after 29 s whatever the function does, and an API function's Lambda Timeout
ends it at its own (29 s for AgentsFunction). A request that calls a model must answer before that,
whatever the model does, its fallback included: the HTTP layer (svc_core/http/api.py) opens one
deadline per request, REQUEST_SECONDS (or the invocation's remaining time, if shorter) less
RESERVE_SECONDS, the time the rest of the request needs once the model has answered or been given
up (storing the run and its usage, the answer itself). Every model call's budget
(svc_core/adapters/models/base.Budget) is the smaller of MODEL_TIMEOUT_SECONDS and what is left of
this deadline. Where a fallback model is configured, the first model gets PRIMARY_SHARE of what is
left (share()) and the fallback the rest, so a first model that hangs still leaves the fallback its
chance; none is asked with less than a second left. Outside a request (the queue workers, tests calling the domain directly)
there is no deadline: a call has its own budget only.

Numbers: 29 s (API Gateway) - 5 s reserved = the model calls of a request end by 24 s after the
function began (with a fallback: the first model up to 16 s, the fallback the remaining 8 s or
more); a request that met a hanging model is answered at about 24 to 25 s, some 4 s before API
Gateway's 504.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager

REQUEST_SECONDS = 29.0   # API Gateway REST's integration timeout: the longest any request can be answered in
RESERVE_SECONDS = 5.0    # kept for what comes after the model: the run's save, its usage, the answer
PRIMARY_SHARE = 2 / 3    # of what is left, for the first model when a fallback stands behind it

_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar("request_deadline", default=None)


def left() -> float | None:
    """Seconds left for model calls in this request (and for retrying an AWS call: adapters/aws.py);
    None outside a request's deadline."""
    deadline = _deadline.get()
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def clamp(seconds: float) -> float:
    """A call's budget within what is left of the request's."""
    remaining = left()
    return seconds if remaining is None else min(seconds, remaining)


@contextmanager
def request(remaining_seconds: float | None = None) -> Iterator[None]:
    """The deadline of one request begun now; remaining_seconds: the invocation's own time left (Lambda's
    context), when it is shorter than API Gateway's wait."""
    window = REQUEST_SECONDS if remaining_seconds is None else min(REQUEST_SECONDS, remaining_seconds)
    token = _deadline.set(time.monotonic() + max(0.0, window - RESERVE_SECONDS))
    try:
        yield
    finally:
        _deadline.reset(token)


@contextmanager
def share(fraction: float) -> Iterator[None]:
    """Within the block, the deadline is `fraction` of what is left of it now (no deadline: none)."""
    remaining = left()
    if remaining is None:
        yield
        return
    token = _deadline.set(time.monotonic() + remaining * fraction)
    try:
        yield
    finally:
        _deadline.reset(token)
