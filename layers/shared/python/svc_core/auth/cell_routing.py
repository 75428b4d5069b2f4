"""Which cell serves a request: a tenant (or an account) homed in another cell is answered 421
WRONG_REGION with that cell's base URL, before anything of this cell is read or written for it.

Asked only when this cell does not hold what the request names (its tenant, its API key, the
account of an address): the normal path costs nothing, and a single-cell deployment never asks.
"""

from __future__ import annotations

import time

from svc_core.contracts import cells
from svc_core.data import directory_table
from svc_core.platform.errors import WrongRegion


def _elsewhere(region: str | None, **ids: str) -> None:
    if region and region != cells.here():
        url = cells.base_url(region)
        if url is not None:
            raise WrongRegion(region, url, **ids)


def tenant(tenant_id: str) -> None:
    """421 when the directory homes the tenant in another cell (the caller found it missing here)."""
    if cells.multi_cell():
        home = directory_table.tenant_home(tenant_id)
        _elsewhere(home and home.get("homeRegion"), tenantId=tenant_id)


def api_key(secret_hash: str) -> None:
    """421 when the key's value is a live one of a tenant homed in another cell. A value past its end
    (an expired key, a rotation's overlap over) stays in the directory until the key's next change: it
    is answered 401 here, as its own cell would, never sent on (nor its tenant's home told)."""
    if cells.multi_cell():
        record = directory_table.key(secret_hash)
        if record is not None and (record.get("notAfter") is None or int(record["notAfter"]) > time.time()):
            tenant(record["tenantId"])


def account(email_hash: str) -> None:
    """421 when the account of this address lives in another cell, or when no account has it and the
    address's keyed hash picks another cell: the answer never tells whether an account exists."""
    if cells.multi_cell():
        user = directory_table.user_by_email_hash(email_hash)
        _elsewhere(user["homeRegion"] if user else cells.pick(email_hash))


def region(chosen: str | None) -> None:
    """421 when a creation names a region whose cell is another (registration, POST /tenants)."""
    if chosen and cells.multi_cell():
        _elsewhere(chosen)
