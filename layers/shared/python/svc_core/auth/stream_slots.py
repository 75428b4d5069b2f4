"""Caps on open streams: a route answering Server-Sent Events holds its request open for minutes,
and only its opening counts against the rate limit, so the streams open at once are capped too:
stream_cap_per_credential per credential (an API key, a user's sign-in session: a stream token
counts as the credential it was issued for) and stream_cap_per_tenant per tenant (settings).
Beyond either, the stream is refused with 429 RATE_LIMIT_EXCEEDED, `details.counter`
`credential_streams` or `tenant_streams`, and Retry-After.

Lambda containers share no memory, so the count is kept in DynamoDB (the rate-limits table): each
open stream holds a lease in its credential's and its tenant's item, taken before the stream
starts, renewed every third of stream_lease_seconds while it runs and released when it ends,
however it ends (svc_core.http.streamed, svc_core.http.api for the buffered answer). A container
that dies without releasing frees its slots when their lease runs out. A stream whose lease could
not be kept (it was given up as expired) ends, so the count never goes over the cap for long.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from svc_core.auth.principal import Principal
from svc_core.data import rate_limits_table
from svc_core.platform import ids, timeutil
from svc_core.platform.config import settings
from svc_core.platform.errors import RateLimited
from svc_core.platform.log import logger

COUNTERS = ("credential_streams", "tenant_streams")  # details.counter of a refusal, per holder


@dataclass(frozen=True)
class Slot:
    lease_id: str
    holders: tuple[str, ...]  # the items that count it: the credential's, the tenant's


def credential_holder(principal: Principal) -> str:
    return f"streams#{principal.rate_limit_key}"


def tenant_holder(tenant_id: str) -> str:
    return f"streams#tenant#{tenant_id}"


def renew_every_seconds() -> float:
    return settings().stream_lease_seconds / 3


def take(principal: Principal) -> Slot:
    """A slot for one stream of this credential, or RateLimited naming the cap that is reached."""
    cfg = settings()
    holders = [(credential_holder(principal), cfg.stream_cap_per_credential),
               (tenant_holder(principal.tenant_id), cfg.stream_cap_per_tenant)]
    lease_id, now = ids.new_ulid(), int(timeutil.now())
    try:
        rate_limits_table.take_lease(holders, lease_id, now + cfg.stream_lease_seconds, now)
    except rate_limits_table.HolderFull as full:
        limit, counter = holders[full.index][1], COUNTERS[full.index]
        # The soonest a slot frees for sure: when the first live lease would run out unrenewed.
        retry_after = max(1, min(cfg.stream_lease_seconds, full.soonest_expiry - now))
        whose = "credential" if full.index == 0 else "tenant"
        raise RateLimited(f"{limit} streams are already open for this {whose}; close one or retry later.",
                          {"limit": limit, "counter": counter}, {"Retry-After": str(retry_after)}) from None
    return Slot(lease_id, tuple(pk for pk, _ in holders))


def renew(slot: Slot) -> bool:
    """Keep the slot another lease; False when it was lost (the stream should end). A failure to
    reach the table is logged and counts as kept: the next renewal tries again."""
    try:
        return rate_limits_table.renew_lease(list(slot.holders), slot.lease_id,
                                             int(timeutil.now()) + settings().stream_lease_seconds)
    except Exception:
        logger.exception("a stream's lease was not renewed")
        return True


def release(slot: Slot) -> None:
    """Give the slot back; a failure is logged only (the lease runs out by itself)."""
    try:
        rate_limits_table.release_lease(list(slot.holders), slot.lease_id)
    except Exception:
        logger.exception("a stream's lease was not released")


@contextlib.contextmanager
def held(principal: Principal) -> Iterator[Slot]:
    """A slot for the length of the block (a buffered stream answer)."""
    slot = take(principal)
    try:
        yield slot
    finally:
        release(slot)
