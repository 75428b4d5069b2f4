"""What every request of a tenant is held to: its status, its plan's rate limit and, for API
keys, its IP allowlist. Read from the tenants table and kept per container for a short while
(TENANT_POLICY_CACHE_SECONDS, default 60 s), so a change reaches every container within that
time and a warm request costs no extra read. The container that makes a change forgets its
copy at once.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from svc_core.contracts import cells
from svc_core.data import directory_table, tenants_table
from svc_core.platform import container, timeutil
from svc_core.platform.config import settings

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class TenantPolicy:
    tenant_id: str
    plan: str
    status: str
    allowlist: tuple[Network, ...]
    # A move between cells under way (domain/tenant_moves.py): "arriving" (this cell's copy, not yet
    # served), "frozen" (writes paused), "moved" (another cell serves it); "replica" (this cell holds the
    # tenant's secondary copy, domain/tenant_replicas.py); "elsewhere" (the directory homes it in another
    # cell: it failed over while this cell was away); None: none.
    move_phase: str | None = None

    def admits(self, address: str) -> bool:
        """Whether an API key of this tenant may be used from the address (no list: any)."""
        if not self.allowlist:
            return True
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:  # ::ffff:a.b.c.d is a.b.c.d
            ip = ip.ipv4_mapped
        return any(ip.version == net.version and ip in net for net in self.allowlist)


def parse_networks(cidrs: Iterable[str]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(c, strict=False) for c in cidrs)


_cache: dict[tuple[Any, str], tuple[float, TenantPolicy | None]] = {}   # by (container, tenant id)


def policy_of(tenant_id: str) -> TenantPolicy | None:
    now = timeutil.now()
    cache_key = (container.key(), tenant_id)
    hit = _cache.get(cache_key)
    if hit is not None and hit[0] > now:
        return hit[1]
    tenant = tenants_table.get(tenant_id)
    policy = None
    if tenant is not None:
        policy = TenantPolicy(tenant_id=tenant_id, plan=tenant.get("plan", "free"), status=tenant.get("status", "active"),
                              allowlist=parse_networks((tenant.get("settings") or {}).get("ipAllowlist") or ()),
                              move_phase=(tenant.get("move") or {}).get("phase") or _homed_elsewhere(tenant_id))
    _cache[cache_key] = (now + settings().tenant_policy_cache_seconds, policy)
    return policy


def _homed_elsewhere(tenant_id: str) -> str | None:
    """With several cells, "elsewhere" when the directory homes the tenant in another cell although this
    cell's copy carries no mark: a failover to its secondary made while this cell was lost. Read once
    per cached policy, so a cell that comes back stops serving its stale copy within the cache time."""
    if not cells.multi_cell():
        return None
    home = directory_table.tenant_home(tenant_id)
    return "elsewhere" if home is not None and home.get("homeRegion") not in (None, cells.here()) else None


def forget(tenant_id: str | None = None) -> None:
    if tenant_id is None:
        _cache.clear()
    else:
        for cache_key in [k for k in list(_cache) if k[1] == tenant_id]:
            _cache.pop(cache_key, None)
