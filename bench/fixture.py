"""What every measurement shares: the AWS emulator (moto's server in a child process), the
resources of template.yaml provisioned on it, and a tenant with an API key and a project."""

from __future__ import annotations

import copy
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
LAYER = ROOT / "layers" / "shared" / "python"
for _path in (LAYER, ROOT):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

# The bench never reaches real AWS: no credentials or profile of the machine are read, and
# every client (ours and the children's) is pointed at the emulator by AWS_ENDPOINT_URL.
SAFE_AWS_ENV = {"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local",
                "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1",
                "POWERTOOLS_TRACE_DISABLED": "true",
                # Metrics on, as deployed: each request prints its EMF line (to /dev/null here).
                "POWERTOOLS_METRICS_DISABLED": "false"}
DROPPED_ENV = ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
               "AWS_ENDPOINT_URL", "PYTHONPATH")

# 2000 warm requests on one key would pass the default 1000 per window: the bench's stack
# gets a higher RateLimitPerWindow (a template parameter; every request is still counted).
PARAMETERS = {"RateLimitPerWindow": "1000000"}


def isolate_from_aws() -> dict[str, str]:
    """Make this process's environment safe; returns a copy of it before any provisioning."""
    for name in DROPPED_ENV:
        os.environ.pop(name, None)
    os.environ.update(SAFE_AWS_ENV)
    return dict(os.environ)


class _SetEnv:
    """What tests.support.stack.Stack wants of pytest's monkeypatch."""

    @staticmethod
    def setenv(name: str, value: str) -> None:
        os.environ[name] = value


class Fixture:
    """The emulator, provisioned, with one tenant, an all-scopes API key and one project."""

    def __init__(self) -> None:
        from tests.support.emulator import MotoServer
        self.server = MotoServer()
        self.endpoint = ""  # the server's, once started
        self.stack = None
        self.secrets_extension = None
        self._serial = 0

    def provision(self) -> Fixture:
        from tests.support.stack import Stack
        self.endpoint = self.server.start().endpoint
        try:
            self.stack = Stack(self.endpoint, _SetEnv(), PARAMETERS)
            # The benchmarks create projects by the thousand: the plan without a project limit.
            self.tenant_id = self.stack.new_tenant("Bench", plan="enterprise")
            made = self.stack.new_key(self.tenant_id)
            self.key, self.key_id = made["key"], made["id"]
            self.project_id = self.new_project()
            self.chat_session_id = self.new_chat_session()
            # The children read their secrets as a deployment with the extension's layer attached.
            from devstack.secrets_extension import SecretsExtension
            self.secrets_extension = SecretsExtension(self.endpoint).start()
        except BaseException:
            self.server.stop()
            raise
        return self

    def call(self, function_dir: str, event: dict[str, Any]) -> dict[str, Any]:
        from tests.support.functions import load_function
        return load_function(function_dir).lambda_handler(event, None)

    def new_project(self) -> str:
        from tests.support.functions import api_event
        self._serial += 1
        event = api_event("Projects-CreateProject", token=self.key,
                          body={"name": f"bench project {self._serial}", "language": "python",
                                "description": "Made by the benchmarks."})
        with quiet_stdout():
            response = self.call("projects", event)
        if response["statusCode"] != 201:
            raise RuntimeError(f"could not create a project: {response}")
        return json.loads(response["body"])["data"]["id"]

    def new_chat_session(self) -> str:
        from tests.support.functions import api_event
        event = api_event("Chat-CreateChatSession", token=self.key, body={"title": "bench"})
        with quiet_stdout():
            response = self.call("chat", event)
        if response["statusCode"] != 201:
            raise RuntimeError(f"could not create a chat session: {response}")
        return json.loads(response["body"])["data"]["id"]

    def new_key_id(self, scopes: list[str] | None = None) -> str:
        return self.stack.new_key(self.tenant_id, scopes)["id"]

    def child_env(self, *pythonpath: Path, snapstart: bool = False, function: str | None = None) -> dict[str, str]:
        """The environment a function gets (template.yaml's variables, the emulator's endpoint), with the
        Parameters and Secrets Extension attached (emulated); a SnapStart function has no session token
        (Lambda gives it the container's credentials), so it reads its secrets with the SDK. function:
        the name Lambda gives a function's process (AWS_LAMBDA_FUNCTION_NAME)."""
        env = {**os.environ, **self.secrets_extension.environment()}
        if function is not None:
            env["AWS_LAMBDA_FUNCTION_NAME"] = function
        if snapstart:
            del env["AWS_SESSION_TOKEN"]
        env["PYTHONPATH"] = os.pathsep.join(str(p) for p in pythonpath)
        return env

    def stop(self) -> None:
        if self.secrets_extension is not None:
            self.secrets_extension.stop()
        if self.stack is not None:
            self.stack.forget_caches()
        self.server.stop()


class quiet_stdout:
    """Send file descriptor 1 to /dev/null: the functions log one JSON line per request to
    stdout (as on Lambda), which must not land in the table. The write still happens."""

    def __enter__(self) -> quiet_stdout:
        sys.stdout.flush()
        self._saved = os.dup(1)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
        return self

    def __exit__(self, *exc: Any) -> None:
        sys.stdout.flush()
        os.dup2(self._saved, 1)
        os.close(self._saved)


def route_event(function_logical_id: str, event_key: str, method: str, path: str, *,
                token: str | None = None, path_params: dict[str, str] | None = None,
                body: Any = None) -> dict[str, Any]:
    """The API Gateway event for one route of template.yaml: events/<Function>-<Event>.json
    when sam local generate-event made one, else another event of the same function with the
    route's resource and path put in (as the gateway would build it)."""
    from tests.support.functions import api_event
    prefix = function_logical_id.removesuffix("Function")
    stem = f"{prefix}-{event_key}"
    if not (ROOT / "events" / f"{stem}.json").exists():
        stem = sorted(p.stem for p in (ROOT / "events").glob(f"{prefix}-*.json"))[0]
    event = api_event(stem, token=token, path_params=path_params, body=body, method=method)
    concrete = path
    for name, value in (path_params or {}).items():
        concrete = concrete.replace("{%s}" % name, value)
    event = copy.deepcopy(event)
    event["resource"] = event["requestContext"]["resourcePath"] = path
    event["path"] = concrete
    event["requestContext"]["path"] = "/v1" + concrete
    return event


def wait_for_window_room(margin: float = 3.0, window: int = 60) -> None:
    """Sleep past the end of the rate-limit window when it ends within `margin` seconds: the
    first request of a window makes one more call (it starts the window)."""
    into = time.time() % window
    if into > window - margin:
        time.sleep(window - into + 0.2)
