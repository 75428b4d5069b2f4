"""CORS for browser front-ends: the origins a deployment allows (AllowedOrigins in template.yaml,
CORS_ALLOWED_ORIGINS in the functions' environment) and the headers their answers carry.

The rules: an allowed origin is echoed exactly (never `*`) with credentials allowed, on every answer
(errors included) and on the preflight; any other origin gets no CORS header. Every answer says
`Vary: Origin`, so a cache never hands one origin's answer to another. The shared HTTP layer
(svc_core.http.api) applies them to every function and to the chat stream; the local gateway applies them
to what it answers itself (a path no route matches).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

ALLOW_HEADERS = "Authorization, Content-Type, Idempotency-Key, Last-Event-ID"
EXPOSE_HEADERS = "X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After"
API_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
MAX_AGE_SECONDS = 600


@lru_cache(maxsize=8)
def parse_origins(configured: str) -> frozenset[str]:
    """A comma-separated list of origins (scheme://host[:port]) as a set, lower-cased, without a
    trailing slash. `*` and `null` are never origins here: a wildcard cannot go with credentials, and
    `null` is what sandboxed pages and files send."""
    origins = {part.strip().rstrip("/").lower() for part in configured.split(",")}
    return frozenset(o for o in origins if o and o not in ("*", "null"))


def origin_of(headers: Mapping[str, str] | None) -> str | None:
    """The request's Origin header (any case of the name), or None."""
    return next((v for k, v in (headers or {}).items() if k.lower() == "origin"), None)


def is_allowed(origin: str | None, allowed: frozenset[str]) -> bool:
    return bool(origin) and origin.strip().rstrip("/").lower() in allowed


def is_preflight(method: str, headers: Mapping[str, str] | None) -> bool:
    """An OPTIONS that names an Origin and the method it asks about: a browser's preflight."""
    if method != "OPTIONS":
        return False
    names = {k.lower() for k in (headers or {})}
    return "origin" in names and "access-control-request-method" in names


def response_headers(origin: str | None, allowed: frozenset[str]) -> dict[str, str]:
    """The CORS headers of any answer: Vary always; the rest only for an allowed origin."""
    headers = {"Vary": "Origin"}
    if is_allowed(origin, allowed):
        headers.update({"Access-Control-Allow-Origin": origin, "Access-Control-Allow-Credentials": "true",
                        "Access-Control-Expose-Headers": EXPOSE_HEADERS})
    return headers


def preflight_headers(methods: tuple[str, ...] | list[str]) -> dict[str, str]:
    """What a preflight from an allowed origin adds to response_headers()."""
    return {"Access-Control-Allow-Methods": ", ".join(methods), "Access-Control-Allow-Headers": ALLOW_HEADERS,
            "Access-Control-Max-Age": str(MAX_AGE_SECONDS)}
