"""A provisioned stack on the emulator, with helpers to make tenants and credentials."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from devstack import iam
from devstack.provision import assigned_names, provision, run_custom_resources


class Provisioned:
    """The template provisioned on the emulator once; ready() hands it out clean for each test.

    Provisioning (tables, queues, bus, secrets, keys, the custom resource) takes most of a
    second; wiping the data a test left takes a few hundredths. ready() provisions again when
    the emulator was reset meanwhile (a module's own fixture may do that) or a test asked for
    a fresh one."""

    def __init__(self, emulator) -> None:
        self.emulator = emulator
        self.environment: dict[str, str] | None = None
        self.generation = -1
        self.secret_values: dict[str, str] = {}
        self._clients: dict[tuple[str, str], object] = {}
        self._key_names: dict[str, list[str]] = {}

    def invalidate(self) -> None:
        self.environment = None

    def ready(self) -> Provisioned:
        if self.environment is None or self.generation != self.emulator.generation:
            self._provision()
        else:
            self._wipe()
        return self

    def _provision(self) -> None:
        import os

        self.emulator.reset()
        self.environment = provision(self.emulator.endpoint, DEFAULT_PARAMETERS)
        saved = {k: os.environ.get(k) for k in self.environment}
        os.environ.update(self.environment)  # the custom resource reads the environment
        try:
            Stack.forget_caches()
            run_custom_resources(DEFAULT_PARAMETERS)
            secrets = self._client("secretsmanager")
            self.secret_values = {s["ARN"]: secrets.get_secret_value(SecretId=s["ARN"])["SecretString"]
                                  for s in secrets.list_secrets()["SecretList"]}
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            Stack.forget_caches()
        self.generation = self.emulator.generation

    def _client(self, service: str):
        """Clients of the emulator, made once (making one costs more than a wipe)."""
        if (service, self.emulator.endpoint) not in self._clients:
            import botocore.session
            self._clients[(service, self.emulator.endpoint)] = botocore.session.get_session().create_client(
                service, region_name="us-east-1", endpoint_url=self.emulator.endpoint,
                aws_access_key_id="local", aws_secret_access_key="local")
        return self._clients[(service, self.emulator.endpoint)]

    def _wipe(self) -> None:
        """Every item of every table deleted, every secret as provisioned, the queues empty."""
        ddb = self._client("dynamodb")
        for table in ddb.list_tables()["TableNames"]:
            if table not in self._key_names:
                self._key_names[table] = [k["AttributeName"]
                                          for k in ddb.describe_table(TableName=table)["Table"]["KeySchema"]]
            keys = self._key_names[table]
            scan = {"TableName": table, "ProjectionExpression": ", ".join(f"#k{i}" for i in range(len(keys))),
                    "ExpressionAttributeNames": {f"#k{i}": k for i, k in enumerate(keys)}}
            while True:
                page = ddb.scan(**scan)
                items = page.get("Items", [])
                for start in range(0, len(items), 25):
                    ddb.batch_write_item(RequestItems={table: [
                        {"DeleteRequest": {"Key": item}} for item in items[start:start + 25]]})
                if "LastEvaluatedKey" not in page:
                    break
                scan["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        sqs = self._client("sqs")
        for url in sqs.list_queues().get("QueueUrls", []):
            counts = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[
                "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])["Attributes"]
            if any(int(n) for n in counts.values()):  # rare (queues are fresh_stack tests'): start over
                self._provision()
                return
        secrets = self._client("secretsmanager")
        for arn, value in self.secret_values.items():
            if secrets.get_secret_value(SecretId=arn)["SecretString"] != value:
                secrets.put_secret_value(SecretId=arn, SecretString=value)


DEFAULT_PARAMETERS = {"AllowLoopbackEndpoints": "true", "ModelProvider": "offline",
                      "EmailSender": "invitations@svc.localhost"}


class Stack:
    def __init__(self, target, monkeypatch, parameters: dict[str, str] | None = None) -> None:
        """target: a Provisioned (already set up) or an emulator endpoint to provision now with
        these parameters (added to the defaults)."""
        if isinstance(target, Provisioned):
            self.endpoint = target.emulator.endpoint
            self.environment = target.environment
            for name, value in self.environment.items():
                monkeypatch.setenv(name, value)
            self.forget_caches()
            self.enforce_roles(DEFAULT_PARAMETERS)
            return
        self.endpoint = target
        # As the local stack: BYOS endpoints on loopback (the test storage servers) are allowed.
        parameters = {**DEFAULT_PARAMETERS, **(parameters or {})}
        self.environment = provision(target, parameters)
        for name, value in self.environment.items():
            monkeypatch.setenv(name, value)
        self.forget_caches()
        run_custom_resources(parameters)
        self.enforce_roles(parameters)

    def enforce_roles(self, parameters: dict[str, str]) -> None:
        """Every function the tests run holds only its role's permissions, as on AWS (devstack/iam.py;
        DEVSTACK_IAM=off turns it off)."""
        self.iam = iam.install(parameters, assigned_names(self.endpoint)) if iam.enabled() else None

    @staticmethod
    def forget_caches() -> None:
        from svc_core.adapters import aws, secrets_cache
        from svc_core.auth import authenticate, signing_keys, tenant_policy
        from svc_core.platform import config
        config.settings.cache_clear()
        aws.reset_clients()
        secrets_cache.clear()
        tenant_policy.forget()
        authenticate._key_cache.clear()
        authenticate.forget_pepper()
        signing_keys._parsed.clear()

    def new_tenant(self, name: str = "Acme", plan: str = "free") -> str:
        from svc_core.data import tenants_table
        from svc_core.data.common import transact
        from svc_core.platform import ids, timeutil
        tenant_id = ids.new_id("ten")
        with set_up_writes():
            transact([tenants_table.put_new({"id": tenant_id, "name": name, "plan": plan, "status": "active",
                                             "created_at": timeutil.iso(timeutil.now())})])
        return tenant_id

    def new_key(self, tenant_id: str, scopes: list[str] | None = None, key_type: str = "sdk",
                expires_in_days: int | None = None, created_by: str = "usr_operator") -> dict[str, Any]:
        """An API key issued by an operator (as the bootstrap does), or for created_by as a device
        login issues a user's CLI key; returns its view with 'key'."""
        from svc_core.auth.scopes import ALL_SCOPES
        from svc_core.domain.api_keys import issue_key
        with set_up_writes():
            return issue_key(tenant_id=tenant_id, created_by=created_by, name="test key", key_type=key_type,
                             environment="Development", scopes=sorted(ALL_SCOPES) if scopes is None else scopes,
                             expires_in_days=expires_in_days)

    @staticmethod
    def user_token(tenant_id: str, role: str, user_id: str | None = None, member: bool = False) -> str:
        """A signed-in user's access token with the scopes of the role, as /auth/login mints it; with
        member, the user's membership of that role is stored too (what a key the user makes, or an
        invitation the user sends, is checked against)."""
        from svc_core.auth import tokens
        from svc_core.auth.roles import ROLE_SCOPES
        from svc_core.platform import ids, timeutil
        user_id = user_id or ids.new_id("usr")
        if member:
            from svc_core.data import users_table
            from svc_core.data.common import transact
            with set_up_writes():
                transact([users_table.put_membership(user_id, tenant_id, role, timeutil.iso(timeutil.now()))])
        token, _ = tokens.mint(subject=user_id, tenant_id=tenant_id, scopes=ROLE_SCOPES[role], credential="user")
        return token

    def tenant_with_key(self, scopes: list[str] | None = None) -> tuple[str, str]:
        tenant_id = self.new_tenant()
        return tenant_id, self.new_key(tenant_id, scopes)["key"]

    def client(self, service: str):
        from svc_core.adapters import aws
        return aws.client(service)


