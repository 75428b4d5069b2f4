"""The whole local stack: emulator, resources, functions, gateway and pollers."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from typing import Any

import botocore.session

from devstack.gateway import Gateway, Router
from devstack.pollers import QueuePoller, StreamPoller
from devstack.provision import provision, run_custom_resources
from devstack.runtime import load_functions
from devstack.template import REGION, ROOT, Resolver


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:
    """In the child: ask Linux to end it when the stack's process ends, however that ends."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def start_emulator(port: int) -> subprocess.Popen:
    """moto's server in a child process that never outlives the stack."""
    process = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               preexec_fn=_die_with_parent if sys.platform == "linux" else None)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/moto-api/", timeout=1).close()
            return process
        except OSError:
            if process.poll() is not None:
                raise RuntimeError("the AWS emulator exited at start")
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("the AWS emulator did not start in 30 s")


class LocalStack:
    def __init__(self, *, port: int = 3000, host: str = "127.0.0.1", parameters: dict[str, str] | None = None,
                 emulator_endpoint: str | None = None, containers: int = 4, log=print) -> None:
        self.port, self.host, self.log = port, host, log
        self.parameters = parameters or {}
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
        environment = provision(self.emulator_endpoint, self.parameters)
        os.environ.update(environment)
        self._forget_caches()
        run_custom_resources(self.parameters)
        resolver = Resolver(self.parameters)
        functions = load_functions(resolver, self.containers)
        self.gateway = Gateway(Router(resolver.api_routes()), functions, self.host, self.port, log=self.log).start()
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

    def _clients(self) -> dict[str, Any]:
        session = botocore.session.get_session()
        return {s: session.create_client(s, region_name=REGION, endpoint_url=self.emulator_endpoint,
                                         aws_access_key_id="local", aws_secret_access_key="local")
                for s in ("dynamodb", "dynamodbstreams", "sqs")}

    @staticmethod
    def _forget_caches() -> None:
        from svc_core import aws, config, secrets_cache
        config.settings.cache_clear()
        aws.reset_clients()
        secrets_cache.clear()

    def stop(self) -> None:
        for poller in self.pollers:
            poller.stop()
        if self.gateway:
            self.gateway.stop()
        if self.emulator and self.emulator.poll() is None:
            self.emulator.send_signal(signal.SIGTERM)
            try:
                self.emulator.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.emulator.kill()


__all__ = ["LocalStack", "ROOT"]
