"""Fixed-window rate limiting: N requests per window (default 1000 per 60 s).

Counters: one per credential; one per tenant (its plan's ceiling, a multiple of the per-key limit,
plans.TENANT_CEILING_MULTIPLE), which every request its credentials make within their own limit
counts against too; and one per source address and public route group (register, sign-in...), sized
for many people behind one address (an office's NAT): the groups that create something count every
request, sign-in counts only its failures.

The response headers: X-RateLimit-Limit (N), X-RateLimit-Remaining, X-RateLimit-Reset (Unix
epoch seconds at which the window ends) and, on 429, Retry-After (seconds until then); of the
credential's and the tenant's counters, they show the one that binds first.
"""

from __future__ import annotations

from dataclasses import dataclass

from svc_core.data import rate_limits_table
from svc_core.data.rate_limits_table import CredentialRevoked  # noqa: F401 - re-exported for auth
from svc_core.platform import timeutil
from svc_core.platform.config import settings


@dataclass(frozen=True)
class Allowance:
    limit: int
    hits: int
    reset: int
    counter: str = "credential"  # whose: credential, tenant or address
    counts: str = "requests"     # what: requests, or failed sign-ins

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.hits)

    @property
    def exceeded(self) -> bool:
        return self.hits > self.limit

    def headers(self) -> dict[str, str]:
        headers = {"X-RateLimit-Limit": str(self.limit),
                   "X-RateLimit-Remaining": str(self.remaining),
                   "X-RateLimit-Reset": str(self.reset)}
        if self.exceeded:
            headers["Retry-After"] = str(max(1, self.reset - int(timeutil.now())))
        return headers


def window_start(now: float, window_seconds: int) -> int:
    return int(now) - int(now) % window_seconds


def consume(counter_key: str, limit: int | None = None, counter: str = "credential",
            generation: int | None = None) -> Allowance:
    """Count one request against the counter's window (raises CredentialRevoked, also for an API
    key value, of that generation, that a rotation ended)."""
    cfg = settings()
    limit = cfg.rate_limit_per_window if limit is None else limit
    start = window_start(timeutil.now(), cfg.rate_limit_window_seconds)
    hits, start = rate_limits_table.count_request(counter_key, start, cfg.rate_limit_window_seconds, generation)
    return Allowance(limit=limit, hits=hits, reset=start + cfg.rate_limit_window_seconds, counter=counter)


# The public route groups that count only their failed attempts per address (answers 401 or 429):
# a guess is what they limit; people signing in with the right password are never counted.
FAILURES_ONLY = frozenset({"sign-in"})
FAILED = frozenset({401, 429})


def address_limit(group: str) -> int:
    cfg = settings()
    return cfg.address_sign_in_failures_per_window if group in FAILURES_ONLY else cfg.address_rate_limit_per_window


def failures_so_far(counter_key: str, limit: int, counter: str = "address") -> Allowance:
    """The failures counted in this window, counting nothing: exceeded (the attempt is refused)
    when `limit` failures are counted already; count_failure counts an attempt that failed."""
    cfg = settings()
    start = window_start(timeutil.now(), cfg.rate_limit_window_seconds)
    failures = rate_limits_table.hits_in(counter_key, start)
    # A refused attempt is shown as the one failure too many, as a refused request is.
    return Allowance(limit=limit, hits=failures + 1 if failures >= limit else failures,
                     reset=start + cfg.rate_limit_window_seconds, counter=counter, counts="failed sign-ins")


def count_failure(counter_key: str, limit: int, counter: str = "address") -> Allowance:
    allowance = consume(counter_key, limit, counter)
    return Allowance(allowance.limit, allowance.hits, allowance.reset, counter, "failed sign-ins")


def tenant_key(tenant_id: str) -> str:
    return f"tenant#{tenant_id}"


def address_key(group: str, address: str) -> str:
    return f"addr#{group}#{address}"


def binding(*allowances: Allowance) -> Allowance:
    """The allowance that binds first: one exceeded, else the one with the fewest remaining
    (on a tie, the first given)."""
    exceeded = [a for a in allowances if a.exceeded]
    return exceeded[0] if exceeded else min(allowances, key=lambda a: a.remaining)
