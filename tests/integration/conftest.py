"""Integration fixtures: `data_backend` runs a data-access test on moto and on DynamoDB Local; the
storage servers (`s3`, `azurite`), a deployment `setting` changed for one test, the webhook event
`path` and its `receivers`.

moto is lenient where DynamoDB is not (expressions, keys, transactions), so the data-access
tests also run against DynamoDB Local, AWS's own engine. Only DynamoDB moves there: the
service-specific variables AWS_ENDPOINT_URL_DYNAMODB(_STREAMS), which botocore honours before
AWS_ENDPOINT_URL, point the DynamoDB clients at it, while secrets, SQS and EventBridge stay on
the moto server of the `stack` fixture.

When DynamoDB Local cannot start (no Java 17+, npm packages not installed), its tests fail in
CI (CI=true) and are skipped with the reason elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from svc_core.platform import config
from tests.support.ci import in_ci
from tests.support.stack import Stack
from tests.support.storage_servers import AuthS3, Azurite, Unavailable
from tests.support.webhook_path import ZEROS, WebhookPath
from tests.support.webhook_receiver import Receiver, new_secret

BACKENDS = ["moto", "dynamodb-local"]


@pytest.fixture(scope="session")
def dynamodb_local():
    """DynamoDB Local for the session, started on first use; or the reason it cannot run."""
    from devstack.dynamodb_local import DynamoDBLocal, Unavailable
    server = DynamoDBLocal()
    try:
        server.start()
    except Unavailable as exc:
        yield exc
        return
    try:
        yield server
    finally:
        server.stop()


@dataclass
class DataBackend:
    name: str
    dynamodb_endpoint: str
    stack: Any  # tests.support.stack.Stack: the moto server with everything else

    def dynamodb(self):
        from svc_core.adapters import aws
        return aws.client("dynamodb")

    def item(self, table: str, key: dict[str, str]) -> dict[str, Any] | None:
        """One stored item, plain values, read consistently; None when absent."""
        from svc_core.adapters.dynamo import from_item
        answer = self.dynamodb().get_item(TableName=table, Key={k: {"S": v} for k, v in key.items()},
                                          ConsistentRead=True)
        return from_item(answer.get("Item"))

    def items(self, table: str) -> list[dict[str, Any]]:
        from svc_core.adapters.dynamo import from_item
        found: list[dict[str, Any]] = []
        for page in self.dynamodb().get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
            found.extend(from_item(i) for i in page.get("Items", []))
        return found


@pytest.fixture(params=BACKENDS)
def data_backend(request, stack, monkeypatch) -> DataBackend:
    if request.param == "moto":
        return DataBackend("moto", stack.endpoint, stack)
    return _on_dynamodb_local(request, stack, monkeypatch)


@pytest.fixture
def atomic_stack(request, stack, monkeypatch) -> DataBackend:
    """The stack with its tables on DynamoDB Local: for tests of what must hold under concurrency
    (moto does not make a condition check and its write one step)."""
    return _on_dynamodb_local(request, stack, monkeypatch)


def _on_dynamodb_local(request, stack, monkeypatch) -> DataBackend:
    server = request.getfixturevalue("dynamodb_local")
    if isinstance(server, Exception):
        reason = f"DynamoDB Local is not available: {server} (run scripts/bootstrap_node.sh)"
        if in_ci():
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)

    from devstack.provision import provision_tables
    server.drop_all_tables()
    provision_tables(server.endpoint)
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", server.endpoint)
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB_STREAMS", server.endpoint)
    stack.forget_caches()  # clients made before this point still name the moto server
    # And afterwards: clients made during the test name DynamoDB Local; the next test is on moto again.
    request.addfinalizer(stack.forget_caches)
    return DataBackend("dynamodb-local", server.endpoint, stack)


@pytest.fixture(scope="module")
def s3():
    server = AuthS3().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def azurite():
    try:
        server = Azurite().start()
    except Unavailable as exc:
        reason = f"Azurite is not available: {exc}"
        if in_ci():
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    yield server
    server.stop()


@pytest.fixture
def setting(monkeypatch):
    """Change a deployment setting for one test: setting(NAME, value). What was read from the
    settings is forgotten both ways (Stack.forget_caches: the clients and caches built from them)."""
    def change(name: str, value: str) -> None:
        monkeypatch.setenv(name, value)
        Stack.forget_caches()
    yield change
    monkeypatch.undo()
    Stack.forget_caches()


@pytest.fixture
def path(stack, monkeypatch):
    """The webhook event path (tests/support/webhook_path.py), retries compressed to zero delays."""
    monkeypatch.setenv("WEBHOOK_RETRY_SCHEDULE", ZEROS)
    monkeypatch.setenv("WEBHOOK_TIMEOUT_SECONDS", "2")
    config.settings.cache_clear()
    made = WebhookPath(stack)
    yield made
    config.settings.cache_clear()
    made.clear()  # empty queues let the next test have a quick wipe rather than a new provisioning


@pytest.fixture
def receivers():
    """Makes real Standard Webhooks receivers on loopback; stops them after the test."""
    made: list[Receiver] = []

    def make(respond=lambda n, d: (200, {}), secret: str | None = None) -> Receiver:
        made.append(Receiver(secret or new_secret(), respond))
        return made[-1]

    yield make
    for receiver in made:
        receiver.stop()
