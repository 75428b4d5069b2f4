"""What the sync and async clients share: settings, credentials, retry policy, envelope decoding.

Nothing here does I/O, so both clients run the same rules.
"""

from __future__ import annotations

import email.utils
import os
import random
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, TypeAdapter

from svc_client.errors import ApiError, CellUnreachable, error_for
from svc_client.models import TokenGrant

API_PREFIX = "/api/v1"
DEFAULT_BASE_URL = "http://127.0.0.1:3000"
EXPIRY_BUFFER_SECONDS = 60          # the spec: a token counts as expired 60 s before expiresIn runs out
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
VERSION = "0.1.0"

M = TypeVar("M")


def base_url_from(base_url: str | None) -> str:
    """The service root (no /api/v1): the argument, else SVC_BASE_URL, else the local stack."""
    url = (base_url or os.environ.get("SVC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    return url.removesuffix(API_PREFIX)


# A refresh/exchange callback: returns a new grant (or its JSON, or a bare token string).
TokenSource = Callable[[], Any]


@dataclass
class Credentials:
    """The credential a client sends. An API key is long-lived and sent as it is; an access token
    lives in memory only and counts as expired EXPIRY_BUFFER_SECONDS before its end, after which
    `refresh` (a callback, possibly async) is asked for a new one."""

    api_key: str | None = field(default=None, repr=False)
    access_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None
    refresh: TokenSource | None = None
    clock: Callable[[], float] = time.time

    def set_grant(self, grant: Any) -> None:
        """Keep a token from a grant (TokenGrant, its JSON, or a bare string)."""
        if isinstance(grant, str):
            self.access_token, self.expires_at = grant, None
            return
        if not isinstance(grant, TokenGrant):
            grant = TokenGrant.model_validate(grant)
        self.access_token = grant.access_token
        self.expires_at = self.clock() + grant.expires_in if grant.expires_in is not None else None

    def clear(self) -> None:
        self.access_token, self.expires_at = None, None

    def usable_token(self) -> str | None:
        """The access token if it is not (about to be) expired."""
        if self.access_token is None:
            return None
        if self.expires_at is not None and self.clock() >= self.expires_at - EXPIRY_BUFFER_SECONDS:
            return None
        return self.access_token

    def needs_refresh(self) -> bool:
        return self.api_key is None and self.refresh is not None and self.usable_token() is None

    def header(self) -> dict[str, str]:
        # Without a callback to renew it, a token inside its last 60 s is still sent: the
        # service decides (and a 401 then reaches on_unauthorized).
        token = self.api_key or self.usable_token() or (self.access_token if self.refresh is None else None)
        return {"Authorization": f"Bearer {token}"} if token else {}


@dataclass
class RetryPolicy:
    """Which answers and failures a call sends again, and how long it may keep doing so.

    - 429 is retried whatever the method, after its Retry-After (seconds or an HTTP date; without
      one, the backoff below). Every 429 of the service is a refusal made before the request's work
      began: the rate limits and stream caps in the admission (svc_core/http/api.py), the sign-in
      throttles before the password is checked, the failed gift-card cap before a redemption
      (docs/conventions.md, "Errors").
    - 503 is retried the same way for a request that may be sent twice: an idempotent method
      (GET/PUT/DELETE...) or one carrying an Idempotency-Key (the key's record tells the retry
      whether the change was made: docs/conventions.md, "Idempotency-Key on creates"). Any other
      request only when the 503 says it was refused before anything was done: details.reason
      "tenant_moving", a tenant's writes paused while it moves between cells, answered at admission
      (docs/regions-and-storage.md, "Moving a tenant between cells"). The other 503s do not say so:
      a datastore that did not answer in time may still commit the write (SERVICE_UNAVAILABLE in
      docs/conventions.md), and an invitation whose e-mail failed is saved (email_not_sent).
    - A connection failure only for a request that may be sent twice, with exponential backoff and
      full jitter, at most `max_connection_retries` times: a service that cannot be reached is said
      so within a few seconds.
    - 409 REQUEST_IN_PROGRESS of a request with an Idempotency-Key (its first try is still being
      served, e.g. after a connection failure), with the backoff, until it answers the first answer.

    Each call stops retrying after `max_retries` retries of any kind, or when the next wait would end
    more than `max_retry_time` seconds after its first attempt (its last answer is then raised at
    once), or when a Retry-After is longer than `max_retry_after`. With the defaults a tenant's move,
    whose writes are refused with Retry-After 2 for a few seconds (a minute deployed with a 60 s
    policy cache), is ridden out for up to 20 s."""

    max_retries: int = 10             # retries of any kind per call
    max_connection_retries: int = 3   # of which after a connection failure
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 60.0   # a longer Retry-After is not waited for: the error is raised
    max_retry_time: float = 30.0    # per call, from its first attempt: no wait that ends later is begun

    def delay_after_response(self, attempt: int, response: httpx.Response, elapsed: float = 0.0) -> float | None:
        """The wait before sending again after this answer (its body read), or None: not again."""
        if attempt >= self.max_retries:
            return None
        if response.status_code == 409 and _in_progress(response):   # the first request with this key is still served
            return self._within(self._backoff(attempt + 1), elapsed)
        if response.status_code == 429 or (response.status_code == 503 and repeatable_after_503(response)):
            wait = parse_retry_after(response.headers.get("retry-after"))
            if wait is None:
                return self._within(self._backoff(attempt), elapsed)
            return self._within(wait, elapsed) if wait <= self.max_retry_after else None
        return None

    def delay_after_failure(self, attempt: int, request: httpx.Request, elapsed: float = 0.0,
                            failures: int = 0) -> float | None:
        """The wait before sending again after a connection failure, or None. `failures`: the
        connection failures of this call retried already."""
        if attempt >= self.max_retries or failures >= self.max_connection_retries or not is_idempotent(request):
            return None
        return self._within(self._backoff(failures), elapsed)

    def _within(self, delay: float, elapsed: float) -> float | None:
        return delay if elapsed + delay <= self.max_retry_time else None

    def _backoff(self, attempt: int) -> float:
        return random.uniform(0, min(self.max_backoff, self.backoff * (2 ** attempt)))


def repeatable_after_503(response: httpx.Response) -> bool:
    """Whether a 503 (its body read) may be sent again: see RetryPolicy."""
    if is_idempotent(response.request):
        return True
    try:
        error = response.json().get("error") or {}
        return (error.get("details") or {}).get("reason") == "tenant_moving"
    except (ValueError, AttributeError, httpx.ResponseNotRead):
        return False


DEFAULT_MAX_CELL_FOLLOWS = 3

# Which cell a call goes to (docs/regions-and-storage.md, "Cells and routing"): the tenant's (every
# call of a tenant's resources); the account's (refresh, exchange, logout: the sign-in's session lives
# in the cell holding the account); or the account's and, while the client knows no other for its
# tenant, the tenant's too (register and login: a registration makes the account and its workspace
# in one cell, and a login's token is mostly for that workspace; the tenant's cell may not know the
# new tenant yet, the directory replicating with a lag).
TENANT, ACCOUNT, SIGN_IN = "tenant", "account", "sign_in"



def named_cell(response: httpx.Response) -> tuple[str, str | None] | None:
    """The base URL and region a 421 WRONG_REGION names (the cell holding the tenant or the account;
    its body read already), else None. Only an http(s) URL, and never from https down to http."""
    if response.status_code != 421:
        return None
    try:
        error = response.json().get("error") or {}
    except (ValueError, AttributeError):
        return None
    details = (error.get("details") or {}) if error.get("code") == "WRONG_REGION" else {}
    url, region = details.get("baseUrl"), details.get("region")
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        return None
    if response.request.url.scheme == "https" and not url.startswith("https://"):
        return None
    return base_url_from(url), region if isinstance(region, str) else None


class Route:
    """One call's way to the cell that serves it. It starts at the cell the client keeps for it; a
    421 WRONG_REGION sends it on to the cell named, at most `limit` times per call; when the kept
    cell cannot even be connected to (nothing was sent), it goes back once to `entry`, the base URL
    the client was given, whose cell names where the tenant is now (after a failover). Going back
    to the entry counts as one of the `limit`. A cell a 421 named in this call that gives no answer
    ends the call with CellUnreachable: the request is never sent back to the cell that named it,
    which would only name it again."""

    def __init__(self, start: str, entry: str, limit: int) -> None:
        self.start, self.entry, self.limit = start, entry, limit
        self.base = start
        self.visited = [start]
        self.follows = 0
        self.regions: dict[str, str | None] = {}   # the cells a 421 named in this call: their regions
        self.unreached: set[str] = set()

    def follow(self, request: httpx.Request, base: str, region: str | None) -> httpx.Request:
        """The request for the cell a 421 named; CellUnreachable when that cannot be."""
        if base in self.unreached:
            raise self._error(request, self.base, base, region, "unreachable",
                              "it could not be connected to earlier in this call")
        if self.follows >= self.limit:
            raise self._error(request, self.base, base, region, "follow_limit",
                              f"the request was sent on {self.follows} times already (max_cell_follows)")
        self.regions[base] = region
        return self._go(request, base)

    def back_to_entry(self, request: httpx.Request, exc: httpx.TransportError) -> httpx.Request | None:
        """After a failure to connect to the cell the client kept (not one a 421 named in this call):
        the request for the entry; None when this does not apply."""
        if (not isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout) or self.base in self.regions
                or self.base == self.entry or self.follows >= self.limit):
            return None
        self.unreached.add(self.base)
        return self._go(request, self.entry)

    def unreachable(self, request: httpx.Request, exc: Exception) -> CellUnreachable | None:
        """The error for a cell a 421 named in this call that gave no answer; None for another cell."""
        if self.base not in self.regions:
            return None
        return self._error(request, self.visited[-2], self.base, self.regions[self.base], "unreachable",
                           f"{type(exc).__name__}: {exc}")

    def _go(self, request: httpx.Request, base: str) -> httpx.Request:
        moved = moved_request(request, self.base, base)
        self.base = base
        self.visited.append(base)
        self.follows += 1
        return moved

    def _error(self, request: httpx.Request, origin: str, base: str, region: str | None, reason: str,
               why: str) -> CellUnreachable:
        """origin: the cell whose 421 named `base`."""
        cell = f"the cell {region} at {base}" if region else f"the cell at {base}"
        path = request.url.raw_path.decode().removeprefix(httpx.URL(self.base).raw_path.decode().rstrip("/"))
        told = f"a 421 WRONG_REGION from {origin} sent {request.method} {path} to {cell}"
        if reason == "unreachable":
            message = f"Cannot reach {cell}: {told}, and {why}. Its region may be down; try again later."
        else:
            message = (f"{request.method} {path} did not reach its cell: {told}, but {why}; "
                       f"cells visited: {' -> '.join(self.visited)}.")
        return CellUnreachable(message, base_url=base, region=region, reason=reason, visited=self.visited)


def moved_request(request: httpx.Request, old_base: str, new_base: str) -> httpx.Request:
    """The same request sent to another cell: its path below the old base, under the new one."""
    old_path = httpx.URL(old_base).raw_path.decode().rstrip("/")
    below = request.url.raw_path.decode().removeprefix(old_path)
    target = httpx.URL(new_base + below)
    headers = httpx.Headers(request.headers)
    headers["host"] = target.netloc.decode()
    return httpx.Request(request.method, target, headers=headers, content=request.content,
                         extensions=request.extensions)


def _in_progress(response: httpx.Response) -> bool:
    """409 REQUEST_IN_PROGRESS: a request with the same Idempotency-Key is still being served."""
    if "idempotency-key" not in response.request.headers:
        return False
    try:
        return response.json()["error"]["code"] == "REQUEST_IN_PROGRESS"
    except (ValueError, KeyError, TypeError, httpx.ResponseNotRead):
        return False


def is_idempotent(request: httpx.Request) -> bool:
    return request.method in IDEMPOTENT_METHODS or "idempotency-key" in request.headers


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After as seconds or an HTTP date (RFC 9110)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def new_idempotency_key() -> str:
    return str(uuid.uuid4())


def request_headers(credentials: Credentials, extra: Mapping[str, str] | None, *,
                    authenticated: bool) -> dict[str, str]:
    headers = {"Accept": "application/json", "User-Agent": f"svc-python/{VERSION}"}
    if authenticated:
        headers.update(credentials.header())
    headers.update(extra or {})
    return headers


def decode(response: httpx.Response) -> Any:
    """The `data` of a success envelope, or raises the error the envelope names."""
    try:
        body = response.json() if response.content else None
    except ValueError:
        body = None
    if response.is_success:
        if isinstance(body, dict) and "data" in body:
            return body["data"]
        return body
    raise error_for(response.status_code, body, {k.lower(): v for k, v in response.headers.items()})


_adapters: dict[Any, TypeAdapter] = {}


def parse(model: Any, data: Any) -> Any:
    """data validated as `model` (a pydantic model, a typing form such as Page[Project], or None)."""
    if model is None:
        return data
    if isinstance(model, type) and issubclass(model, BaseModel):
        return model.model_validate(data)
    adapter = _adapters.get(model)
    if adapter is None:
        adapter = _adapters[model] = TypeAdapter(model)
    return adapter.validate_python(data)


def clean(body: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A body without the arguments left out (None means "not sent"; send JSON null with NULL)."""
    if body is None:
        return None
    return {k: (None if v is NULL else v) for k, v in body.items() if v is not None}


class _Null:
    def __repr__(self) -> str:
        return "NULL"


NULL: Any = _Null()   # an explicit JSON null in a PATCH ("reset this field")


def check_unauthorized(error: ApiError, credentials: Credentials) -> None:
    """A 401 means the token is no good: forget it, so the next call asks the callback again."""
    if error.status == 401 and credentials.api_key is None:
        credentials.clear()
