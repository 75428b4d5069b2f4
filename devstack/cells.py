"""Several cells on one machine: python -m devstack --regions us-east-1,eu-central-1 [--port 3000]
[--replication-lag 1.0].

A cell is one deployment of template.yaml in one region; here each is a local stack of its own
(python -m devstack) in a process of its own, since the functions read their settings from the
process's environment: its region (devstack.template.REGION, the functions' AWS_REGION), its own
DynamoDB Local and emulator, its gateway on its own port (the first on --port, the next on port+1,
...: this process binds them, so with --port 0 every cell knows every other's URL before it starts),
and the template's Cells parameter naming every cell's base URL. The secrets a deployment replicates
(the JWT signing keys, the API-key pepper) are the first cell's in every cell: it writes their values
once it made them, the others wait for them before creating theirs. The development tenant
(devstack/bootstrap.py) is made in the first cell.

The global directory is replicated between the cells' DirectoryTable by devstack/replicator.py,
in this process. GET /_local/cells on the first cell shows the whole: each cell, and the
replicator's changes applied and pending, and its lag.

Each cell writes its environment to .local/stacks/<its port>/local-stack-env.json, so
`python -m ops --local --stack PORT` works on each. SIGINT or SIGTERM stops the replicator and every
cell (each stops its own emulators); a cell dies with this process however that ends.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from devstack.bootstrap import print_credentials
from devstack.loopback_server import LoopbackHTTPServer
from devstack.processes import die_with_parent
from devstack.replicator import Cell, DirectoryReplicator
from devstack.stack import environment_file
from devstack.template import REGION_VARIABLE, ROOT

READY = "local stack ready"
START_TIMEOUT_SECONDS = 240  # cells start at once on a machine of two cores
STOP_TIMEOUT_SECONDS = 30


@dataclass
class CellProcess:
    region: str
    port: int
    listening: socket.socket
    process: subprocess.Popen | None = None
    lines: list[str] = field(default_factory=list)
    ready: threading.Event = field(default_factory=threading.Event)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def env_file(self) -> Path:
        return environment_file(self.port, None)

    def environment(self) -> dict[str, str]:
        return json.loads(self.env_file.read_text())

    def status(self) -> dict[str, Any]:
        return {"region": self.region, "baseUrl": self.base_url, "environmentFile": str(self.env_file),
                "running": self.process is not None and self.process.poll() is None}


def parse_regions(value: str) -> list[str]:
    regions = [region.strip() for region in value.split(",") if region.strip()]
    if not regions or len(set(regions)) != len(regions):
        raise ValueError("--regions takes distinct regions separated by commas, e.g. us-east-1,eu-central-1")
    return regions


def check_options(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """--regions and what goes with it (parser.error otherwise)."""
    try:
        parse_regions(args.regions)
    except ValueError as exc:
        parser.error(str(exc))
    for given, why in ((args.persist, "--persist"), (args.sam_local, "--sam-local"), (args.emulator == "moto",
                                                                                        "--emulator moto")):
        if given:
            parser.error(f"{why} is for a single cell: it does not go with --regions")
    if any(p.partition("=")[0] == "Cells" for p in args.parameters):
        parser.error("--regions sets the Cells parameter itself")
    if args.replication_lag < 0:
        parser.error("--replication-lag takes seconds, 0 or more")


def main(args: argparse.Namespace, parser: argparse.ArgumentParser, *, stop: threading.Event, started: float) -> int:
    regions = parse_regions(args.regions)
    try:
        cells = [CellProcess(region, *_listen(args.port + i if args.port else 0)) for i, region in enumerate(regions)]
    except OSError as exc:
        parser.error(f"the cells' ports from {args.port} on: {exc}")
    args.credentials = args.credentials.resolve()  # the cells run in the repository's root
    with _Stack(cells, args) as stack:
        try:
            stack.start(stop)
        except RuntimeError as exc:
            print(f"ERROR {exc}", file=sys.stderr, flush=True)
            return 1
        first = cells[0]
        for cell in cells:
            print(f"cell {cell.region} at {cell.base_url}/api/v1 (python -m ops --local --stack {cell.port})", flush=True)
        print(f"directory replicated between the cells after {args.replication_lag:g} s: "
              f"GET {first.base_url}/_local/cells", flush=True)
        print(f"{READY} in {time.monotonic() - started:.1f} s: {len(cells)} cells", flush=True)
        allowed = ",".join(args.allow_origins) if args.allow_origins else first.environment().get(
            "CORS_ALLOWED_ORIGINS", "")
        print_credentials(allowed, json.loads(args.credentials.read_text()), args.credentials)
        stop.wait()
        print("stopping", flush=True)
    return 0


def _listen(port: int) -> tuple[int, socket.socket]:
    """A listening socket on 127.0.0.1 for a cell's gateway, bound here so its port is known before it starts."""
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind(("127.0.0.1", port))
        listening.listen(1024)
    except OSError:
        listening.close()
        raise
    return listening.getsockname()[1], listening


