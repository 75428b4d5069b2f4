"""Fixed-window rate limiting per credential: N requests per window (default 1000 per 60 s).

The response headers: X-RateLimit-Limit (N), X-RateLimit-Remaining, X-RateLimit-Reset (Unix
epoch seconds at which the window ends) and, on 429, Retry-After (seconds until then).
"""

from __future__ import annotations

from dataclasses import dataclass

from svc_core import timeutil
from svc_core.config import settings
from svc_core.data import rate_limits_table
from svc_core.data.rate_limits_table import CredentialRevoked  # noqa: F401 - re-exported for auth


@dataclass(frozen=True)
class Allowance:
    limit: int
    hits: int
    reset: int

    @property
    def exceeded(self) -> bool:
        return self.hits > self.limit

    def headers(self) -> dict[str, str]:
        headers = {"X-RateLimit-Limit": str(self.limit),
                   "X-RateLimit-Remaining": str(max(0, self.limit - self.hits)),
                   "X-RateLimit-Reset": str(self.reset)}
        if self.exceeded:
            headers["Retry-After"] = str(max(1, self.reset - int(timeutil.now())))
        return headers


def window_start(now: float, window_seconds: int) -> int:
    return int(now) - int(now) % window_seconds


def consume(counter_key: str, limit: int | None = None) -> Allowance:
    """Count one request against the credential's window (raises CredentialRevoked)."""
    cfg = settings()
    limit = cfg.rate_limit_per_window if limit is None else limit
    start = window_start(timeutil.now(), cfg.rate_limit_window_seconds)
    hits, start = rate_limits_table.count_request(counter_key, start, cfg.rate_limit_window_seconds)
    return Allowance(limit=limit, hits=hits, reset=start + cfg.rate_limit_window_seconds)