SET_UP_READ_SECONDS = 300   # a set-up write waits this long for its one answer, however busy the machine


@contextmanager
def set_up_writes() -> Iterator[None]:
    """The tests' own set-up writes (a tenant, a key) sent once and waited for, never sent again.

    The moto server keeps no TransactWriteItems ClientRequestToken: a create that botocore sends again
    after a read timeout (a busy machine) runs a second time there and fails its own "must not exist"
    condition, where DynamoDB would recognise the token and answer the first attempt's success. The set-up
    is not what a test tests, so here it is made immune rather than faithful: its DynamoDB client has one
    attempt and a read timeout no load reaches, so a slow emulator makes the set-up slower, never failed.
    The client is botocore's own, as an operator's tool would make it (no function's handlers)."""
    import os

    from svc_core.adapters import aws
    where = (os.environ.get("AWS_ENDPOINT_URL_DYNAMODB") or os.environ.get("AWS_ENDPOINT_URL"),
             os.environ.get("AWS_REGION", "us-east-1"))
    if where not in _set_up_clients:
        import botocore.session
        from botocore.config import Config
        _set_up_clients[where] = botocore.session.get_session().create_client(
            "dynamodb", region_name=where[1], endpoint_url=where[0], config=Config(
                retries={"mode": "standard", "total_max_attempts": 1}, connect_timeout=10,
                read_timeout=SET_UP_READ_SECONDS))
    made, layer_client = _set_up_clients[where], aws.client

    def client(service: str, read_timeout: float | None = None):
        return made if service == "dynamodb" else layer_client(service, read_timeout)

    aws.client = client
    try:
        yield
    finally:
        aws.client = layer_client


_set_up_clients: dict[tuple[str | None, str], Any] = {}


def provisioned_stack(emulator):
    """One provisioned stack for a whole test module, for modules whose tests each make their own
    tenants and so can share one (no wipe between them). Use as a module-scoped fixture:

        @pytest.fixture(scope="module")
        def stack(emulator):
            yield from provisioned_stack(emulator)
    """
    import pytest

    from svc_core.platform import config
    with pytest.MonkeyPatch.context() as patch:
        emulator.reset()
        stack = Stack(emulator.endpoint, patch)
        yield stack
        stack.forget_caches()
    config.settings.cache_clear()
