"""The client library's and CLI's tests: the local stack (gateway, functions, emulator, pollers) on
loopback, started once for the package, reached over real HTTP as a user's program would."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="package")
def local_stack(tmp_path_factory):
    from devstack.bootstrap import bootstrap
    from devstack.stack import LocalStack
    stack = LocalStack(port=0, log=lambda _msg: None, containers=2)
    stack.start()
    stack.credentials = bootstrap(stack.base_url, tmp_path_factory.mktemp("creds") / "dev-credentials.json")
    yield stack
    stack.stop()


@pytest.fixture
def account(local_stack) -> dict:
    """A new tenant with its owner (e-mail, password) and an all-scopes API key, so tests do not
    see each other's data."""
    import secrets

    from svc_core.auth.scopes import ALL_SCOPES
    from svc_core.domain.api_keys import issue_key
    from svc_core.domain.tenants import create_tenant_with_owner
    email, password = f"client-{secrets.token_hex(4)}@example.com", secrets.token_urlsafe(18)
    made = create_tenant_with_owner(tenant_name="Client tests", email=email, password=password,
                                    user_name="Client Tester")
    key = issue_key(tenant_id=made["tenant"]["id"], created_by=made["user"]["id"], name="client tests",
                    key_type="sdk", environment="Development", scopes=sorted(ALL_SCOPES))
    return {"email": email, "password": password, "tenantId": made["tenant"]["id"], "key": key["key"],
            "keyId": key["id"], "baseUrl": local_stack.base_url}


@pytest.fixture
def run(tmp_path, monkeypatch, account):
    """`svc` in this process (click's runner: not a terminal) against the local stack, with the
    credential store forced to its file backend in a temporary config directory. run(...) gives
    the result (exit status 0 unless ok=False); run.data(...) the parsed --output json."""
    import json

    from click.testing import CliRunner

    from svc_client.cli import cli

    monkeypatch.setenv("SVC_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("SVC_CREDENTIAL_STORE", "file")
    for name in ("SVC_API_KEY", "SVC_BASE_URL", "SVC_PROFILE", "SVC_OUTPUT"):
        monkeypatch.delenv(name, raising=False)
    runner = CliRunner()

    def invoke(*args: str, ok: bool = True, env: dict | None = None, input: str | None = None):
        result = runner.invoke(cli, ["--base-url", account["baseUrl"], *args], env=env, input=input,
                               catch_exceptions=False)
        if ok:
            assert result.exit_code == 0, (result.stdout, result.stderr)
        return result

    def data(*args: str, **kwargs):
        return json.loads(invoke(*args, "--output", "json", **kwargs).stdout)

    invoke.data = data
    invoke.config_dir = tmp_path / "config"
    return invoke


@pytest.fixture
def receiver():
    """A webhook receiver on loopback that verifies what it gets (tests/support/webhook_receiver.py),
    stopped after the test."""
    from tests.support.webhook_receiver import Receiver, new_secret
    made = Receiver(new_secret())
    yield made
    made.stop()


@pytest.fixture
def hook(run, account, receiver):
    """hook(*events): `svc webhooks create` of the receiver for those events, with its secret; the
    webhook's data."""
    def create(*events: str) -> dict:
        options = [part for event in events for part in ("--event", event)]
        return run.data("webhooks", "create", receiver.url, *options, "--secret", receiver.secret,
                        env={"SVC_API_KEY": account["key"]})
    return create
