"""Creates what template.yaml declares (tables, buckets, bus, rules, queues, secrets, KMS keys, the signing key)
on an AWS endpoint such as the embedded emulator, and returns the functions' environment.
"""

from __future__ import annotations

import json
import os
import secrets
import string
from typing import Any

import botocore.exceptions
import botocore.session

from devstack.template import ACCOUNT, REGION, Resolver


def _clients(endpoint: str, services: tuple[str, ...] = ("dynamodb", "sqs", "events", "secretsmanager", "kms", "s3",
                                                         "sesv2")
             ) -> dict[str, Any]:
    session = botocore.session.get_session()
    make = lambda service: session.create_client(  # noqa: E731
        service, region_name=REGION, endpoint_url=endpoint,
        aws_access_key_id="local", aws_secret_access_key="local")
    return {s: make(s) for s in services}


def _create_table(ddb, name: str, props: dict[str, Any]) -> None:
    request: dict[str, Any] = {
        "TableName": name, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": props["AttributeDefinitions"], "KeySchema": props["KeySchema"],
    }
    if props.get("GlobalSecondaryIndexes"):
        request["GlobalSecondaryIndexes"] = props["GlobalSecondaryIndexes"]
    if props.get("StreamSpecification"):
        request["StreamSpecification"] = {"StreamEnabled": True, **props["StreamSpecification"]}
    if props.get("SSESpecification", {}).get("SSEEnabled"):
        request["SSESpecification"] = {"Enabled": True}
    ddb.create_table(**request)
    ttl = props.get("TimeToLiveSpecification")
    if ttl and ttl.get("Enabled"):
        ddb.update_time_to_live(TableName=name, TimeToLiveSpecification={
            "AttributeName": ttl["AttributeName"], "Enabled": True})


# ---- buckets: what the template declares, set as CloudFormation sets it -------------------------------

def create_bucket(s3, name: str, props: dict[str, Any], region: str = REGION) -> None:
    """The bucket with every property the template gives it (resolved), so that what depends on them
    (versions kept on overwrite and delete, default encryption, ...) behaves locally as deployed."""
    try:
        # Outside us-east-1 S3 wants the bucket's region said (a cell of python -m devstack --regions).
        located = {} if region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": region}}
        s3.create_bucket(Bucket=name, **located)
    except s3.exceptions.BucketAlreadyOwnedByYou:  # kept data (--persist) stays; its settings are set again
        pass
    unknown = set(props) - set(BUCKET_PROPERTIES)
    if unknown:  # a property set nowhere would be a difference between here and AWS nobody sees
        raise ValueError(f"the local stack does not set {sorted(unknown)} of the bucket {name}: add it to "
                         "devstack/provision.py's BUCKET_PROPERTIES")
    for prop, apply in BUCKET_PROPERTIES.items():
        if prop in props:
            apply(s3, name, props[prop])


def _versioning(s3, name: str, value: dict[str, Any]) -> None:
    # An overwrite or delete keeps the earlier version (what the residency audit, a move's clean-up and
    # a project's clean-up meet through list_object_versions).
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": value["Status"]})


def _encryption(s3, name: str, value: dict[str, Any]) -> None:
    rules = [{"ApplyServerSideEncryptionByDefault": rule["ServerSideEncryptionByDefault"],
              **({"BucketKeyEnabled": rule["BucketKeyEnabled"]} if "BucketKeyEnabled" in rule else {})}
             for rule in value["ServerSideEncryptionConfiguration"]]
    s3.put_bucket_encryption(Bucket=name, ServerSideEncryptionConfiguration={"Rules": rules})


def _public_access_block(s3, name: str, value: dict[str, Any]) -> None:
    s3.put_public_access_block(Bucket=name, PublicAccessBlockConfiguration=value)


def _ownership(s3, name: str, value: dict[str, Any]) -> None:
    s3.put_bucket_ownership_controls(Bucket=name, OwnershipControls={"Rules": value["Rules"]})


