"""python -m devstack --regions: what it refuses before starting anything."""

from __future__ import annotations

import pytest

from devstack.__main__ import main


@pytest.mark.parametrize(("argv", "message"), [
    (["--regions", "us-east-1,us-east-1"], "distinct regions"),
    (["--regions", ","], "distinct regions"),
    (["--regions", "us-east-1,eu-central-1", "--persist", "data"], "--persist is for a single cell"),
    (["--regions", "us-east-1,eu-central-1", "--emulator", "moto"], "--emulator moto is for a single cell"),
    (["--regions", "us-east-1,eu-central-1", "--sam-local"], "--sam-local is for a single cell"),
    (["--regions", "us-east-1,eu-central-1", "--parameter", "Cells={}"], "sets the Cells parameter itself"),
    (["--regions", "us-east-1,eu-central-1", "--replication-lag", "-1"], "0 or more"),
])
def test_regions_refuses_what_does_not_go_with_it(argv, message, capsys):
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err
