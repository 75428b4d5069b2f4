"""The deployment's cells (svc_core/contracts/cells.py): what the Cells parameter allows, and the
cell a keyed hash picks for an address without an account."""

from __future__ import annotations

import hashlib
import json

import pytest

from svc_core.contracts import cells, regions
from svc_core.platform import config

TWO = {"us-east-1": "https://us.api.example.com/", "eu-central-1": "https://eu.api.example.com"}


@pytest.fixture
def deployment(monkeypatch):
    def with_cells(value: dict | str, region: str = "us-east-1") -> None:
        monkeypatch.setenv("CELLS", value if isinstance(value, str) else json.dumps(value))
        monkeypatch.setenv("AWS_REGION", region)
        config.settings.cache_clear()
    yield with_cells
    config.settings.cache_clear()


def test_a_single_cell_allows_what_the_catalogue_marks_available(deployment):
    deployment("")
    assert not cells.multi_cell() and cells.cells() == {}
    assert [r for r in regions.REGIONS if cells.allows(r)] == [r.id for r in regions.REGIONS.values() if r.available]
    assert cells.base_url("us-east-1") is None and not cells.allows("mars-north-1")


def test_several_cells_allow_exactly_their_regions_and_give_their_urls(deployment):
    deployment(TWO, region="eu-central-1")
    assert cells.multi_cell() and cells.here() == "eu-central-1"
    assert sorted(r for r in regions.REGIONS if cells.allows(r)) == ["eu-central-1", "us-east-1"]
    assert cells.base_url("us-east-1") == "https://us.api.example.com"   # no trailing slash
    assert cells.base_url("eu-west-1") is None


@pytest.mark.parametrize("value", ['["us-east-1"]', '{"us-east-1": 3}', '{"mars-north-1": "https://m"}', "{"])
def test_a_cells_parameter_that_is_not_a_map_of_catalogue_regions_to_urls_is_refused(deployment, value):
    deployment(value)
    with pytest.raises(ValueError):
        cells.cells()


def test_the_cell_for_an_address_without_an_account_is_fixed_by_its_hash_and_spread(deployment):
    deployment(TWO)
    hashes = [hashlib.sha256(str(n).encode()).hexdigest() for n in range(400)]
    picks = [cells.pick(h) for h in hashes]
    assert picks == [cells.pick(h) for h in hashes]   # the same address, the same cell
    assert 120 < picks.count("eu-central-1") < 280    # both cells answer some
    deployment("")
    assert {cells.pick(h) for h in hashes} == {"us-east-1"}
