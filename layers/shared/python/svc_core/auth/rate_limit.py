"""Fixed-window rate limiting: N requests per window (default 1000 per 60 s).

Counters: one per credential; one per tenant (its plan's ceiling, a multiple of the per-key limit,
plans.TENANT_CEILING_MULTIPLE), which every request its credentials make within their own limit
counts against too; and one per source address and public route group (register, sign-in...), sized
for many people behind one address (an office's NAT): the groups that create something count every
request, sign-in counts only its failures.

DynamoDB takes at most 1,000 writes a second on one item (its partition's write units; a counter's
update is one): a tenant whose ceiling comes near that (enterprise: 100,000 a minute, 1,667 a
second) counts on several items, each request on one of them at random against its equal share of
the ceiling (tenant_counter_shards; docs/scaling.md). The whole is never exceeded; a shard filled by
chance refuses a little before it (simulated at enterprise's rate: on average 0.6% before, at worst 1.3%).

The response headers: X-RateLimit-Limit (N), X-RateLimit-Remaining, X-RateLimit-Reset (Unix
epoch seconds at which the window ends) and, on 429, Retry-After (seconds until then); of the
credential's and the tenant's counters, they show the one that binds first.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from svc_core.auth.principal import Principal
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


# Half of what one item takes (1,000 writes a second): room for a burst and for the window's start.
COUNTER_WRITES_PER_SECOND = 500
# API Gateway lets an account's APIs take 10,000 requests a second in a region (its default quota):
# no tenant sends more, so more than 20 items would never fill, and each item's first request of a
# window costs a second write (a raised RateLimitPerWindow made thousands: nearly every request paid it).
MAX_TENANT_COUNTER_SHARDS = 20


def tenant_counter_shards(limit: int, window_seconds: int) -> int:
    """How many items count a tenant's requests: one, unless its ceiling would write one item more
    than COUNTER_WRITES_PER_SECOND times a second; at most MAX_TENANT_COUNTER_SHARDS."""
    return min(MAX_TENANT_COUNTER_SHARDS, max(1, math.ceil(limit / window_seconds / COUNTER_WRITES_PER_SECOND)))


def tenant_key(tenant_id: str, shard: int = 0) -> str:
    """The tenant's counter (shard 0, the only one of most plans), or one of its other shards."""
    return f"tenant#{tenant_id}" if shard == 0 else f"tenant#{tenant_id}#{shard}"


def consume_tenant(tenant_id: str, limit: int) -> Allowance:
    """Count one request against the tenant's ceiling, on one of its counter's shards. A sharded
    counter's allowance is its shard's scaled up: limit and hits times the shards (the limit is the
    ceiling, rounded up to a multiple of the shards), so it is exceeded exactly when the shard is."""
    shards = tenant_counter_shards(limit, settings().rate_limit_window_seconds)
    if shards == 1:
        return consume(tenant_key(tenant_id), limit, "tenant")
    share = math.ceil(limit / shards)
    counted = consume(tenant_key(tenant_id, random.randrange(shards)), share, "tenant")  # spread, not secrecy
    return Allowance(limit=share * shards, hits=counted.hits * shards, reset=counted.reset, counter="tenant")


def address_key(group: str, address: str) -> str:
    return f"addr#{group}#{address}"


def binding(*allowances: Allowance) -> Allowance:
    """The allowance that binds first: one exceeded, else the one with the fewest remaining
    (on a tie, the first given)."""
    exceeded = [a for a in allowances if a.exceeded]
    return exceeded[0] if exceeded else min(allowances, key=lambda a: a.remaining)


# The error event an open stream ends with when its credential no longer stands: the shape of the
# streams' other `error` events (no id: it is no stored event), so clients treat it as the stream's
# end and reconnect, and the reconnection is answered 401 as any request with the credential is.
CREDENTIAL_ENDED_CODE = "UNAUTHORIZED"


def credential_ended_event() -> str:
    data = json.dumps({"code": CREDENTIAL_ENDED_CODE,
                       "message": "The credential no longer stands (a sign-in ended, the member removed or their "
                                  "role changed, a key revoked): the stream has ended; sign in again."})
    return f"event: error\ndata: {data}\n\n"


@dataclass
class CredentialWatch:
    """Whether an open stream's credential still stands, looked at most every
    stream_credential_check_seconds (one consistent read of its counter: revoked by a removal, a
    demotion, a logout or a key's revocation; an API key value rotated out)."""
    principal: Principal | None
    clock: Callable[[], float] = time.monotonic
    next_check: float = field(default=0.0)

    def due(self) -> bool:
        return self.principal is not None and self.clock() >= self.next_check

    def ended(self) -> bool:
        """Look now (when due; False otherwise)."""
        if not self.due():
            return False
        self.next_check = self.clock() + settings().stream_credential_check_seconds
        return rate_limits_table.credential_ended(self.principal.rate_limit_key, self.principal.key_generation)
