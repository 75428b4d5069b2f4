"""Two cells of the local stack as a user starts them (python -m devstack --regions ...), in a process
of their own, for the end-to-end tests of cells:

    @pytest.fixture(scope="module")
    def cells(tmp_path_factory):
        with TwoCells(tmp_path_factory.mktemp("cells")).start() as pair:
            yield pair

    pair.first / pair.second / pair.cell("eu-central-1"): a RunningCell (region, base_url, port,
    env_file, environment, dynamodb_endpoint, dynamodb(), secret(name))
    pair.credentials: the development tenant's (in the first cell); pair.status(): GET /_local/cells
    pair.stop(): SIGTERM, as Ctrl-C would; the exit status (the cells and their emulators are gone after)
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import botocore.session
import httpx

from devstack.processes import children_of, is_alive
from tests.support.stack_process import StackProcess

REGIONS = ("us-east-1", "eu-central-1")
CELL_LINE = re.compile(r"^cell (\S+) at (http://\S+)/api/v1 ")


@dataclass
class RunningCell:
    region: str
    base_url: str

    @property
    def port(self) -> int:
        return int(self.base_url.rsplit(":", 1)[1])

    @property
    def env_file(self) -> Path:
        """Its functions' environment (python -m ops --local --stack PORT reads it)."""
        from devstack.stack import environment_file
        return environment_file(self.port, None)

    @property
    def environment(self) -> dict[str, str]:
        return json.loads(self.env_file.read_text())

    @property
    def dynamodb_endpoint(self) -> str:
        return self.environment["AWS_ENDPOINT_URL_DYNAMODB"]

    def client(self, service: str):
        """A client of the cell's own (its DynamoDB Local, or its emulator), in its region."""
        environment = self.environment
        endpoint = self.dynamodb_endpoint if service == "dynamodb" else environment["AWS_ENDPOINT_URL"]
        return botocore.session.get_session().create_client(
            service, region_name=self.region, endpoint_url=endpoint,
            aws_access_key_id="local", aws_secret_access_key="local")

    def dynamodb(self):
        return self.client("dynamodb")

    def secret(self, variable: str) -> str:
        """The value of the secret its functions name in `variable` (e.g. KEY_PEPPER_SECRET_ID)."""
        return self.client("secretsmanager").get_secret_value(SecretId=self.environment[variable])["SecretString"]


class TwoCells:
    def __init__(self, directory: Path, regions: tuple[str, ...] = REGIONS, lag: float = 1.0,
                 extra: tuple[str, ...] = (), environment: dict[str, str] | None = None) -> None:
        """directory: where the credentials go; extra: more options of python -m devstack (--parameter ...);
        environment: variables set for the cells' functions over this process's (e.g. TENANT_POLICY_CACHE_SECONDS)."""
        self.directory, self.regions, self.lag, self.extra = directory, regions, lag, extra
        self.environment = environment
        self.process: StackProcess | None = None
        self.cells: list[RunningCell] = []
        self.credentials: dict[str, Any] = {}
        self._descendants: set[int] = set()

    def start(self, timeout: float = 300) -> TwoCells:
        self.process = StackProcess(self.directory / "dev-credentials.json", "--regions", ",".join(self.regions),
                                    "--replication-lag", str(self.lag), *self.extra,
                                    env={**os.environ, **self.environment} if self.environment else None)
        self.credentials = self.process.wait_ready(timeout)
        self.cells = [RunningCell(*found.groups()) for found in map(CELL_LINE.match, self.process.lines) if found]
        assert [cell.region for cell in self.cells] == list(self.regions), self.process.output
        self._descendants = self.descendants()
        return self

    def __enter__(self) -> TwoCells:
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.stop()

    @property
    def first(self) -> RunningCell:
        return self.cells[0]

    @property
    def second(self) -> RunningCell:
        return self.cells[1]

    def cell(self, region: str) -> RunningCell:
        return next(cell for cell in self.cells if cell.region == region)

    def status(self) -> dict[str, Any]:
        """GET /_local/cells of the first cell: the cells and the replicator."""
        return httpx.get(self.first.base_url + "/_local/cells", timeout=10).json()

    def descendants(self) -> set[int]:
        """Every process the pair's process started, and theirs (the cells, their emulators)."""
        found, pending = set(), [self.process.process.pid]
        while pending:
            for child in children_of(pending.pop()):
                found.add(child)
                pending.append(child)
        return found

    def stop(self) -> int:
        """SIGTERM, as Ctrl-C would: the exit status, once the cells are gone."""
        return self.process.stop() if self.process else 0

    def survivors(self) -> list[int]:
        """The processes seen at start that are still alive (after stop: none should be)."""
        return sorted(pid for pid in self._descendants if is_alive(pid))
