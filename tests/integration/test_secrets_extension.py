"""Secrets read through the Parameters and Secrets Lambda Extension (adapters/secrets_cache.py), against
the emulated extension (devstack/secrets_extension.py) on loopback, backed by the moto server: where the
layer is attached and the function has a session token, the key pepper comes over HTTP and no Secrets
Manager client is made; otherwise, or when the extension fails, the SDK reads it."""

from __future__ import annotations

import http.client
import json

import pytest

from devstack.secrets_extension import TOKEN_HEADER, SecretsExtension
from svc_core.adapters import aws, secrets_cache
from svc_core.auth import authenticate
from svc_core.platform import config
from svc_core.platform.config import settings
from tests.support.functions import call


@pytest.fixture
def extension(stack):
    running = SecretsExtension(stack.endpoint).start()
    yield running
    running.stop()


def attach(monkeypatch, extension: SecretsExtension, **overrides: str | None) -> list[str]:
    """A new container whose environment has the layer attached (overrides: a variable changed, None:
    unset); returns the services whose clients it makes (botocore's event, on aws.py's new session)."""
    for name, value in {**extension.environment(), **overrides}.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    config.settings.cache_clear()
    aws.reset_clients()
    secrets_cache.clear()
    authenticate.forget_pepper()
    made: list[str] = []
    aws._session().register("creating-client-class", lambda event_name, **_: made.append(event_name.split(".")[-1]),
                            unique_id="test-clients-made")
    return made


def sdk_pepper(stack) -> bytes:
    """The pepper as Secrets Manager (the emulator) holds it, read with a client of the test's own."""
    import botocore.session
    client = botocore.session.get_session().create_client(
        "secretsmanager", region_name="us-east-1", endpoint_url=stack.endpoint,
        aws_access_key_id="local", aws_secret_access_key="local")
    return json.loads(client.get_secret_value(SecretId=settings().key_pepper_secret_id)["SecretString"])["pepper"].encode()


def test_the_pepper_comes_through_the_extension_and_no_secrets_manager_client_is_made(stack, extension,
                                                                                       monkeypatch):
    clients = attach(monkeypatch, extension)
    assert authenticate.key_pepper() == sdk_pepper(stack)
    assert extension.requests == 1
    assert "secrets-manager" not in clients


def test_a_first_request_with_an_api_key_reads_the_pepper_through_the_extension(stack, extension,
                                                                                monkeypatch):
    _, key = stack.tenant_with_key()  # hashed with the pepper the SDK read
    clients = attach(monkeypatch, extension)
    reply = call("projects", "Projects-ListProjects", token=key)
    assert reply.status == 200, reply
    assert extension.requests == 1
    assert "secrets-manager" not in clients
    assert "dynamodb" in clients  # the recorder saw the request's own clients


@pytest.mark.parametrize("unset", ["SECRETS_EXTENSION_ATTACHED", "AWS_SESSION_TOKEN"])
def test_without_the_layer_or_a_session_token_the_sdk_reads_it(stack, extension, monkeypatch, unset):
    """No layer: the setting is unset. No session token: a SnapStart function (the container's credentials)."""
    clients = attach(monkeypatch, extension, **{unset: None})
    assert authenticate.key_pepper() == sdk_pepper(stack)
    assert extension.requests == 0
    assert clients == ["secrets-manager"]


def test_an_extension_that_refuses_or_is_down_leaves_the_read_to_the_sdk(stack, extension, monkeypatch, caplog):
    refused = attach(monkeypatch, extension, AWS_SESSION_TOKEN="not-the-extensions-token")  # 401
    assert authenticate.key_pepper() == sdk_pepper(stack)
    port = extension.port
    extension.stop()
    down = attach(monkeypatch, extension, PARAMETERS_SECRETS_EXTENSION_HTTP_PORT=str(port))  # connection refused
    assert authenticate.key_pepper() == sdk_pepper(stack)
    assert extension.requests == 0
    assert refused == down == ["secrets-manager"]
    warnings = [r for r in caplog.records if r.levelname == "WARNING" and "secrets extension" in r.getMessage()]
    assert [r.failure for r in warnings] == ["HTTP 401", "ConnectionRefusedError"]
    assert sdk_pepper(stack).decode() not in repr([vars(r) for r in warnings])


def test_a_forced_read_skips_the_extensions_cache(stack, extension, monkeypatch):
    """signing_keys forces a read for a key id it does not know (a rotation): the extension may hold the old value."""
    clients = attach(monkeypatch, extension)
    secret_id = settings().signing_keys_secret_id
    secrets_cache.get_json_secret(secret_id)
    secrets_cache.get_json_secret(secret_id, force_fetch=True)
    assert extension.requests == 1
    assert clients == ["secrets-manager"]


def _get(extension: SecretsExtension, secret_id: str, token: str | None) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", extension.port, timeout=5)
    try:
        headers = {TOKEN_HEADER: token} if token is not None else {}
        connection.request("GET", f"/secretsmanager/get?secretId={secret_id}", headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_the_emulated_extension_refuses_a_request_without_the_session_token(stack, extension):
    secret_id = settings().key_pepper_secret_id
    for token in (None, "", "wrong", extension.session_token + "x"):
        status, body = _get(extension, secret_id, token)
        assert status == 401 and b"pepper" not in body
    status, body = _get(extension, secret_id, extension.session_token)
    assert status == 200
    answer = json.loads(body)
    assert json.loads(answer["SecretString"])["pepper"].encode() == sdk_pepper(stack)
    assert answer["Name"] == secret_id
    assert _get(extension, "no-such-secret", extension.session_token)[0] == 400
