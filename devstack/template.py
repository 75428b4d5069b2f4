"""template.yaml, read and resolved for the local stack and the tests.

Resources get their logical id as their physical name (the EventBus its declared Name), and
Ref / Fn::GetAtt / Fn::Sub / Fn::If / Fn::Select / Fn::Split resolve the way CloudFormation would, which is all the
functions' environment needs. Nothing here lists a table, route or queue a second time.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "template.yaml"
# The region this process plays (ARNs, clients, the functions' AWS_REGION): one cell per process, so a
# cell of a multi-cell local stack (python -m devstack --regions) is started with its own in this variable.
NO_VALUE = object()   # !Ref AWS::NoValue: the property is left out, as CloudFormation does

REGION_VARIABLE = "DEVSTACK_REGION"
DEFAULT_REGION = "us-east-1"
REGION = os.environ.get(REGION_VARIABLE) or DEFAULT_REGION
ACCOUNT = "123456789012"


class _CfnLoader(yaml.SafeLoader):
    pass


def _tag(name: str):
    def construct(loader: yaml.Loader, node: yaml.Node) -> dict[str, Any]:
        if isinstance(node, yaml.ScalarNode):
            value: Any = loader.construct_scalar(node)
            if name == "Fn::GetAtt":
                value = value.split(".", 1)
        elif isinstance(node, yaml.SequenceNode):
            value = loader.construct_sequence(node, deep=True)
        else:
            value = loader.construct_mapping(node, deep=True)
        return {name: value}
    return construct


for _short in ("Ref", "GetAtt", "Sub", "If", "Equals", "Not", "And", "Or", "Join", "Select", "Split",
               "FindInMap", "ImportValue", "Condition", "Base64", "GetAZs"):
    _CfnLoader.add_constructor(f"!{_short}", _tag(_short if _short in ("Ref", "Condition") else f"Fn::{_short}"))


@lru_cache(maxsize=1)
def load() -> dict[str, Any]:
    return yaml.load(TEMPLATE.read_text(), Loader=_CfnLoader)


@dataclass
class Resolver:
    """Resolves intrinsic functions for a stack with the given parameter values."""
    parameters: dict[str, str]
    stack_name: str = "svc-local"

    def __post_init__(self) -> None:
        self.template = load()
        defaults = {k: str(v.get("Default", "")) for k, v in self.template.get("Parameters", {}).items()}
        self.parameters = {**defaults, **self.parameters}

    @property
    def resources(self) -> dict[str, Any]:
        return self.template["Resources"]

    def physical_name(self, logical_id: str) -> str:
        resource = self.resources[logical_id]
        if resource["Type"] == "AWS::Events::EventBus":
            return self.resolve(resource["Properties"]["Name"])
        if resource["Type"] == "AWS::S3::Bucket":  # S3 names are lower case, as CloudFormation makes them
            return f"{self.stack_name}-{logical_id}".lower()
        return logical_id

    def arn(self, logical_id: str) -> str:
        kind = self.resources[logical_id]["Type"]
        name = self.physical_name(logical_id)
        return {
            "AWS::SQS::Queue": f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}",
            "AWS::DynamoDB::Table": f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{name}",
            "AWS::DynamoDB::GlobalTable": f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{name}",
            "AWS::Events::EventBus": f"arn:aws:events:{REGION}:{ACCOUNT}:event-bus/{name}",
            "AWS::Events::Rule": f"arn:aws:events:{REGION}:{ACCOUNT}:rule/{name}",
        }.get(kind, f"arn:aws:local:{REGION}:{ACCOUNT}:{name}")

    def _pseudo(self, name: str) -> str | None:
        return {"AWS::Region": REGION, "AWS::AccountId": ACCOUNT, "AWS::StackName": self.stack_name,
                "AWS::URLSuffix": "amazonaws.com", "AWS::Partition": "aws"}.get(name)

    def ref(self, name: str) -> str:
        if name in self.parameters:
            return self.parameters[name]
        pseudo = self._pseudo(name)
        if pseudo is not None:
            return pseudo
        if self.resources[name]["Type"] == "AWS::SQS::Queue":
            return f"queue:{name}"  # a queue's Ref is its URL; the provisioner maps it
        if self.resources[name]["Type"] == "AWS::KMS::Key":
            return f"kms-key:{name}"  # a key's Ref is the id the emulator gives it; the provisioner maps it
        return self.physical_name(name)

    def condition(self, name: str) -> bool:
        return bool(self.resolve(self.template["Conditions"][name]))

    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            return [v for v in (self.resolve(v) for v in value) if v is not NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            (key, arg), = value.items()
            if key == "Ref" and arg == "AWS::NoValue":
                return NO_VALUE
            if key == "Ref":
                return self.ref(arg)
            if key == "Fn::GetAtt":
                logical_id, attribute = arg
                if attribute == "Arn":
                    return self.arn(logical_id)
                if attribute == "QueueName":
                    return self.physical_name(logical_id)
                if attribute == "StreamArn":
                    return f"stream:{logical_id}"
                if attribute == "DomainName":  # a CloudFront distribution's (the local stack has none)
                    return f"{logical_id.lower()}.cloudfront.invalid"
                raise ValueError(f"unsupported attribute {attribute}")
            if key == "Fn::Sub":
                return re.sub(r"\$\{([^}]+)\}", lambda m: self._sub(m.group(1)), arg)
            if key == "Fn::If":
                name, then, otherwise = arg
                return self.resolve(then if self.condition(name) else otherwise)
            if key == "Fn::Equals":
                left, right = self.resolve(arg)
                return str(left) == str(right)
            if key == "Fn::Not":
                return not self.resolve(arg[0])
            if key == "Condition":
                return self.condition(arg)
            if key == "Fn::Split":
                delimiter, text = arg
                return str(self.resolve(text)).split(delimiter)
            if key == "Fn::Select":
                index, items = arg
                return self.resolve(items)[int(index)]
        return {k: v for k, v in ((k, self.resolve(v)) for k, v in value.items()) if v is not NO_VALUE}

    def _sub(self, expression: str) -> str:
        if "." in expression:
            logical_id, attribute = expression.split(".", 1)
            return str(self.resolve({"Fn::GetAtt": [logical_id, attribute]}))
        return str(self.ref(expression))

    # ---- what the local stack needs --------------------------------------------------

    def of_type(self, kind: str) -> dict[str, dict[str, Any]]:
        """The resources of a type that the parameters create (a resource's Condition holds)."""
        return {k: v for k, v in self.resources.items()
                if v["Type"] == kind and ("Condition" not in v or self.condition(v["Condition"]))}

    def function_environment(self, logical_id: str) -> dict[str, str]:
        globals_env = self.template.get("Globals", {}).get("Function", {}).get("Environment", {})
        own_env = self.resources[logical_id]["Properties"].get("Environment", {})
        merged = {**globals_env.get("Variables", {}), **own_env.get("Variables", {})}
        return {k: str(self.resolve(v)) for k, v in merged.items()}

    def function_code_dir(self, logical_id: str) -> Path:
        return ROOT / self.resources[logical_id]["Properties"]["CodeUri"]

    def api_routes(self) -> list[tuple[str, str, str]]:
        """(method, path, function logical id) for every Api event."""
        routes = []
        for logical_id, resource in self.of_type("AWS::Serverless::Function").items():
            for event in resource["Properties"].get("Events", {}).values():
                if event["Type"] == "Api":
                    routes.append((event["Properties"]["Method"].upper(), event["Properties"]["Path"], logical_id))
        return routes

    def streaming_routes(self) -> set[tuple[str, str]]:
        """(method, path) of the Api events API Gateway answers with response streaming: SAM's
        ResponseTransferMode RESPONSE_STREAM (the integration's responseTransferMode STREAM)."""
        routes = set()
        for resource in self.of_type("AWS::Serverless::Function").values():
            for event in resource["Properties"].get("Events", {}).values():
                props = event["Properties"]
                if event["Type"] == "Api" and props.get("ResponseTransferMode") == "RESPONSE_STREAM":
                    routes.add((props["Method"].upper(), props["Path"]))
        return routes

    def stream_subscriptions(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(table logical id, function logical id, event properties) for DynamoDB stream events."""
        found = []
        for logical_id, resource in self.of_type("AWS::Serverless::Function").items():
            for event in resource["Properties"].get("Events", {}).values():
                if event["Type"] == "DynamoDB" and self.resolve(event["Properties"].get("Enabled", True)) is not False:
                    stream = event["Properties"]["Stream"]
                    found.append((stream["Fn::GetAtt"][0], logical_id, event["Properties"]))
        return found

    def queue_subscriptions(self) -> list[tuple[str, str, dict[str, Any]]]:
        found = []
        for logical_id, resource in self.of_type("AWS::Serverless::Function").items():
            for event in resource["Properties"].get("Events", {}).values():
                if event["Type"] == "SQS":
                    queue = event["Properties"]["Queue"]
                    found.append((queue["Fn::GetAtt"][0], logical_id, event["Properties"]))
        return found
