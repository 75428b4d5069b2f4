"""Each function's IAM role, as `sam deploy` creates it, enforced on every AWS call it makes.

The roles come from the SAM translator's own transform of template.yaml (policy templates such
as DynamoDBWritePolicy expanded exactly as AWS will expand them, the managed policies SAM attaches
for tracing and event sources, inline statements), with Ref, GetAtt, Sub, If, Select, Split and Join
resolved to the ARNs of this local stack. A call is checked before it is sent (botocore's
`before-parameter-build` and `before-call` events on every client of the layer, aws.register_handler),
so DynamoDB Local and the moto server are held to the same roles: each item of a transaction as its
own action on its own table, an index as its own ARN. A call the role does not allow is answered as
AWS answers it (AccessDeniedException and its message) without reaching the emulator.

Which function is calling is a context variable set by whoever runs a handler: the local stack's
runtime (devstack/runtime.py) and the tests' loader (tests/support/functions.py). Calls made outside
any function (provisioning, the tests' own set-up and reads, the pollers' reads of queues and
streams) are the operator's and are not checked.

Off with `python -m devstack --no-iam` or DEVSTACK_IAM=off. With DEVSTACK_IAM_RECORD=DIR every process
appends what each function's calls used to DIR/<pid>.jsonl; `python -m devstack.iam report` reads them.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import json
import os
import threading
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from devstack import iam_policy
from devstack.template import ACCOUNT, REGION, Resolver, load

_acting: contextvars.ContextVar[str | None] = contextvars.ContextVar("devstack_iam_function", default=None)
_scoped: list[bool] = []   # whether the layer's caches were made per function (acting_as, once)

# The policies SAM attaches by ARN (AWS managed policies), as AWS defines them today.
MANAGED_POLICIES: dict[str, list[dict[str, Any]]] = {
    "AWSLambdaBasicExecutionRole": [
        {"Effect": "Allow", "Action": ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
         "Resource": "*"}],
    "AWSXrayWriteOnlyAccess": [
        {"Effect": "Allow", "Action": ["xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules",
                                       "xray:GetSamplingTargets", "xray:GetSamplingStatisticSummaries"],
         "Resource": "*"}],
    "AWSLambdaSQSQueueExecutionRole": [
        {"Effect": "Allow", "Action": ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes",
                                       "logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
         "Resource": "*"}],
    "AWSLambdaDynamoDBExecutionRole": [
        {"Effect": "Allow", "Action": ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator",
                                       "dynamodb:ListStreams", "logs:CreateLogGroup", "logs:CreateLogStream",
                                       "logs:PutLogEvents"],
         "Resource": "*"}],
}


# ---- the roles --------------------------------------------------------------------------------

def translated(parameters: Mapping[str, str], template: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """template.yaml (or another template) as CloudFormation receives it from `sam deploy`: the SAM
    translator's output."""
    if template is not None:
        return _translate(tuple(sorted(parameters.items())), copy.deepcopy(dict(template)))
    return copy.deepcopy(_translated(tuple(sorted(parameters.items()))))