def _lifecycle(s3, name: str, value: dict[str, Any]) -> None:
    # Kept by the emulator, not run: moto expires nothing (the rules can be read back, as in AWS).
    s3.put_bucket_lifecycle_configuration(Bucket=name, LifecycleConfiguration={
        "Rules": [lifecycle_rule(rule) for rule in value["Rules"]]})


LIFECYCLE_FIELDS = {"Id", "Status", "Prefix", "ExpirationInDays", "ExpiredObjectDeleteMarker",
                    "NoncurrentVersionExpiration", "AbortIncompleteMultipartUpload"}


def lifecycle_rule(rule: dict[str, Any]) -> dict[str, Any]:
    """A lifecycle rule as CloudFormation writes it, in the S3 API's shape."""
    if set(rule) - LIFECYCLE_FIELDS:
        raise ValueError(f"lifecycle rule {rule.get('Id')}: {sorted(set(rule) - LIFECYCLE_FIELDS)} not set locally")
    api: dict[str, Any] = {"ID": rule["Id"], "Status": rule["Status"], "Filter": {"Prefix": rule.get("Prefix", "")}}
    if "ExpirationInDays" in rule:
        api["Expiration"] = {"Days": int(rule["ExpirationInDays"])}
    elif rule.get("ExpiredObjectDeleteMarker"):
        api["Expiration"] = {"ExpiredObjectDeleteMarker": True}
    if "NoncurrentVersionExpiration" in rule:
        api["NoncurrentVersionExpiration"] = {"NoncurrentDays": int(rule["NoncurrentVersionExpiration"]["NoncurrentDays"])}
    if "AbortIncompleteMultipartUpload" in rule:
        api["AbortIncompleteMultipartUpload"] = {
            "DaysAfterInitiation": int(rule["AbortIncompleteMultipartUpload"]["DaysAfterInitiation"])}
    return api


def _notifications(s3, name: str, value: dict[str, Any]) -> None:
    unknown = set(value) - {"EventBridgeConfiguration"}
    if unknown:
        raise ValueError(f"the bucket {name}'s notifications {sorted(unknown)} are not set locally")
    if (value.get("EventBridgeConfiguration") or {}).get("EventBridgeEnabled"):
        # Its objects' events on the default bus, where a rule may take them (ReplicaObjectsRule).
        s3.put_bucket_notification_configuration(Bucket=name, NotificationConfiguration={"EventBridgeConfiguration": {}})


# Each bucket property of the template the local stack sets, and how (a property not here fails the start).
BUCKET_PROPERTIES = {
    "VersioningConfiguration": _versioning,
    "BucketEncryption": _encryption,
    "PublicAccessBlockConfiguration": _public_access_block,
    "OwnershipControls": _ownership,
    "LifecycleConfiguration": _lifecycle,
    "NotificationConfiguration": _notifications,
}


def _generated_secret(spec: dict[str, Any]) -> str:
    alphabet = string.ascii_letters + string.digits
    if not spec.get("ExcludePunctuation"):
        alphabet += "!#$%&()*+,-.:;<=>?@[]^_{|}~"
    value = "".join(secrets.choice(alphabet) for _ in range(int(spec.get("PasswordLength", 32))))
    document = json.loads(spec.get("SecretStringTemplate", "{}"))
    document[spec["GenerateStringKey"]] = value
    return json.dumps(document)


def _create_tables(ddb, resolver: Resolver) -> None:
    existing = set(ddb.list_tables().get("TableNames", []))  # kept data (--persist) stays as it is
    tables = {**resolver.of_type("AWS::DynamoDB::Table"), **resolver.of_type("AWS::DynamoDB::GlobalTable")}
    for logical_id, resource in tables.items():  # a global table: its replica in this region
        if resolver.physical_name(logical_id) not in existing:
            _create_table(ddb, resolver.physical_name(logical_id), resolver.resolve(resource["Properties"]))


