"""A tenant's webhook messages after its move to another cell (docs/regions-and-storage.md, "Moving a
tenant between cells"): a cell that is not the tenant's home any more writes nothing of it; what its
queues still hold of the tenant (an event before its fan-out, a delivery, a replay's step) is sent on to
the home's queue, whose cell holds the tenant's webhooks and deliveries now.

The home is the directory's (TENANT#<id>, HOME), read consistently: a move's switch writes it in every
cell's replica at once. A single-cell deployment never asks.
"""

from __future__ import annotations

from svc_core.contracts import cells
from svc_core.data import directory_table
from svc_core.data.cell_tables import Place


def peer(region: str) -> Place:
    """The resources another cell published in the directory (its tables, bucket, key and queues)."""
    resources = directory_table.cell_resources(region)
    if resources is None:
        raise RuntimeError(f"the cell in {region} has published no resources")
    return Place.of({**resources, "region": region})


def elsewhere(tenant_id: str) -> Place | None:
    """The tenant's home cell when it is another one; None while it is this one (or the directory
    does not know the tenant: nothing was moved)."""
    if not cells.multi_cell():
        return None
    home = directory_table.tenant_home(tenant_id)
    region = home.get("homeRegion") if home else None
    if not region or region == cells.here():
        return None
    return peer(region)
