"""Load a function's real handler module, and build API Gateway events for it from events/."""

from __future__ import annotations

import base64
import copy
import importlib.util
import json
import uuid
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


@cache
def load_function(directory: str):
    """The function's handler module, imported as its container would (its import's AWS calls and
    every call of its lambda_handler made under the function's IAM role: devstack/iam.py)."""
    from devstack import iam
    logical_id = function_of(directory)
    path = ROOT / "functions" / directory / "app.py"
    spec = importlib.util.spec_from_file_location(f"fn_{directory}_app", path)
    module = importlib.util.module_from_spec(spec)
    with iam.acting_as(logical_id):
        spec.loader.exec_module(module)
    handler = getattr(module, "lambda_handler", None)
    if handler is not None:
        def lambda_handler(event, context, _handler=handler):
            with iam.acting_as(logical_id):
                return _handler(event, context)
        module.lambda_handler = lambda_handler
    return module


@cache
def function_of(directory: str) -> str:
    """The template's logical id of the function whose code is functions/<directory>."""
    from devstack.template import load
    for logical_id, resource in load()["Resources"].items():
        if resource["Type"] == "AWS::Serverless::Function" and \
                resource["Properties"].get("CodeUri", "").rstrip("/") == f"functions/{directory}":
            return logical_id
    raise LookupError(f"no function of template.yaml has its code in functions/{directory}")


def served_routes() -> dict[tuple[str, str], Any]:
    """(method, path) -> the route (svc_core.http.api.Route) of the function's Api serving it, for
    every function of the template."""
    from devstack.template import Resolver
    resolver = Resolver({})
    served = {}
    for logical_id in resolver.of_type("AWS::Serverless::Function"):
        api = getattr(load_function(resolver.function_code_dir(logical_id).name), "api", None)
        for route in getattr(api, "routes", ()):
            served[(route.spec.method, route.spec.path)] = route
    return served


@cache
def _event_file(name: str) -> dict[str, Any]:
    return json.loads((ROOT / "events" / f"{name}.json").read_text())


def api_event(name: str, *, token: str | None = None, path_params: dict[str, str] | None = None,
              body: Any = None, query: dict[str, str] | None = None, headers: dict[str, str] | None = None,
              source_ip: str = "203.0.113.10", raw_body: str | None = None, method: str | None = None) -> dict[str, Any]:
    """A real event from events/<name>.json with this request's credential, ids, query and body."""
    event = copy.deepcopy(_event_file(name))
    path = event["resource"]
    for key, value in (path_params or {}).items():
        path = path.replace("{%s}" % key, value).replace("{%s+}" % key, value)
    event["path"] = path
    event["requestContext"]["path"] = "/v1" + path
    event["pathParameters"] = dict(path_params) if path_params else None
    if method:
        event["httpMethod"] = event["requestContext"]["httpMethod"] = method
    event["queryStringParameters"] = dict(query) if query else None
    event["multiValueQueryStringParameters"] = {k: [v] for k, v in query.items()} if query else None
    all_headers = {"Content-Type": "application/json", "Accept": "application/json", **(headers or {})}
    if token is not None:
        all_headers["Authorization"] = f"Bearer {token}"
    event["headers"] = all_headers
    event["multiValueHeaders"] = {k: [v] for k, v in all_headers.items()}
    if raw_body is not None:
        event["body"], event["isBase64Encoded"] = raw_body, False
    elif body is not None:
        encoded = json.dumps(body).encode()
        event["body"], event["isBase64Encoded"] = base64.b64encode(encoded).decode(), True
    else:
        event["body"], event["isBase64Encoded"] = None, False
    event["requestContext"]["requestId"] = str(uuid.uuid4())
    event["requestContext"]["identity"]["sourceIp"] = source_ip
    return event


class Reply:
    """A handler's proxy response, read as a client would."""

    def __init__(self, response: dict[str, Any]) -> None:
        self.raw = response
        self.status = response["statusCode"]
        headers = {k: v[-1] for k, v in (response.get("multiValueHeaders") or {}).items()}
        headers.update(response.get("headers") or {})
        self.headers = {k.lower(): v for k, v in headers.items()}
        body = response.get("body") or ""
        if response.get("isBase64Encoded"):
            body = base64.b64decode(body).decode()
        self.text = body
        is_json = self.headers.get("content-type", "application/json").startswith("application/json")
        self.json = json.loads(body) if body and is_json else None

    @property
    def data(self) -> Any:
        return self.json["data"]

    @property
    def error(self) -> dict[str, Any]:
        return self.json["error"]

    def __repr__(self) -> str:
        return f"<Reply {self.status} {self.text[:300]}>"


def call(function: str, event_name: str, **kwargs: Any) -> Reply:
    module = load_function(function)
    return Reply(module.lambda_handler(api_event(event_name, **kwargs), None))
