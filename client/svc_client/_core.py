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

from svc_client.errors import ApiError, error_for
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
    """429 is retried whatever the method (the service refused it before doing anything), after
    Retry-After; a connection failure only for idempotent requests (GET/PUT/DELETE..., or any
    request carrying an Idempotency-Key), with exponential backoff and full jitter; and a 409
    REQUEST_IN_PROGRESS of a request with an Idempotency-Key (its first try is still being served,
    e.g. after a connection failure), until it answers the first answer."""

    max_retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 60.0   # a longer Retry-After is not waited for: the error is raised

    def delay_after_response(self, attempt: int, response: httpx.Response) -> float | None:
        if attempt >= self.max_retries:
            return None
        if response.status_code == 409 and _in_progress(response):
            return self._backoff(attempt + 1)   # the first request with this key is still being served
        if response.status_code != 429:
            return None
        wait = parse_retry_after(response.headers.get("retry-after"))
        if wait is None:
            return self._backoff(attempt)
        return wait if wait <= self.max_retry_after else None

    def delay_after_failure(self, attempt: int, request: httpx.Request) -> float | None:
        if attempt >= self.max_retries or not is_idempotent(request):
            return None
        return self._backoff(attempt)

    def _backoff(self, attempt: int) -> float:
        return random.uniform(0, min(self.max_backoff, self.backoff * (2 ** attempt)))


def home_cell(response: httpx.Response) -> str | None:
    """The base URL a 421 WRONG_REGION names (the cell holding the tenant or the account; its body
    read already), else None. Only an http(s) URL, and never from https down to http."""
    if response.status_code != 421:
        return None
    try:
        error = response.json().get("error") or {}
    except (ValueError, AttributeError):
        return None
    url = (error.get("details") or {}).get("baseUrl") if error.get("code") == "WRONG_REGION" else None
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        return None
    if response.request.url.scheme == "https" and not url.startswith("https://"):
        return None
    return base_url_from(url)


def moved_request(request: httpx.Request, old_base: httpx.URL, new_base: str) -> httpx.Request:
    """The same request sent to another cell: its path below the old base, under the new one."""
    old_path = old_base.raw_path.decode().rstrip("/")
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