@lru_cache(maxsize=8)
def _translated(parameters: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    return _translate(parameters, copy.deepcopy(load()))


def _translate(parameters: tuple[tuple[str, str], ...], template: dict[str, Any]) -> dict[str, Any]:
    import logging

    import boto3
    from samtranslator.parser.parser import Parser
    from samtranslator.translator.translator import Translator
    for resource in template["Resources"].values():  # sam package's work: code locations in S3
        props = resource.get("Properties") or {}
        for name in ("CodeUri", "ContentUri"):
            if isinstance(props.get(name), str):
                props[name] = f"s3://local-artifacts/{props[name]}"
    logging.getLogger("samtranslator").setLevel(logging.ERROR)  # its feature-toggle notices, once a function
    values = {**{k: str(v.get("Default", "")) for k, v in template.get("Parameters", {}).items()}, **dict(parameters),
              "AWS::Region": REGION, "AWS::AccountId": ACCOUNT, "AWS::Partition": "aws"}
    translator = Translator(None, Parser(), boto_session=boto3.session.Session(region_name=REGION))
    return translator.translate(template, parameter_values=values,
                                get_managed_policy_map=_managed_policy_arns)


@lru_cache(maxsize=1)
def _managed_policy_arns() -> dict[str, str]:
    import samtranslator
    path = Path(samtranslator.__file__).parent / "internal" / "data" / "aws_managed_policies.json"
    return json.loads(path.read_text())["aws"]


class _PolicyResolver(Resolver):
    """Intrinsics as CloudFormation resolves them in a role's policies, with this stack's names."""

    def __init__(self, parameters: Mapping[str, str], translated_resources: Mapping[str, Any],
                 assigned: Mapping[str, str]) -> None:
        super().__init__(dict(parameters))
        self.translated_resources = translated_resources
        self.assigned = assigned

    def ref(self, name: str) -> str:
        kind = self.resources.get(name, {}).get("Type") or self.translated_resources.get(name, {}).get("Type")
        if kind in ("AWS::DynamoDB::Table", "AWS::DynamoDB::GlobalTable"):
            return deployed_table_name(self, self.physical_name(name))
        if kind == "AWS::SecretsManager::Secret":  # a secret's Ref is its ARN (AWS adds 6 random characters)
            return self.assigned.get(f"secret:{name}",
                                     f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:{name}-??????")
        if kind == "AWS::KMS::Key":
            return self.assigned.get(f"kms-key:{name}", name)
        return super().ref(name)

    def arn(self, logical_id: str) -> str:
        kind = self.resources[logical_id]["Type"]
        if kind in ("AWS::DynamoDB::Table", "AWS::DynamoDB::GlobalTable"):
            return f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{self.ref(logical_id)}"
        if kind == "AWS::KMS::Key":
            return f"arn:aws:kms:{REGION}:{ACCOUNT}:key/{self.ref(logical_id)}"
        if kind == "AWS::S3::Bucket":
            return f"arn:aws:s3:::{self.physical_name(logical_id)}"
        if kind == "AWS::SecretsManager::Secret":
            return self.ref(logical_id)
        return super().arn(logical_id)

    def resolve(self, value: Any) -> Any:
        if isinstance(value, dict) and len(value) == 1:
            (key, arg), = value.items()
            if key == "Fn::Sub" and isinstance(arg, list):
                text, names = arg
                names = {k: self.resolve(v) for k, v in names.items()}
                return Resolver.resolve(self, {"Fn::Sub": _sub_names(text, names)})
            if key == "Fn::Select":
                index, items = self.resolve(arg)
                return items[int(index)]
            if key == "Fn::Split":
                separator, text = self.resolve(arg)
                return str(text).split(separator)
            if key == "Fn::Join":
                separator, items = self.resolve(arg)
                return separator.join(str(i) for i in items)
        return super().resolve(value)


def _sub_names(text: str, names: Mapping[str, Any]) -> str:
    for name, value in names.items():
        text = text.replace("${%s}" % name, str(value))
    return text


def deployed_table_name(resolver: Resolver, physical: str) -> str:
    """The name a table has on AWS: its TableName where the template gives one (the directory's
    svc-directory-<Stage>); else the name the local stack gives it (CloudFormation would generate
    one, the same on the role's side and the caller's)."""
    resource = resolver.resources.get(physical)
    if resource and resource["Type"] in ("AWS::DynamoDB::Table", "AWS::DynamoDB::GlobalTable"):
        named = (resource.get("Properties") or {}).get("TableName")
        if named is not None:
            return str(Resolver.resolve(resolver, named))
    return physical


@dataclass
class Role:
    function: str
    name: str
    statements: list[dict[str, Any]]
    policy_names: list[str] = field(default_factory=list)   # per statement, the policy it came from

    @property
    def arn(self) -> str:
        return f"arn:aws:sts::{ACCOUNT}:assumed-role/{self.name}/{self.function}"


def roles(parameters: Mapping[str, str], assigned: Mapping[str, str] | None = None,
          template: Mapping[str, Any] | None = None) -> dict[str, Role]:
    """Every function's role: its statements, resolved for this local stack."""
    out = translated(parameters, template)
    resources = out["Resources"]
    resolver = _PolicyResolver(parameters, resources, assigned or {})
    found: dict[str, Role] = {}
    for logical_id, resource in resources.items():
        if resource["Type"] != "AWS::Lambda::Function":
            continue
        role_ref = resource["Properties"].get("Role", {})
        role_id = role_ref.get("Fn::GetAtt", [None])[0] if isinstance(role_ref, dict) else None
        if role_id not in resources:
            continue
        role_props = resources[role_id]["Properties"]
        statements: list[dict[str, Any]] = []
        names: list[str] = []
        for arn in role_props.get("ManagedPolicyArns", []):
            managed = str(resolver.resolve(arn)).rsplit("/", 1)[-1]
            if managed not in MANAGED_POLICIES:
                raise ValueError(f"{logical_id}: the managed policy {managed} is not known to devstack/iam.py")
            statements.extend(MANAGED_POLICIES[managed])
            names.extend([managed] * len(MANAGED_POLICIES[managed]))
        for policy in role_props.get("Policies", []):
            document = resolver.resolve(policy["PolicyDocument"])
            listed = iam_policy.statements([document])
            statements.extend(listed)
            names.extend([policy["PolicyName"]] * len(listed))
        found[logical_id] = Role(logical_id, f"svc-local-{role_id}", statements, names)
    return found


@lru_cache(maxsize=8)
def _template_roles(parameters: tuple[tuple[str, str], ...], assigned: tuple[tuple[str, str], ...]) -> dict[str, Role]:
    """template.yaml's roles for these parameters and names, resolved once (the tests install them for
    every test: ~17 ms each otherwise). Read only."""
    return roles(dict(parameters), dict(assigned))


# ---- what a call asks for -----------------------------------------------------------------------

@dataclass(frozen=True)
class Ask:
    action: str
    resource: str
    context: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def request(self) -> iam_policy.Request:
        return iam_policy.Request(self.action, self.resource, self.context)


_TRANSACT_ACTIONS = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem",
                     "ConditionCheck": "ConditionCheckItem", "Get": "GetItem"}
_S3_ACTIONS = {  # operation -> (action, on the object (True) or the bucket (False))
    "GetObject": ("GetObject", True), "HeadObject": ("GetObject", True), "PutObject": ("PutObject", True),
    "CopyObject": ("PutObject", True), "DeleteObject": ("DeleteObject", True),
    "CreateMultipartUpload": ("PutObject", True), "UploadPart": ("PutObject", True),
    "CompleteMultipartUpload": ("PutObject", True), "AbortMultipartUpload": ("AbortMultipartUpload", True),
    "ListObjectsV2": ("ListBucket", False), "ListObjects": ("ListBucket", False), "HeadBucket": ("ListBucket", False),
    "ListObjectVersions": ("ListBucketVersions", False), "GetBucketVersioning": ("GetBucketVersioning", False),
    "GetBucketLocation": ("GetBucketLocation", False),
}
_IAM_PREFIX = {"bedrock-runtime": "bedrock", "sesv2": "ses", "monitoring": "cloudwatch", "email": "ses",
               "streams.dynamodb": "dynamodb"}
_NO_PERMISSION = {("sts", "GetCallerIdentity")}   # AWS needs no permission for these


class Names:
    """This stack's names as AWS would see them (tables by their deployed names, secrets by ARN)."""

    def __init__(self, resolver: Resolver, assigned: Mapping[str, str]) -> None:
        self.resolver = resolver
        self.secret_arns = {k.removeprefix("secret:"): v for k, v in assigned.items() if k.startswith("secret:")}

    def table(self, name: str, region: str) -> str:
        if name.startswith("arn:"):
            return name
        return f"arn:aws:dynamodb:{region}:{ACCOUNT}:table/{deployed_table_name(self.resolver, name)}"

    def secret(self, secret_id: str, region: str) -> str:
        if secret_id.startswith("arn:"):
            return secret_id
        return self.secret_arns.get(secret_id) or f"arn:aws:secretsmanager:{region}:{ACCOUNT}:secret:{secret_id}-??????"


def asks(service: str, operation: str, params: Mapping[str, Any], region: str, names: Names) -> list[Ask]:
    """The authorisations AWS makes for one call: (action, resource ARN, condition keys)."""
    prefix = _IAM_PREFIX.get(service, service)
    plain = [Ask(f"{prefix}:{operation}", "*")]
    if (prefix, operation) in _NO_PERMISSION:
        return []
    if prefix == "dynamodb":
        return _dynamodb(operation, params, region, names)
    if prefix == "sqs":
        action = operation.removesuffix("Batch") if operation.endswith("Batch") else operation
        url = params.get("QueueUrl")
        if url:
            path = urlparse(url).path.strip("/").split("/")
            return [Ask(f"sqs:{action}", f"arn:aws:sqs:{region}:{path[0]}:{path[-1]}")]
        if params.get("QueueName"):
            return [Ask(f"sqs:{action}", f"arn:aws:sqs:{region}:{ACCOUNT}:{params['QueueName']}")]
        return plain
    if prefix == "events" and operation == "PutEvents":
        buses = {entry.get("EventBusName") or "default" for entry in params.get("Entries", [])}
        return [Ask("events:PutEvents", bus if bus.startswith("arn:") else
                    f"arn:aws:events:{region}:{ACCOUNT}:event-bus/{bus}") for bus in sorted(buses)]
    if prefix == "secretsmanager":
        target = params.get("SecretId") or params.get("Name")
        return [Ask(f"secretsmanager:{operation}", names.secret(str(target), region))] if target else plain
    if prefix == "kms":
        return [Ask(f"kms:{operation}", _kms_key(params, region))]
    if prefix == "s3":
        return _s3(operation, params)
    if prefix == "bedrock":
        action = "InvokeModelWithResponseStream" if operation in ("ConverseStream", "InvokeModelWithResponseStream") \
            else "InvokeModel"
        return [Ask(f"bedrock:{action}", _model_arn(str(params.get("modelId", "")), region))]
    if prefix == "ses" and operation in ("SendEmail", "SendRawEmail"):
        sender = str(params.get("FromEmailAddress") or params.get("Source") or "")
        address = sender.rsplit("<", 1)[-1].rstrip(">").strip()
        context = (("ses:fromaddress", (address,)),)
        found = [Ask("ses:SendEmail", f"arn:aws:ses:{region}:{ACCOUNT}:identity/{address}", context)]
        if params.get("ConfigurationSetName"):
            found.append(Ask("ses:SendEmail", f"arn:aws:ses:{region}:{ACCOUNT}:configuration-set/"
                             f"{params['ConfigurationSetName']}", context))
        return found
    if prefix == "cloudwatch" and operation == "PutMetricData":
        return [Ask("cloudwatch:PutMetricData", "*", (("cloudwatch:namespace", (str(params.get("Namespace")),)),))]
    if prefix == "sts" and operation == "AssumeRole":
        return [Ask("sts:AssumeRole", str(params.get("RoleArn")))]
    return plain


def _dynamodb(operation: str, params: Mapping[str, Any], region: str, names: Names) -> list[Ask]:
    if operation in ("TransactWriteItems", "TransactGetItems"):
        found = []
        for item in params.get("TransactItems", []):
            (kind, body), = item.items()
            found.append(Ask(f"dynamodb:{_TRANSACT_ACTIONS[kind]}", names.table(body["TableName"], region)))
        return found
    if operation in ("BatchGetItem", "BatchWriteItem"):
        return [Ask(f"dynamodb:{operation}", names.table(t, region)) for t in sorted(params.get("RequestItems", {}))]
    if "TableName" in params:
        arn = names.table(str(params["TableName"]), region)
        if params.get("IndexName"):
            arn = f"{arn}/index/{params['IndexName']}"
        return [Ask(f"dynamodb:{operation}", arn)]
    if "StreamArn" in params:
        return [Ask(f"dynamodb:{operation}", str(params["StreamArn"]))]
    return [Ask(f"dynamodb:{operation}", "*")]


def _kms_key(params: Mapping[str, Any], region: str) -> str:
    key = params.get("KeyId")
    if key is None and isinstance(params.get("CiphertextBlob"), (bytes, bytearray)):
        # moto's ciphertext begins with the key's id (36 characters), as AWS's names its key inside.
        key = bytes(params["CiphertextBlob"][:36]).decode("ascii", "replace")
    key = str(key or "*")
    if key.startswith("arn:"):
        return key
    if key.startswith("alias/"):
        return f"arn:aws:kms:{region}:{ACCOUNT}:{key}"
    return f"arn:aws:kms:{region}:{ACCOUNT}:key/{key}"


def _s3(operation: str, params: Mapping[str, Any]) -> list[Ask]:
    bucket = params.get("Bucket", "")
    if operation == "DeleteObjects":
        objects = (params.get("Delete") or {}).get("Objects", [])
        return [Ask("s3:DeleteObjectVersion" if o.get("VersionId") else "s3:DeleteObject",
                    f"arn:aws:s3:::{bucket}/{o['Key']}") for o in objects]
    action, on_object = _S3_ACTIONS.get(operation, (operation, "Key" in params))
    if operation in ("GetObject", "HeadObject", "DeleteObject") and params.get("VersionId"):
        action += "Version"
    found = [Ask(f"s3:{action}", f"arn:aws:s3:::{bucket}/{params['Key']}" if on_object else f"arn:aws:s3:::{bucket}")]
    if operation == "CopyObject":  # the source is read as well
        source = params.get("CopySource")
        source_path = f"{source['Bucket']}/{source['Key']}" if isinstance(source, dict) else str(source).lstrip("/")
        found.append(Ask("s3:GetObject", f"arn:aws:s3:::{source_path.split('?', 1)[0]}"))
    return found


def _model_arn(model_id: str, region: str) -> str:
    if model_id.startswith("arn:"):
        return model_id
    head = model_id.split(".", 1)[0]
    if head in ("us", "eu", "apac", "global", "ca", "jp", "au", "us-gov"):  # a cross-region inference profile
        return f"arn:aws:bedrock:{region}:{ACCOUNT}:inference-profile/{model_id}"
    return f"arn:aws:bedrock:{region}::foundation-model/{model_id}"


# ---- enforcement ----------------------------------------------------------------------------------

_ERRORS = {  # service -> (error code, HTTP status) AWS answers a denied call with
    "dynamodb": ("AccessDeniedException", 400), "sqs": ("AccessDenied", 403), "s3": ("AccessDenied", 403),
    "sts": ("AccessDenied", 403), "events": ("AccessDeniedException", 400), "kms": ("AccessDeniedException", 400),
    "secretsmanager": ("AccessDeniedException", 400), "bedrock-runtime": ("AccessDeniedException", 403),
    "sesv2": ("AccessDeniedException", 403), "monitoring": ("AccessDenied", 403),
}


class Enforcer:
    """Checks each call of a function against its role; remembers what was asked (the report)."""

    def __init__(self, parameters: Mapping[str, str], assigned: Mapping[str, str],
                 template: Mapping[str, Any] | None = None) -> None:
        self.roles = roles(parameters, assigned, template) if template is not None else \
            _template_roles(tuple(sorted(parameters.items())), tuple(sorted(assigned.items())))
        self.names = Names(Resolver(dict(parameters)), assigned)
        self.recording = template is None   # a test's altered template is not the roles' record
        self._decisions: dict[tuple[str, Ask], tuple[str, tuple[int, ...]]] = {}
        self._lock = threading.Lock()
        self.denied: list[tuple[str, Ask]] = []
        # What the emulator chose, back to the template's names (the report reads roles without them).
        self._as_named = [(f"key/{v}", f"key/{k.removeprefix('kms-key:')}") for k, v in assigned.items()
                          if k.startswith("kms-key:")]
        self._as_named += [(v, f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:{k.removeprefix('secret:')}-??????")
                           for k, v in assigned.items() if k.startswith("secret:")]

    def named(self, resource: str) -> str:
        for chosen, named in self._as_named:
            if resource.endswith(chosen):
                return resource[:-len(chosen)] + named if chosen.startswith("key/") else named
        return resource

    def decide(self, function: str, ask: Ask) -> tuple[str, tuple[int, ...]]:
        key = (function, ask)
        found = self._decisions.get(key)
        if found is None:
            role = self.roles.get(function)
            decision, allowed = ("implicit-deny", []) if role is None else \
                iam_policy.evaluate(role.statements, ask.request())
            found = (decision, tuple(allowed))
            with self._lock:
                self._decisions[key] = found
                if self.recording:
                    _remember((function, ask.action, self.named(ask.resource), decision))
        return found

    def check(self, function: str, service: str, operation: str, params: Mapping[str, Any],
              region: str) -> dict[str, Any] | None:
        """None when the role allows the call; else the parsed error AWS would answer."""
        for ask in asks(service, operation, params, region, self.names):
            decision, _ = self.decide(function, ask)
            if decision != "allow":
                with self._lock:
                    self.denied.append((function, ask))
                if auditing():
                    continue
                return _denial(service, self.roles.get(function), function, ask, decision)
        return None


def _denial(service: str, role: Role | None, function: str, ask: Ask, decision: str) -> dict[str, Any]:
    code, status = _ERRORS.get(service, ("AccessDeniedException", 400))
    who = role.arn if role else f"arn:aws:sts::{ACCOUNT}:assumed-role/svc-local-{function}Role/{function}"
    why = "with an explicit deny in an identity-based policy" if decision == "explicit-deny" \
        else f"because no identity-based policy allows the {ask.action} action"
    message = f"User: {who} is not authorized to perform: {ask.action} on resource: {ask.resource} {why}"
    return {"Error": {"Code": code, "Message": message},
            "ResponseMetadata": {"RequestId": str(uuid.uuid4()), "HTTPStatusCode": status,
                                 "HTTPHeaders": {}, "RetryAttempts": 0}}


_installed: dict[str, Any] = {"enforcer": None}
_record: set[tuple[str, str, str, str]] = set()   # (function, action, resource, decision) of this process


def enabled() -> bool:
    return os.environ.get("DEVSTACK_IAM", "on").lower() not in ("off", "0", "false", "no")


def auditing() -> bool:
    """DEVSTACK_IAM=audit: every call is evaluated and recorded, and a denied one still goes through
    (to list in one run every permission a change of the code needs; never the default)."""
    return os.environ.get("DEVSTACK_IAM", "on").lower() == "audit"


def install(parameters: Mapping[str, str], assigned: Mapping[str, str],
            template: Mapping[str, Any] | None = None) -> Enforcer:
    """Check every call of the layer's clients made inside a function against that function's
    role, from now on (a later install replaces the roles: another stack's parameters, or a
    template other than template.yaml)."""
    from svc_core.adapters import aws
    enforcer = Enforcer(parameters, assigned, template)
    first = _installed["enforcer"] is None
    _installed["enforcer"] = enforcer
    if first:
        aws.register_handler("before-parameter-build", _before_parameter_build, "devstack-iam-params")
        aws.register_handler("before-call", _before_call, "devstack-iam-call")
    return enforcer


def uninstall() -> None:
    _installed["enforcer"] = None


def current() -> Enforcer | None:
    return _installed["enforcer"]


@contextlib.contextmanager
def acting_as(function: str) -> Iterator[None]:
    """Calls made in this block (and in threads and tasks started from it) are the function's, and
    so are the shared layer's caches it reads (svc_core.platform.container): on AWS each function
    has its own containers, so one function never skips a read because another cached its value."""
    if not _scoped:
        from svc_core.platform import container
        container.use_scope(_acting.get)
        _scoped.append(True)
    token = _acting.set(function)
    try:
        yield
    finally:
        _acting.reset(token)


def _before_parameter_build(params: Mapping[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
    enforcer, function = _installed["enforcer"], _acting.get()
    if enforcer is None or function is None:
        return
    service = model.service_model.endpoint_prefix
    denial = enforcer.check(function, service, model.name, params, context.get("client_region") or REGION)
    if denial is not None:
        context["devstack_iam_denial"] = denial


def _before_call(context: dict[str, Any], **_: Any) -> Any:
    denial = context.pop("devstack_iam_denial", None)
    if denial is None:
        return None
    import botocore.awsrequest
    status = denial["ResponseMetadata"]["HTTPStatusCode"]
    return botocore.awsrequest.AWSResponse("https://iam.local/", status, {}, None), denial


# ---- the record of a run, and the report ---------------------------------------------------------

def _remember(entry: tuple[str, str, str, str]) -> None:
    """Note a decision of this process (each distinct one once): appended at once to
    $DEVSTACK_IAM_RECORD/<pid>.jsonl, so a process ended without its exit handlers loses nothing."""
    if entry in _record:
        return
    _record.add(entry)
    directory = os.environ.get("DEVSTACK_IAM_RECORD")
    if directory:
        Path(directory).mkdir(parents=True, exist_ok=True)
        function, action, resource, decision = entry
        with open(Path(directory) / f"{os.getpid()}.jsonl", "a") as out:
            out.write(json.dumps({"function": function, "action": action, "resource": resource,
                                  "decision": decision}) + "\n")


# ---- the report -------------------------------------------------------------------------------------

REPORT_PARAMETERS = {"AllowLoopbackEndpoints": "true", "ModelProvider": "offline", "DashboardHosting": "Disabled",
                     "EmailSender": "invitations@svc.localhost"}   # the local stack's and the tests'


def source_of(policy_name: str, function: str) -> str:
    """What a statement came from in template.yaml: a managed policy, a SAM policy template by name,
    or an inline statement (SAM names the Nth entry of Policies <Role>PolicyN)."""
    prefix = f"{function}RolePolicy"
    if policy_name in MANAGED_POLICIES:
        return f"managed {policy_name}"
    if not policy_name.startswith(prefix):
        return f"SAM {policy_name}"   # what SAM adds for an event (an on-failure destination's SendMessage)
    index = int(policy_name[len(prefix):])
    entry = (load()["Resources"][function]["Properties"].get("Policies") or [])[index]
    if isinstance(entry, dict) and len(entry) == 1 and next(iter(entry)) != "Statement":
        return next(iter(entry))
    return "inline"


KEPT = Path(__file__).resolve().parent.parent / "iam-kept.yaml"


def kept_reasons(path: Path = KEPT) -> list[dict[str, str]]:
    """The rules of iam-kept.yaml: why a grant no recorded call used is kept."""
    import yaml
    if not path.exists():
        return []
    return yaml.safe_load(path.read_text()) or []


def reason_kept(grant: Mapping[str, Any], function: str, rules: list[dict[str, str]]) -> str | None:
    for rule in rules:
        if all(any(iam_policy.matches(pattern, str(value), ignore_case=name == "action")
                   for pattern in iam_policy._listed(rule.get(name, "*")))
               for name, value in (("function", function), ("source", grant["source"]),
                                   ("action", grant["action"]), ("resource", grant["resource"]))):
            return rule["name"]
    return None


def report(records: list[dict[str, str]], parameters: Mapping[str, str] | None = None,
           rules: list[dict[str, str]] | None = None) -> dict[str, Any]:
    """Per function: every (action, resource) its role allows, used or not in the recorded calls (an
    unused one with the reason it is kept, or None), and every call its role denied."""
    found_roles = roles(parameters or REPORT_PARAMETERS)
    rules = kept_reasons() if rules is None else rules
    out: dict[str, Any] = {}
    for function, role in sorted(found_roles.items()):
        calls = [r for r in records if r["function"] == function]
        grants = []
        for statement, policy in zip(role.statements, role.policy_names, strict=True):
            if statement.get("Effect") != "Allow":
                continue
            for action in iam_policy._listed(statement.get("Action")):
                for resource in iam_policy._listed(statement.get("Resource")):
                    used = sorted({c["resource"] for c in calls if c["decision"] == "allow"
                                   and iam_policy.matches(action, c["action"], ignore_case=True)
                                   and iam_policy.matches(resource, c["resource"])})
                    grant = {"action": action, "resource": resource, "source": source_of(policy, function),
                             "used": used}
                    grant["kept"] = None if used else reason_kept(grant, function, rules)
                    grants.append(grant)
        denied = sorted({(c["action"], c["resource"]) for c in calls if c["decision"] != "allow"})
        out[function] = {"role": role.name, "grants": grants, "denied": [list(d) for d in denied]}
    return out


def read_records(directory: Path) -> list[dict[str, str]]:
    records = []
    for path in sorted(directory.glob("*.jsonl")):
        records.extend(json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return records


def _short(arn: str) -> str:
    return arn.split(":", 5)[-1] if arn.startswith("arn:") else arn


def main(argv: list[str] | None = None) -> int:
    import argparse
    parser = argparse.ArgumentParser(prog="python -m devstack.iam", description=(
        "report: per function, the permissions its role allows and those the recorded calls used "
        "(record with DEVSTACK_IAM_RECORD=DIR while the tests or the local stack run)"))
    parser.add_argument("command", choices=["report"])
    parser.add_argument("--record", type=Path, default=Path(".local/iam-record"), metavar="DIR")
    parser.add_argument("--json", action="store_true", help="the report as JSON")
    parser.add_argument("--unused-only", action="store_true", help="list only what no recorded call used")
    args = parser.parse_args(argv)
    records = read_records(args.record)
    if not records:
        print(f"no recorded calls in {args.record}: run the tests or the local stack with DEVSTACK_IAM_RECORD={args.record}")
        return 2
    found = report(records)
    if args.json:
        print(json.dumps(found, indent=1))
        return 0
    totals = {"used": 0, "kept": 0, "no reason": 0, "denied": 0}
    for function, entry in found.items():
        print(f"{function} ({entry['role']})")
        for grant in entry["grants"]:
            state = "used" if grant["used"] else "kept" if grant["kept"] else "no reason"
            totals[state] += 1
            if state == "used" and args.unused_only:
                continue
            state = f"kept: {grant['kept']}" if grant["kept"] else state
            print(f"  {state:30} {grant['action']:36} {_short(grant['resource']):56} {grant['source']}")
        for action, resource in entry["denied"]:
            totals["denied"] += 1
            print(f"  {'DENIED':30} {action:36} {_short(resource)}")
    print("Why the kept ones are kept (iam-kept.yaml):")
    for rule in kept_reasons():
        print(f"  {rule['name']}: {rule['why']}")
    print(f"{len(found)} functions; of the (action, resource) grants: {totals['used']} used, {totals['kept']} unused "
          f"and kept for a reason (iam-kept.yaml), {totals['no reason']} unused with no reason; "
          f"{totals['denied']} denied calls; {len(records)} distinct calls recorded")
    return 1 if totals["denied"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
