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

    for logical_id in resolver.of_type("AWS::S3::Bucket"):
        try:
            # Outside us-east-1 S3 wants the bucket's region said (a cell of python -m devstack --regions).
            located = {} if REGION == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": REGION}}
            c["s3"].create_bucket(Bucket=resolver.physical_name(logical_id), **located)
        except c["s3"].exceptions.BucketAlreadyOwnedByYou:  # kept data (--persist) stays as it is
            pass
        props = resolver.resources[logical_id].get("Properties", {})
        notifications = resolver.resolve(props.get("NotificationConfiguration") or {})
        if (notifications.get("EventBridgeConfiguration") or {}).get("EventBridgeEnabled"):
            # Its objects' events on the default bus, where a rule may take them (ReplicaObjectsRule).
            c["s3"].put_bucket_notification_configuration(Bucket=resolver.physical_name(logical_id),
                                                          NotificationConfiguration={"EventBridgeConfiguration": {}})

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
        c["secretsmanager"].create_secret(Name=name, SecretString=value)

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

    environment = {}
    for logical_id in resolver.of_type("AWS::Serverless::Function"):
        environment = resolver.function_environment(logical_id)
        break
    environment = {k: assigned.get(v, v) for k, v in environment.items()}
    environment.update({"AWS_ENDPOINT_URL": endpoint, "AWS_REGION": REGION, "AWS_DEFAULT_REGION": REGION,
                        "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"})
    if dynamodb_endpoint:  # botocore reads these before AWS_ENDPOINT_URL
        environment["AWS_ENDPOINT_URL_DYNAMODB"] = environment["AWS_ENDPOINT_URL_DYNAMODB_STREAMS"] = dynamodb_endpoint
    return environment


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
            # reaches its tables, bucket and key there (a deployed cell's are AWS's regional ones).
            from svc_core.domain.tenant_moves import publish_cell
            emulator = os.environ["AWS_ENDPOINT_URL"]
            publish_cell({"dynamodb": os.environ.get("AWS_ENDPOINT_URL_DYNAMODB") or emulator, "s3": emulator,
                          "kms": emulator})


__all__ = ["provision", "provision_tables", "run_custom_resources", "ACCOUNT"]
