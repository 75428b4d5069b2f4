"""A provisioned stack on the emulator, with helpers to make tenants and credentials."""

from __future__ import annotations

from typing import Any

from devstack.provision import provision, run_custom_resources


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
            return
        self.endpoint = target
        # As the local stack: BYOS endpoints on loopback (the test storage servers) are allowed.
        parameters = {**DEFAULT_PARAMETERS, **(parameters or {})}
        self.environment = provision(target, parameters)
        for name, value in self.environment.items():
            monkeypatch.setenv(name, value)
        self.forget_caches()
        run_custom_resources(parameters)

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
        transact([tenants_table.put_new({"id": tenant_id, "name": name, "plan": plan, "status": "active",
                                         "created_at": timeutil.iso(timeutil.now())})])
        return tenant_id

    def new_key(self, tenant_id: str, scopes: list[str] | None = None, key_type: str = "sdk",
                expires_in_days: int | None = None, created_by: str = "usr_operator") -> dict[str, Any]:
        """An API key issued by an operator (as the bootstrap does), or for created_by as a device
        login issues a user's CLI key; returns its view with 'key'."""
        from svc_core.auth.scopes import ALL_SCOPES
        from svc_core.domain.api_keys import issue_key
        return issue_key(tenant_id=tenant_id, created_by=created_by, name="test key", key_type=key_type,
                         environment="Development", scopes=sorted(ALL_SCOPES) if scopes is None else scopes,
                         expires_in_days=expires_in_days)

    @staticmethod
    def user_token(tenant_id: str, role: str, user_id: str | None = None) -> str:
        """A signed-in user's access token with the scopes of the role, as /auth/login mints it."""
        from svc_core.auth import tokens
        from svc_core.auth.roles import ROLE_SCOPES
        from svc_core.platform import ids
        token, _ = tokens.mint(subject=user_id or ids.new_id("usr"), tenant_id=tenant_id,
                               scopes=ROLE_SCOPES[role], credential="user")
        return token

    def tenant_with_key(self, scopes: list[str] | None = None) -> tuple[str, str]:
        tenant_id = self.new_tenant()
        return tenant_id, self.new_key(tenant_id, scopes)["key"]

    def client(self, service: str):
        from svc_core.adapters import aws
        return aws.client(service)


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
