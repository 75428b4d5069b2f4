"""SnapStart: the hooks each HTTP function registers, what the after-restore hook forgets, and the template."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest
import yaml

from svc_core.adapters import aws, secrets_cache
from svc_core.auth import authenticate, signing_keys
from svc_core.http.api import Api
from svc_core.platform import snapshot

ROOT = Path(__file__).resolve().parents[2]


class FakeRuntime:
    """snapshot_restore_py's interface: keeps what is registered."""

    def __init__(self) -> None:
        self.before: list = []
        self.after: list = []

    def register_before_snapshot(self, hook) -> None:
        self.before.append(hook)

    def register_after_restore(self, hook) -> None:
        self.after.append(hook)


def _template() -> dict:
    class Loader(yaml.SafeLoader):
        pass
    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)  # !Ref, !Sub, ... are not read here
    return yaml.load((ROOT / "template.yaml").read_text(), Loader=Loader)


def _http_functions(template: dict) -> dict[str, dict]:
    return {name: r["Properties"] for name, r in template["Resources"].items()
            if r["Type"] == "AWS::Serverless::Function"
            and any(e["Type"] == "Api" for e in (r["Properties"].get("Events") or {}).values())}


def test_after_restore_drops_clients_secrets_keys_and_reseeds(monkeypatch):
    runtime = FakeRuntime()
    monkeypatch.setattr(snapshot, "registered", {"before": [], "after": []})
    prepared = []
    api = Api()
    monkeypatch.setattr(api, "prepare_snapshot", lambda services: prepared.append(services))
    api.snapstart(runtime=runtime)
    assert len(runtime.before) == 1 and runtime.after == [snapshot.after_restore]
    runtime.before[0]()
    assert prepared == [("dynamodb", "secretsmanager")]

    before = aws.client("sqs")  # as if made (and its credentials resolved) before the snapshot
    assert before._request_signer._credentials is aws.credentials()  # what every client signs with
    assert aws.credentials().get_frozen_credentials().access_key == "local" and aws.credentials().resolved
    closed = []
    monkeypatch.setattr(before, "close", lambda: closed.append(before))
    secrets_cache._cache["pepper"] = (0.0, {"pepper": "from-before"})
    signing_keys._parsed[1] = "a key set"
    authenticate._key_cache["hash"] = "a principal"
    monkeypatch.setattr(authenticate, "_pepper", [b"kept"])
    random.seed(7)
    drawn_before = random.random()
    random.seed(7)

    for hook in runtime.after:
        hook()

    assert not aws.credentials().resolved  # resolved anew by the next call
    assert aws.client("sqs") is before and closed == [before]  # kept, its connections closed
    assert "pepper" not in secrets_cache._cache
    assert authenticate._pepper == [b"kept"]  # the key pepper is kept (auth/authenticate.py says why)
    assert signing_keys._parsed == {} and "hash" not in authenticate._key_cache
    assert random.random() != drawn_before


def test_prepare_snapshot_calls_no_aws_and_builds_validators(monkeypatch):
    called = []
    monkeypatch.setattr("botocore.httpsession.URLLib3Session.send", lambda *a, **k: called.append(a))
    api = Api()

    @api.get("/api/v1/things/{id}", scope="projects:read", summary="A thing")
    def thing(id: str):
        return {"id": id}

    peppers = []
    monkeypatch.setattr("svc_core.http.api.key_pepper", lambda: peppers.append(1))
    api.prepare_snapshot(("dynamodb",))
    assert api.routes[0].binder.built
    assert called == []
    assert peppers == [1]  # the one secret a snapshot keeps, read only where a route takes a credential


def test_prepare_snapshot_of_public_routes_reads_no_secret(monkeypatch):
    peppers = []
    monkeypatch.setattr("svc_core.http.api.key_pepper", lambda: peppers.append(1))
    monkeypatch.setattr("botocore.httpsession.URLLib3Session.send", lambda *a, **k: peppers.append(a))
    api = Api()

    @api.get("/api/v1/keys.json", public=True, summary="Public keys")
    def keys():
        return {}

    api.prepare_snapshot(("dynamodb",))
    assert peppers == []


def test_the_warm_up_makes_the_clients_kept_and_sends_their_calls_nowhere(monkeypatch):
    """Before the snapshot: the clients made and each WARM_CALLS call answered in-process (this
    test's fixtures refuse any connection), signed with placeholders that are then forgotten."""
    aws.reset_clients()
    signed = []
    monkeypatch.setattr("botocore.auth.SigV4Auth.add_auth",
                        lambda auth, request: signed.append(auth.credentials.access_key))
    monkeypatch.setattr(snapshot, "registered", {"before": [], "after": []})
    snapshot.register(lambda: aws.warm_models(("dynamodb", "secretsmanager")), runtime=FakeRuntime())
    snapshot.run_before()
    warmed = len(aws.WARM_CALLS["dynamodb"]) + len(aws.WARM_CALLS["secretsmanager"])
    assert signed == ["warm-up"] * warmed
    assert not aws.credentials().resolved
    class Sent(Exception):
        pass

    def send(session, request):
        raise Sent(request.url)

    monkeypatch.setattr("botocore.httpsession.URLLib3Session.send", send)
    with pytest.raises(Sent):  # the canned answers are gone: a call now goes out
        aws.client("dynamodb").get_item(TableName="t", Key={"pk": {"S": "k"}})
    aws.reset_clients()


def test_every_http_function_has_snapstart_and_an_alias():
    functions = _http_functions(_template())
    assert len(functions) >= 13
    for name, props in functions.items():
        if props.get("Handler") == "run.sh":  # uvicorn under the Web Adapter: the runtime's hooks never run there
            assert "SnapStart" not in props
            continue
        assert props.get("SnapStart") == {"ApplyOn": "PublishedVersions"}, name
        assert props.get("AutoPublishAlias") == "live", name


def test_every_http_function_registers_the_hooks():
    functions = _http_functions(_template())
    for name, props in functions.items():
        tree = ast.parse((ROOT / props["CodeUri"] / "app.py").read_text())
        calls = [n for n in tree.body if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
                 and ast.unparse(n.value.func) == "api.snapstart"]
        assert len(calls) == 1, f"{name}: app.py must call api.snapstart() once, at module level"


@pytest.mark.parametrize("lambda_name, frozen", [("ProjectsFunction", True), (None, False)])
def test_a_function_process_freezes_what_its_import_made(lambda_name, frozen):
    """In Lambda (AWS_LAMBDA_FUNCTION_NAME set) the import's objects leave the collector's sight, so no
    full collection walks them in the first request; a process that imports functions again and again
    (the tests, the local stack) does not freeze them."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k != "AWS_LAMBDA_FUNCTION_NAME"}
    if lambda_name:
        env["AWS_LAMBDA_FUNCTION_NAME"] = lambda_name
    env["PYTHONPATH"] = os.pathsep.join([str(root / "functions" / "projects"), str(root / "layers" / "shared" / "python")])
    done = subprocess.run([sys.executable, "-c", "import gc, app; print(gc.get_freeze_count())"],
                          env=env, capture_output=True, text=True, check=True)
    assert (int(done.stdout.split()[-1]) > 0) is frozen
