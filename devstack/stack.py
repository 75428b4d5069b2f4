"""The whole local stack: emulator, resources, functions, gateway and pollers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import botocore.session

from devstack.dynamodb_local import DynamoDBLocal
from devstack.gateway import Gateway, Router
from devstack.processes import free_port, start_emulator
from devstack.pollers import QueuePoller, StreamPoller
from devstack.provision import provision, run_custom_resources, secret_values
from devstack.runtime import load_functions
from devstack.template import REGION, ROOT, Resolver


class LocalStack:
    def __init__(self, *, port: int = 3000, host: str = "127.0.0.1", parameters: dict[str, str] | None = None,
                 emulator_endpoint: str | None = None, containers: int = 4, persist_dir: Path | None = None,
                 log=print) -> None:
        self.port, self.host, self.log = port, host, log
        self.persist_dir = persist_dir
        self.dynamodb_local: DynamoDBLocal | None = None
        self.dynamodb_endpoint: str | None = None
        # Local development: BYOS endpoints may be on loopback (e.g. a local S3 server or Azurite), and the
        # model is the offline one (no Bedrock here).
        self.parameters = {"AllowLoopbackEndpoints": "true", "ModelProvider": "offline", **(parameters or {})}
        self.emulator_endpoint = emulator_endpoint
        self.containers = containers
        self.emulator: subprocess.Popen | None = None
        self.gateway: Gateway | None = None
        self.pollers: list[Any] = []

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.gateway.port if self.gateway else self.port}"

    def start(self) -> "LocalStack":
        if self.emulator_endpoint is None:
            emulator_port = free_port()
            self.emulator = start_emulator(emulator_port)
            self.emulator_endpoint = f"http://127.0.0.1:{emulator_port}"
        kept_secrets = None
        if self.persist_dir is not None:
            # Tables live in DynamoDB Local's files; secrets (the key pepper, the signing keys) are
            # saved beside them, so keys and tokens issued before a restart still work after it.
            (self.persist_dir / "dynamodb").mkdir(parents=True, exist_ok=True)
            self.dynamodb_local = DynamoDBLocal(data_dir=self.persist_dir / "dynamodb").start()
            self.dynamodb_endpoint = self.dynamodb_local.endpoint
            if self._secrets_file.exists():
                kept_secrets = json.loads(self._secrets_file.read_text())
        environment = provision(self.emulator_endpoint, self.parameters, dynamodb_endpoint=self.dynamodb_endpoint,
                                secret_values=kept_secrets)
        os.environ.update(environment)
        self.environment = environment
        self._forget_caches()
        run_custom_resources(self.parameters)
        if self.persist_dir is not None:
            _write_private(self._secrets_file, json.dumps(secret_values(self.emulator_endpoint, self.parameters)))
        resolver = Resolver(self.parameters)
        functions = load_functions(resolver, self.containers)
        self.gateway = Gateway(Router(resolver.api_routes(), resolver.streaming_routes()), functions, self.host,
                               self.port, log=self.log).start()
        os.environ["PUBLIC_BASE_URL"] = self.base_url  # the device login's authUrl points at this gateway
        self._forget_caches()
        clients = self._clients()
        for table, function, props in resolver.stream_subscriptions():
            if props.get("Enabled", True):
                self.pollers.append(StreamPoller(clients, resolver.physical_name(table), functions[function].invoke,
                                                 props, log=self.log).start())
        for queue, function, props in resolver.queue_subscriptions():
            url = environment.get(f"queue:{queue}") or clients["sqs"].get_queue_url(
                QueueName=resolver.physical_name(queue))["QueueUrl"]
            self.pollers.append(QueuePoller(clients, url, resolver.arn(queue), functions[function].invoke, props,
                                            log=self.log).start())
        return self

    @property
    def _secrets_file(self) -> Path:
        return self.persist_dir / "secrets.json"

    def _clients(self) -> dict[str, Any]:
        session = botocore.session.get_session()
        dynamodb = self.dynamodb_endpoint or self.emulator_endpoint
        endpoints = {"dynamodb": dynamodb, "dynamodbstreams": dynamodb, "sqs": self.emulator_endpoint}
        return {s: session.create_client(s, region_name=REGION, endpoint_url=url,
                                         aws_access_key_id="local", aws_secret_access_key="local")
                for s, url in endpoints.items()}

    @staticmethod
    def _forget_caches() -> None:
        from svc_core import aws, config, secrets_cache, tenant_policy
        config.settings.cache_clear()
        aws.reset_clients()
        secrets_cache.clear()
        tenant_policy.forget()

    def stop(self) -> None:
        for poller in self.pollers:
            poller.stop()
        if self.gateway:
            self.gateway.stop()
        if self.dynamodb_local:
            self.dynamodb_local.stop()
        if self.emulator and self.emulator.poll() is None:
            self.emulator.send_signal(signal.SIGTERM)
            try:
                self.emulator.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.emulator.kill()


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)


__all__ = ["LocalStack", "ROOT"]
