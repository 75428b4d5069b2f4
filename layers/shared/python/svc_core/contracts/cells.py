"""The deployment's cells: one deployment of the stack per region, each holding the content of the
tenants homed there (docs/regions-and-storage.md, "Cells").

The `Cells` parameter lists every cell as JSON {region: public base URL}, this one included. Empty, the
deployment is a single cell: every tenant is here whatever region it chose, and nothing is routed.
"""

from __future__ import annotations

import json
from functools import lru_cache

from svc_core.contracts.regions import REGIONS
from svc_core.platform.config import settings


@lru_cache(maxsize=8)
def _parse(text: str) -> dict[str, str]:
    if not text.strip():
        return {}
    parsed = json.loads(text)
    if not isinstance(parsed, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in parsed.items()):
        raise ValueError("CELLS must be a JSON object of region to base URL")
    unknown = sorted(set(parsed) - set(REGIONS))
    if unknown:
        raise ValueError(f"CELLS names regions the catalogue does not have: {unknown}")
    return {region: url.rstrip("/") for region, url in parsed.items()}


def cells() -> dict[str, str]:
    """Region to public base URL of every cell ({} for a single-cell deployment)."""
    return _parse(settings().cells)


def multi_cell() -> bool:
    return bool(cells())


def here() -> str:
    """This cell's region."""
    return settings().aws_region


def base_url(region: str) -> str | None:
    """The public base URL of the cell in `region` (None: no cell there)."""
    return cells().get(region)


def allows(region: str) -> bool:
    """Whether a tenant may choose `region`: a cell is there (single cell: the catalogue says so)."""
    if multi_cell():
        return region in cells()
    known = REGIONS.get(region)
    return known is not None and known.available


def pick(keyed_hash: str) -> str:
    """A cell chosen by a keyed hash (hex): where an address with no account is answered, so which
    cell answers never tells whether an account exists (the hash is keyed: nobody can predict it)."""
    regions = sorted(cells()) or [here()]
    return regions[int(keyed_hash[:8], 16) % len(regions)]