def provision_tables(endpoint: str, parameters: dict[str, str] | None = None) -> None:
    """Create only the DynamoDB tables, e.g. on DynamoDB Local while the rest lives elsewhere."""
    _create_tables(_clients(endpoint, ("dynamodb",))["dynamodb"], Resolver(parameters or {}))


def shared_environment(resolver: Resolver) -> dict[str, str]:
    """The one environment of the local stack's functions (one process): the first function's, and the
    brand's variables, which template.yaml sets only on the functions that draw pages or write e-mail
    (Lambda's 4 KB of variables)."""
    functions = list(resolver.of_type("AWS::Serverless::Function"))
    environment = resolver.function_environment(functions[0]) if functions else {}
    for logical_id in functions:
        environment |= {k: v for k, v in resolver.function_environment(logical_id).items() if k.startswith("BRAND_")}
    return environment


def provision(endpoint: str, parameters: dict[str, str] | None = None, *, dynamodb_endpoint: str | None = None,
              secret_values: dict[str, str] | None = None) -> dict[str, str]:
    """Create every resource; return the environment template.yaml gives the functions.

    dynamodb_endpoint: keep the tables on another endpoint (DynamoDB Local); secret_values:
    the secrets' values by name, as a previous run saved them (else they are generated anew).
    """
    resolver = Resolver(parameters or {})
    c = _clients(endpoint)
    assigned: dict[str, str] = {}  # what a Ref names but the emulator chooses: queue URLs, KMS key ids

    _create_tables(_clients(dynamodb_endpoint, ("dynamodb",))["dynamodb"] if dynamodb_endpoint else c["dynamodb"],
                   resolver)

    for logical_id, resource in resolver.of_type("AWS::S3::Bucket").items():
        create_bucket(c["s3"], resolver.physical_name(logical_id), resolver.resolve(resource.get("Properties", {})))

    queues = resolver.of_type("AWS::SQS::Queue")
    # Dead-letter queues first, so redrive policies can name them.
    for logical_id in sorted(queues, key=lambda q: "RedrivePolicy" in queues[q]["Properties"]):
        props = resolver.resolve(queues[logical_id]["Properties"])
        attributes = {k: str(props[k]) for k in ("VisibilityTimeout", "MessageRetentionPeriod", "DelaySeconds",
                                                 "ReceiveMessageWaitTimeSeconds") if k in props}
        if "RedrivePolicy" in props:
            attributes["RedrivePolicy"] = json.dumps(props["RedrivePolicy"])
        url = c["sqs"].create_queue(QueueName=resolver.physical_name(logical_id), Attributes=attributes)["QueueUrl"]
        assigned[f"queue:{logical_id}"] = url

    for logical_id in resolver.of_type("AWS::Events::EventBus"):
        c["events"].create_event_bus(Name=resolver.physical_name(logical_id))

    for logical_id, resource in resolver.of_type("AWS::Events::Rule").items():
        props = resolver.resolve(resource["Properties"])
        bus = props.get("EventBusName", "default")
        c["events"].put_rule(Name=logical_id, EventBusName=bus, EventPattern=json.dumps(props["EventPattern"]),
                             State="ENABLED")
        c["events"].put_targets(Rule=logical_id, EventBusName=bus,
                                Targets=[{"Id": t["Id"], "Arn": t["Arn"]} for t in props["Targets"]])

    for logical_id, resource in resolver.of_type("AWS::SecretsManager::Secret").items():
        props = resource["Properties"]
        name = resolver.physical_name(logical_id)
        value = (secret_values or {}).get(name) or props.get("SecretString") \
            or _generated_secret(props["GenerateSecretString"])
        assigned[f"secret:{logical_id}"] = c["secretsmanager"].create_secret(Name=name, SecretString=value)["ARN"]

    for logical_id, resource in resolver.of_type("AWS::KMS::Key").items():
        props = resolver.resolve(resource["Properties"])
        key = c["kms"].create_key(Description=props.get("Description", logical_id),
                                  KeyUsage=props.get("KeyUsage", "ENCRYPT_DECRYPT"),
                                  KeySpec=props.get("KeySpec", "SYMMETRIC_DEFAULT"))["KeyMetadata"]
        assigned[f"kms-key:{logical_id}"] = key["KeyId"]

    # E-mail: the configuration sets, and the sender identity verified (the emulator verifies at once;
    # in AWS its owner does, docs/invitations.md). The emulator keeps what is sent: devstack/mailbox.py.
    for logical_id in resolver.of_type("AWS::SES::ConfigurationSet"):
        try:
            c["sesv2"].create_configuration_set(ConfigurationSetName=resolver.physical_name(logical_id))
        except botocore.exceptions.ClientError as exc:  # kept from an earlier start on the same emulator
            if "AlreadyExists" not in exc.response["Error"]["Code"]:
                raise
    if resolver.parameters.get("EmailSender"):
        c["sesv2"].create_email_identity(EmailIdentity=resolver.parameters["EmailSender"])

    _assigned[endpoint] = assigned
    environment = {k: assigned.get(v, v) for k, v in shared_environment(resolver).items()}
    environment.update({"AWS_ENDPOINT_URL": endpoint, "AWS_REGION": REGION, "AWS_DEFAULT_REGION": REGION,
                        "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"})
    if dynamodb_endpoint:  # botocore reads these before AWS_ENDPOINT_URL
        environment["AWS_ENDPOINT_URL_DYNAMODB"] = environment["AWS_ENDPOINT_URL_DYNAMODB_STREAMS"] = dynamodb_endpoint
    return environment