class _Stack:
    """The cells' processes, the replicator and the status server; closing stops them all."""

    def __init__(self, cells: list[CellProcess], args: argparse.Namespace) -> None:
        self.cells, self.args = cells, args
        self.state = Path(tempfile.mkdtemp(prefix="svc-cells-"))  # mode 0700: the shared secrets pass here
        self.replicator: DirectoryReplicator | None = None
        self.status_server: LoopbackHTTPServer | None = None

    def __enter__(self) -> _Stack:
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.stop()

    def start(self, stop: threading.Event) -> None:
        self._serve_status()
        urls = json.dumps({cell.region: cell.base_url for cell in self.cells})
        secrets = self.state / "secrets.json"
        for index, cell in enumerate(self.cells):
            argv = [sys.executable, "-m", "devstack", "--cell", "--port", str(cell.port),
                    "--listen-fd", str(cell.listening.fileno()), "--credentials", str(self.args.credentials),
                    "--parameter", f"Cells={urls}", "--sam-host", self.args.sam_host,
                    "--emulator-bind", self.args.emulator_bind, *self._passed_on()]
            if index == 0:
                argv += ["--secrets-out", str(secrets), "--cells-status-url", self.status_url]
            else:
                argv += ["--secrets-in", str(secrets), "--no-bootstrap"]
            # Its own session: a terminal's Ctrl-C reaches this process only, which stops the cells in order.
            cell.process = subprocess.Popen(
                argv, cwd=ROOT, env={**os.environ, REGION_VARIABLE: cell.region, "PYTHONUNBUFFERED": "1"},
                pass_fds=(cell.listening.fileno(),), start_new_session=True, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                preexec_fn=die_with_parent if sys.platform == "linux" else None)
            cell.listening.close()  # the cell's now
            threading.Thread(target=_forward, args=(cell,), name=f"cell-{cell.region}", daemon=True).start()
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        for cell in self.cells:
            while not cell.ready.wait(0.2) and time.monotonic() < deadline and not stop.is_set():
                pass
            if stop.is_set():
                raise RuntimeError("stopped before the cells were ready")
            if not any(line.startswith(READY) for line in cell.lines) or cell.process.poll() is not None:
                raise RuntimeError(f"the cell {cell.region} did not start")
        self.replicator = DirectoryReplicator(
            [Cell(cell.region, environment["AWS_ENDPOINT_URL_DYNAMODB"], environment["DIRECTORY_TABLE"])
             for cell, environment in ((cell, cell.environment()) for cell in self.cells)],
            lag=self.args.replication_lag, log=(lambda _msg: None) if self.args.quiet else print).start()

    def _passed_on(self) -> list[str]:
        passed = ["--quiet"] if self.args.quiet else []
        for origin in self.args.allow_origins or ():
            passed += ["--allow-origin", origin]
        for parameter in self.args.parameters:
            passed += ["--parameter", parameter]
        return passed

    # -- GET /_local/cells (answered by the first cell, from here) ----------------------------
    def status(self) -> dict[str, Any]:
        return {"cells": [cell.status() for cell in self.cells],
                "replicator": self.replicator.status() if self.replicator else None}

    @property
    def status_url(self) -> str:
        return f"http://127.0.0.1:{self.status_server.server_address[1]}/"

    def _serve_status(self) -> None:
        stack = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = json.dumps(stack.status()).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.status_server = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.status_server.serve_forever, name="cells-status", daemon=True).start()

    def stop(self) -> None:
        if self.replicator is not None:
            self.replicator.stop()
        running = [cell.process for cell in self.cells if cell.process is not None and cell.process.poll() is None]
        for process in running:  # all at once: each stops its own emulators
            process.send_signal(signal.SIGTERM)
        for process in running:
            try:
                process.wait(timeout=STOP_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()  # its emulators die with it (PR_SET_PDEATHSIG)
                process.wait()
        for cell in self.cells:
            cell.listening.close()
        if self.status_server is not None:
            self.status_server.shutdown()
            self.status_server.server_close()
        shutil.rmtree(self.state, ignore_errors=True)


def _forward(cell: CellProcess) -> None:
    """The cell's output, each line under its region; the cell is ready once it says so."""
    for line in cell.process.stdout:
        cell.lines.append(line)
        print(f"[{cell.region}] {line}", end="", flush=True)
        if line.startswith(READY):
            cell.ready.set()
    cell.ready.set()  # it ended: start() tells


def status_reader(url: str):
    """GET /_local/cells of the first cell: the whole's status, from the process that started the cells."""
    def read() -> dict[str, Any]:
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:
                return json.loads(answer.read())
        except OSError as exc:
            return {"error": f"the cells' status is not available: {exc}"}
    return read
