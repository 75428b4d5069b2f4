"""The whole local stack: emulator, resources, functions, gateway and pollers."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import botocore.session
from botocore.config import Config

from devstack.dynamodb_local import DynamoDBLocal
from devstack.gateway import Gateway, Router
from devstack.pollers import QueuePoller, StreamPoller
from devstack.processes import start_emulator
from devstack.provision import assigned_names, provision, run_custom_resources, secret_values
from devstack.runtime import load_functions
from devstack.secrets_extension import SecretsExtension
from devstack.template import REGION, ROOT, Resolver

ENGINES = ("dynamodb-local", "moto")
DEFAULT_ALLOWED_ORIGINS = "http://localhost:5173"  # AllowedOrigins of the local stack (scripts/dev --allow-origin)
LOCAL_EMAIL_SENDER = "invitations@svc.localhost"   # the local stack's sender, verified on the emulator at start

# What the moto engine does not keep of the service's promises (printed when it starts).
MOTO_ENGINE_CAVEATS = (
    "DynamoDB on the emulator (moto) instead of DynamoDB Local: conditional writes are not atomic under "
    "concurrency (rate limits and one-winner races can let a few extra requests through), and a cancelled "
    "transaction still writes stream records (the local stack drops those outbox records by reading the item "
    "back). Use it only where Java 17 is missing."
)


class LocalStack:
    def __init__(self, *, port: int = 3000, host: str = "127.0.0.1", parameters: dict[str, str] | None = None,
                 emulator_endpoint: str | None = None, containers: int = 4, persist_dir: Path | None = None,
                 engine: str = "dynamodb-local", emulator_bind: str = "127.0.0.1", log=print,
                 listening: socket.socket | None = None, secrets_from: Path | None = None,
                 secrets_to: Path | None = None, cells_status: Callable[[], dict[str, Any]] | None = None,
                 model_api_keys: dict[str, str] | None = None, iam: bool | None = None) -> None:
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}")
        if engine == "moto" and persist_dir is not None:
            raise ValueError("--persist keeps the tables in DynamoDB Local: it does not go with the moto engine")
        self.port, self.host, self.log = port, host, log
        self.engine = engine
        self.persist_dir = persist_dir
        self.dynamodb_local: DynamoDBLocal | None = None
        self.dynamodb_endpoint: str | None = None
        # Local development: BYOS endpoints may be on loopback (e.g. a local S3 server or Azurite), and the
        # model is the offline one (no Bedrock here); a front-end's dev server (Vite's default origin) may call
        # the API from a browser.
        self.parameters = {"AllowLoopbackEndpoints": "true", "ModelProvider": "offline",
                           "DashboardHosting": "Disabled",   # served by devstack/dashboard.py instead
                           "AllowedOrigins": DEFAULT_ALLOWED_ORIGINS, "EmailSender": LOCAL_EMAIL_SENDER,
                           **(parameters or {})}
        self.model_api_keys = model_api_keys or {}   # {"openai": key, ...}: ModelApiKeysSecret's value
        self.emulator_endpoint = emulator_endpoint
        self.emulator_bind = emulator_bind  # moto's address: loopback, or one containers reach (sam local)
        self.containers = containers
        self.emulator: subprocess.Popen | None = None
        self.gateway: Gateway | None = None
        self.secrets_extension: SecretsExtension | None = None
        self.pollers: list[Any] = []
        # A cell of several (devstack/cells.py): its gateway's socket, bound by the parent process; the
        # secrets every cell shares (as a replicated secret), written by the first cell and read by the
        # others; and the whole's status, which the first cell answers at /_local/cells.
        self.listening = listening
        self.secrets_from, self.secrets_to = secrets_from, secrets_to
        self.cells_status = cells_status
        from devstack import iam as iam_roles
        self.iam = iam_roles.enabled() if iam is None else iam   # each function's calls checked against its role

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.gateway.port if self.gateway else self.port}"

    def start(self) -> LocalStack:
        from devstack import limits
        limits.install()   # AWS's size limits that the emulator does not enforce, on every client of the layer
        if self.emulator_endpoint is None:
            self.emulator, emulator_port = start_emulator(self.emulator_bind)
            host = "127.0.0.1" if self.emulator_bind in ("127.0.0.1", "0.0.0.0") else self.emulator_bind
            self.emulator_endpoint = f"http://{host}:{emulator_port}"
        kept_secrets = None
        if self.engine == "dynamodb-local":
            # The tables on AWS's own engine (atomic conditions, real transactions and streams), in
            # memory; with --persist in DIR's files, and the secrets (the key pepper, the signing
            # keys) saved beside them, so keys and tokens issued before a restart still work after it.
            data_dir = None
            if self.persist_dir is not None:
                data_dir = self.persist_dir / "dynamodb"
                data_dir.mkdir(parents=True, exist_ok=True)
                if self._secrets_file.exists():
                    kept_secrets = json.loads(self._secrets_file.read_text())
            self.dynamodb_local = DynamoDBLocal(data_dir=data_dir).start()
            self.dynamodb_endpoint = self.dynamodb_local.endpoint
        else:
            print(f"WARNING: {MOTO_ENGINE_CAVEATS}", file=sys.stderr, flush=True)  # quiet or not
            # moto keeps no ClientRequestToken and runs a retried transaction beside the first one
            # (one can undo the other): its DynamoDB gets a read timeout long enough for a loaded
            # machine, so botocore does not retry what moto is still doing.
            from dataclasses import replace

            from svc_core.adapters import aws
            aws.PROFILES["dynamodb"] = replace(aws.PROFILES["dynamodb"], read_timeout=30)
        if self.secrets_from is not None:  # the first cell's values (it writes them once it made them)
            kept_secrets = _wait_for_json(self.secrets_from, SHARED_SECRETS_TIMEOUT_SECONDS)
        if self.model_api_keys:
            keys_secret = Resolver(self.parameters).physical_name("ModelApiKeysSecret")
            kept_secrets = {**(kept_secrets or {}), keys_secret: json.dumps(self.model_api_keys)}
        environment = provision(self.emulator_endpoint, self.parameters, dynamodb_endpoint=self.dynamodb_endpoint,
                                secret_values=kept_secrets)
        # No CloudWatch here to read the metrics' EMF lines: they would only fill the console (and
        # --quiet's), unless the developer asks for them (POWERTOOLS_METRICS_DISABLED=false).
        environment.setdefault("POWERTOOLS_METRICS_DISABLED", os.environ.get("POWERTOOLS_METRICS_DISABLED", "true"))
        # Where the parameters attach the Parameters and Secrets Extension's layer (SecretsExtensionLayerArn,
        # as the template's HasSecretsExtension), the functions read their secrets through an emulated one;
        # else through the SDK, as a deployment with the defaults does, where each read is checked against
        # the function's role (the extension cannot tell which in-process function asks). Its variables are
        # the in-process functions' only (not self.environment, which `sam local` containers and operator
        # commands get: they cannot reach its loopback port).
        extension_env: dict[str, str] = {}
        if self.parameters.get("SecretsExtensionLayerArn"):
            self.secrets_extension = SecretsExtension(self.emulator_endpoint).start()
            extension_env = self.secrets_extension.environment()
        # The functions read their settings from the process's environment, as in Lambda; stop()
        # puts back what was there before, so another stack (or the tests) never meets this one's.
        dynamodb_only = ("AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_DYNAMODB_STREAMS")
        self._environ_before = {k: os.environ.get(k) for k in [*environment, *extension_env, *dynamodb_only,
                                                                 "PUBLIC_BASE_URL"]}
        for name in dynamodb_only:  # inherited from another stack (a parent process's), they would win
            os.environ.pop(name, None)
        os.environ.update(environment)
        os.environ.update(extension_env)
        self.environment = environment
        self._forget_caches()
        run_custom_resources(self.parameters)
        for kept in (self._secrets_file if self.persist_dir is not None else None, self.secrets_to):
            if kept is not None:
                _write_private(kept, json.dumps(secret_values(self.emulator_endpoint, self.parameters)))
        if self.iam:
            from devstack import iam
            iam.install(self.parameters, assigned_names(self.emulator_endpoint))
        from devstack import meter
        if meter.directory() is not None:   # DEVSTACK_METER=DIR: what each invocation consumes (bench/cost.py)
            meter.install()
        resolver = Resolver(self.parameters)
        functions = load_functions(resolver, self.containers)
        self.gateway = Gateway(Router(resolver.api_routes(), resolver.streaming_routes()), functions, self.host,
                               self.port, log=self.log, local_routes=self._local_routes(),
                               allowed_origins=self._allowed_origins(), local_health=self.status,
                               listening=self.listening).start()
        os.environ["PUBLIC_BASE_URL"] = self.base_url  # the device login's authUrl points at this gateway
        self._forget_caches()
        clients = self._clients()
        queue_url = lambda logical_id: clients["sqs"].get_queue_url(  # noqa: E731
            QueueName=resolver.physical_name(logical_id))["QueueUrl"]
        for table, function, props in resolver.stream_subscriptions():
            if props.get("Enabled", True):
                name = resolver.physical_name(table)
                self.pollers.append(StreamPoller(
                    clients, name, functions[function].invoke, props, log=self.log, function=function,
                    on_failure=self._failure_destination(clients, queue_url, props),
                    skip_insert=self._phantom_check(clients, name) if self.engine == "moto" else None).start())
        for queue, function, props in resolver.queue_subscriptions():
            self.pollers.append(QueuePoller(clients, queue_url(queue), resolver.arn(queue), functions[function].invoke,
                                            props, log=self.log, function=function).start())
        return self

    def _allowed_origins(self) -> frozenset[str]:
        from svc_core.http import cors
        return cors.parse_origins(self.parameters.get("AllowedOrigins", ""))

    def allow_origins(self, origins: list[str]) -> None:
        """Change the AllowedOrigins of a running stack (the functions' environment and the gateway), as
        a redeploy with another parameter value would."""
        self.parameters["AllowedOrigins"] = ",".join(origins)
        value = self.parameters["AllowedOrigins"]
        os.environ["CORS_ALLOWED_ORIGINS"] = self.environment["CORS_ALLOWED_ORIGINS"] = value
        from svc_core.platform import config
        config.settings.cache_clear()
        if self.gateway is not None:
            self.gateway.allowed_origins = self._allowed_origins()

    def _local_routes(self) -> dict[str, Any]:
        from devstack import mailbox
        cells = {"/_local/cells": lambda _query: self.cells_status()} if self.cells_status else {}
        return {**cells, "/_local/status": lambda _query: self.status(),
                **mailbox.routes(self.emulator_endpoint)}

    def status(self) -> dict[str, Any]:
        """GET /_local/status: the region, the engine and what each poller has done (local stack only)."""
        return {"region": REGION, "engine": self.engine, "pollers": [poller.status() for poller in self.pollers]}

    @staticmethod
    def _failure_destination(clients: dict[str, Any], queue_url, props: dict[str, Any]):
        """The mapping's OnFailure destination (an SQS queue of the template) as a sender, or None."""
        destination = ((props.get("DestinationConfig") or {}).get("OnFailure") or {}).get("Destination")
        if not destination:
            return None
        url = queue_url(destination["Fn::GetAtt"][0])
        return lambda record: clients["sqs"].send_message(QueueUrl=url, MessageBody=json.dumps(record, default=str))

    @staticmethod
    def _phantom_check(clients: dict[str, Any], table: str):
        """moto writes stream records for the items of a cancelled transaction: an INSERT whose item
        is not in the table (read consistently) never happened, and is not delivered."""
        def never_written(record: dict[str, Any]) -> bool:
            keys = record["dynamodb"]["Keys"]
            return "Item" not in clients["dynamodb"].get_item(TableName=table, Key=keys, ConsistentRead=True)
        return never_written

    @property
    def _secrets_file(self) -> Path:
        return self.persist_dir / "secrets.json"

    def _clients(self) -> dict[str, Any]:
        session = botocore.session.get_session()
        dynamodb = self.dynamodb_endpoint or self.emulator_endpoint
        endpoints = {"dynamodb": dynamodb, "dynamodbstreams": dynamodb, "sqs": self.emulator_endpoint}
        config = Config(max_pool_connections=50)  # the queue pollers' threads share these clients
        return {s: session.create_client(s, region_name=REGION, endpoint_url=url, config=config,
                                         aws_access_key_id="local", aws_secret_access_key="local")
                for s, url in endpoints.items()}

    @staticmethod
    def _forget_caches() -> None:
        from svc_core.adapters import aws, secrets_cache
        from svc_core.auth import authenticate, tenant_policy
        from svc_core.platform import config
        config.settings.cache_clear()
        aws.reset_clients()
        secrets_cache.clear()
        authenticate.forget_pepper()  # a new stack has its own (a function keeps it for its life)
        tenant_policy.forget()

    def stop(self) -> None:
        if self.iam:
            from devstack import iam
            iam.uninstall()
        for poller in self.pollers:  # all at once: their queue receives' waits end together
            poller.ask_to_stop()
        for poller in self.pollers:
            poller.stop()
        if self.gateway:
            self.gateway.stop()
        if self.secrets_extension:
            self.secrets_extension.stop()
        if self.dynamodb_local:
            self.dynamodb_local.stop()
        if self.emulator and self.emulator.poll() is None:
            self.emulator.send_signal(signal.SIGTERM)
            try:
                self.emulator.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.emulator.kill()
        for name, value in getattr(self, "_environ_before", {}).items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._forget_caches()


STACKS_DIR = ROOT / ".local" / "stacks"


def environment_file(port: int, persist_dir: Path | None) -> Path:
    """Where a stack writes the functions' environment: beside its own state, so stacks never share one."""
    return (persist_dir if persist_dir is not None else STACKS_DIR / str(port)) / "local-stack-env.json"


def _write_private(path: Path, text: str) -> None:
    """Readable by the user only; whole or not at all (a cell may be waiting for the file to appear)."""
    written = path.with_name(path.name + ".tmp")
    fd = os.open(written, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.replace(written, path)


SHARED_SECRETS_TIMEOUT_SECONDS = 180  # the first cell starts at the same time, on a machine maybe loaded


def _wait_for_json(path: Path, seconds: float) -> Any:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} was not written in {seconds:.0f} s (the first cell did not start)")
        time.sleep(0.1)
    return json.loads(path.read_text())


__all__ = ["LocalStack", "ROOT", "environment_file"]