_assigned: dict[str, dict[str, str]] = {}


def assigned_names(endpoint: str) -> dict[str, str]:
    """What the emulator at endpoint chose where a Ref names it, as provision() last made it there:
    queue:Logical -> URL, kms-key:Logical -> key id, secret:Logical -> ARN (the roles' resources)."""
    return dict(_assigned.get(endpoint, {}))


def secret_values(endpoint: str, parameters: dict[str, str] | None = None) -> dict[str, str]:
    """The current value of every secret of the template (to keep them across restarts)."""
    resolver = Resolver(parameters or {})
    client = _clients(endpoint, ("secretsmanager",))["secretsmanager"]
    return {name: client.get_secret_value(SecretId=name)["SecretString"]
            for name in map(resolver.physical_name, resolver.of_type("AWS::SecretsManager::Secret"))}


def run_custom_resources(parameters: dict[str, str] | None = None) -> None:
    """Play the template's custom resources in-process (the environment must be set)."""
    resolver = Resolver(parameters or {})
    for resource in resolver.resources.values():
        if resource["Type"] == "Custom::SigningKeys":
            from svc_core.auth.signing_keys import ensure_active_key
            ensure_active_key(resolver.resolve(resource["Properties"]["SecretId"]))
        elif resource["Type"] == "Custom::ModelCheck":
            # The functions' settings are the resource's properties here (the same parameters):
            # an unpriced model stops the start as it fails a deploy (ModelConfigurationError).
            from svc_core.domain.metering import check_models
            from svc_core.platform.config import settings
            check_models(settings())
        elif resource["Type"] == "Custom::CellResources":
            # Published with this cell's own emulators' endpoints: another cell of the local stack
            # reaches its tables, bucket, key and webhook queues there (a deployed cell's are AWS's regional ones).
            from svc_core.domain.tenant_moves import publish_cell
            emulator = os.environ["AWS_ENDPOINT_URL"]
            publish_cell({"dynamodb": os.environ.get("AWS_ENDPOINT_URL_DYNAMODB") or emulator, "s3": emulator,
                          "kms": emulator, "sqs": emulator})


__all__ = ["assigned_names", "create_bucket", "provision", "provision_tables", "run_custom_resources", "ACCOUNT"]
