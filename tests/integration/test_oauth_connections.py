"""OAuth provider connections against a real OAuth 2.0 authorization server on loopback: authlib's,
enforcing the authorization-code grant with PKCE S256, the registered redirect URI and client
authentication. The service's handlers run against the moto server (DynamoDB, Secrets Manager, KMS).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import threading
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import AuthorizationCodeMixin, ClientMixin, grants
from authlib.oauth2.rfc7636 import CodeChallenge, create_s256_code_challenge
from flask import Flask, request
from werkzeug.serving import make_server

from tests.support.auth_helpers import Clock
from tests.support.functions import call
from tests.support.projects import assert_error

REDIRECT_URI = "https://app.example.test/oauth/callback"
GRANTED = ("profile", "repo")


# ---- the provider: an authlib authorization server on 127.0.0.1 -----------------------------

class Client(ClientMixin):
    def __init__(self, client_id: str, secret: str, auth_method: str) -> None:
        self.client_id, self.secret, self.auth_method = client_id, secret, auth_method

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return REDIRECT_URI

    def get_allowed_scope(self, scope):
        return " ".join(s for s in (scope or "").split() if s in GRANTED)

    def check_redirect_uri(self, redirect_uri):
        return redirect_uri == REDIRECT_URI

    def check_client_secret(self, client_secret):
        return secrets.compare_digest(client_secret, self.secret)

    def check_endpoint_auth_method(self, method, endpoint):
        return endpoint != "token" or method == self.auth_method

    def check_response_type(self, response_type):
        return response_type == "code"

    def check_grant_type(self, grant_type):
        return grant_type in ("authorization_code", "refresh_token")


@dataclass
class Code(AuthorizationCodeMixin):
    code: str
    client_id: str
    redirect_uri: str
    scope: str
    code_challenge: str | None
    code_challenge_method: str | None

    def get_redirect_uri(self):
        return self.redirect_uri

    def get_scope(self):
        return self.scope


class User:
    def get_user_id(self):
        return "octocat"


class Provider:
    """Two registered clients (one per auth method the service supports); auto-approves the
    test user and redirects to the client's redirect URI with code and state."""

    def __init__(self) -> None:
        # Made at run time: no secret-shaped string is committed.
        self.clients = {
            "svc-acme": Client("svc-acme", secrets.token_urlsafe(24), "client_secret_basic"),
            "svc-beta": Client("svc-beta", secrets.token_urlsafe(24), "client_secret_post"),
        }
        self.codes: dict[str, Code] = {}
        self.tokens: list[dict] = []          # every token response it gave
        self.token_requests: list[dict] = []  # form fields and auth scheme of every token request
        provider = self

        class CodeGrant(grants.AuthorizationCodeGrant):
            TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]

            def save_authorization_code(self, code, req):
                provider.codes[code] = Code(code, req.client.get_client_id(), req.payload.redirect_uri, req.scope,
                                            req.payload.data.get("code_challenge"),
                                            req.payload.data.get("code_challenge_method"))

            def query_authorization_code(self, code, client):
                found = provider.codes.get(code)
                return found if found and found.client_id == client.get_client_id() else None

            def delete_authorization_code(self, authorization_code):
                provider.codes.pop(authorization_code.code, None)

            def authenticate_user(self, authorization_code):
                return User()

        app = Flask("oauth-test-provider")
        app.config.update(OAUTH2_REFRESH_TOKEN_GENERATOR=True,
                          OAUTH2_TOKEN_EXPIRES_IN={"authorization_code": 3600})
        server = AuthorizationServer(app, query_client=self.clients.get,
                                     save_token=lambda token, req: self.tokens.append(dict(token)))
        server.register_grant(CodeGrant, [CodeChallenge(required=True)])

        @app.get("/authorize")
        def authorize():
            return server.create_authorization_response(grant_user=User())

        @app.post("/token")
        def token():
            self.token_requests.append({"form": request.form.to_dict(),
                                        "scheme": request.headers.get("Authorization", "").split(" ")[0]})
            return server.create_token_response()

        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.base = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def config(self) -> list[dict]:
        def entry(name, client_id, method, token_url=None):
            return {"name": name, "authorizeUrl": f"{self.base}/authorize", "tokenUrl": token_url or f"{self.base}/token",
                    "clientId": client_id, "scopes": list(GRANTED), "redirectUri": REDIRECT_URI,
                    "tokenAuthMethod": method}
        return [entry("acme", "svc-acme", "client_secret_basic"), entry("beta", "svc-beta", "client_secret_post"),
                entry("down", "svc-acme", "client_secret_basic", token_url=f"http://127.0.0.1:{_closed_port()}/token")]

    def approve(self, authorization_url: str) -> dict[str, str]:
        """The user's browser at the provider: it redirects to the redirect URI with code and state."""
        answer = httpx.get(authorization_url, follow_redirects=False, timeout=5)
        assert answer.status_code == 302, answer.text
        location = answer.headers["location"]
        assert location.startswith(REDIRECT_URI + "?"), location
        query = parse_qs(urlsplit(location).query)
        assert "error" not in query, query
        return {"code": query["code"][0], "state": query["state"][0]}


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def provider():
    previous = os.environ.get("AUTHLIB_INSECURE_TRANSPORT")
    os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"  # the provider's own endpoints are plain HTTP on loopback
    idp = Provider()
    yield idp
    idp.server.shutdown()
    if previous is None:
        os.environ.pop("AUTHLIB_INSECURE_TRANSPORT", None)
    else:
        os.environ["AUTHLIB_INSECURE_TRANSPORT"] = previous


@pytest.fixture(scope="module")
def oauth(emulator, provider):
    """The provider, and one stack for the module (provisioned once: each test makes its own
    tenants and looks only at their items), configured with the provider's clients."""
    from svc_core.adapters import secrets_cache
    from svc_core.platform import config
    from svc_core.platform.config import settings
    from tests.support.stack import Stack
    emulator.reset()
    with pytest.MonkeyPatch.context() as monkeypatch:
        # As a deployment would: the template's OAuthProviders parameter.
        provider.stack = Stack(emulator.endpoint, monkeypatch, {"OAuthProviders": json.dumps(provider.config())})
        provider.stack.client("secretsmanager").put_secret_value(
            SecretId=settings().oauth_client_secrets_secret_id,
            SecretString=json.dumps({"acme": provider.clients["svc-acme"].secret,
                                     "beta": provider.clients["svc-beta"].secret,
                                     "down": provider.clients["svc-acme"].secret}))
        secrets_cache.clear()
        yield provider
        provider.stack.forget_caches()
    config.settings.cache_clear()


# ---- calling the service -----------------------------------------------------------------

def user_token(tenant_id: str, role: str = "member", user_id: str | None = None) -> str:
    """A signed-in user's access token, as /auth/login mints it."""
    from svc_core.auth import tokens
    from svc_core.auth.roles import ROLE_SCOPES
    from svc_core.platform import ids
    token, _ = tokens.mint(subject=user_id or ids.new_id("usr"), tenant_id=tenant_id,
                           scopes=ROLE_SCOPES[role], credential="user")
    return token


def start(token, provider_name="acme", method="GET", body=None):
    name = "OAuth-Start" if method == "GET" else "OAuth-StartPost"
    return call("oauth", name, token=token, path_params={"provider": provider_name}, body=body)


def authorize(token, body, provider_name="acme"):
    return call("oauth", "OAuth-Authorize", token=token, path_params={"provider": provider_name}, body=body)


def listed(token, **query):
    return call("oauth", "OAuth-ListConnections", token=token, query={k: str(v) for k, v in query.items()} or None)


def delete(token, connection_id):
    return call("oauth", "OAuth-DeleteConnection", token=token, path_params={"id": connection_id})


def scan(table: str) -> list[dict]:
    from svc_core.adapters import aws
    return aws.client("dynamodb").scan(TableName=table, ConsistentRead=True)["Items"]


def stored(tenant_id: str):
    """(connections, flows) of a tenant, as the tables hold them."""
    from svc_core.platform.config import settings
    mine = lambda items: [i for i in items if i["tenantId"]["S"] == tenant_id]  # noqa: E731
    return mine(scan(settings().oauth_connections_table)), mine(scan(settings().oauth_flows_table))


def started_and_approved(oauth, token, provider_name="acme"):
    answer = start(token, provider_name)
    assert answer.status == 200, answer
    return answer.data, oauth.approve(answer.data["authorizationUrl"])


def connect(oauth, token, provider_name="acme"):
    _, redirect = started_and_approved(oauth, token, provider_name)
    answer = authorize(token, redirect, provider_name)
    assert answer.status == 201, answer
    return answer.data


def reason(reply):
    details = assert_error(reply, 400, "VALIDATION_ERROR")
    assert details["fields"][0]["field"] == "state"
    return details["reason"]


# ---- the flow ------------------------------------------------------------------------------

def test_connect_list_and_delete_with_tokens_stored_only_sealed(oauth):
    from svc_core.adapters import aws, sealing
    from svc_core.auth.context import TenantContext
    from svc_core.auth.tokens import verify
    from svc_core.domain import oauth_connections
    tenant_id = oauth.stack.new_tenant()
    token = user_token(tenant_id)

    started = start(token)
    assert started.status == 200, started
    assert set(started.data) == {"authorizationUrl", "state", "expiresIn"} and started.data["expiresIn"] == 600
    url = urlsplit(started.data["authorizationUrl"])
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    assert f"{url.scheme}://{url.netloc}{url.path}" == f"{oauth.base}/authorize"
    assert query["response_type"] == "code" and query["client_id"] == "svc-acme"
    assert query["redirect_uri"] == REDIRECT_URI and query["scope"] == "profile repo"
    assert query["state"] == started.data["state"] and query["code_challenge_method"] == "S256"
    assert "code_verifier" not in query and len(started.data["state"]) == 43
    _, flows = stored(tenant_id)
    assert len(flows) == 1 and started.data["state"] not in json.dumps(flows)  # only its SHA-256 is kept

    redirect = oauth.approve(started.data["authorizationUrl"])
    assert redirect["state"] == started.data["state"]
    connected = authorize(token, redirect)
    assert connected.status == 201, connected
    connection = connected.data
    assert connection["id"].startswith("ocn_") and connection["provider"] == "acme"
    assert connection["scopes"] == ["profile", "repo"] and connection["tokenType"] == "Bearer"
    assert connection["hasRefreshToken"] is True and connection["access_token_expires_at"].endswith("Z")
    assert connection["userId"] == verify(token).subject

    # The provider saw the verifier of the challenge it was given, and HTTP Basic client auth.
    exchange = oauth.token_requests[-1]
    assert exchange["scheme"] == "Basic" and "client_secret" not in exchange["form"]
    assert create_s256_code_challenge(exchange["form"]["code_verifier"]) == query["code_challenge"]
    issued = oauth.tokens[-1]
    assert issued["access_token"] not in connected.text and issued["refresh_token"] not in connected.text

    page = listed(token)
    assert page.status == 200 and page.data == {"items": [connection], "nextCursor": None}

    # The table holds ciphertext only; the seal opens with this tenant and id, and no other.
    connections, flows = stored(tenant_id)
    assert flows == []  # consumed with the connection's creation
    raw = json.dumps(connections)
    assert issued["access_token"] not in raw and issued["refresh_token"] not in raw
    sealed = connections[0]["tokens"]["M"]
    assert sealed["alg"]["S"] == sealing.ALGORITHM
    ctx = TenantContext(tenant_id=tenant_id, principal=verify(token), request_id="test")
    assert oauth_connections.connection_tokens(ctx, connection["id"]) == {
        "accessToken": issued["access_token"], "refreshToken": issued["refresh_token"]}
    import base64
    encrypted_key = base64.b64decode(sealed["encryptedKey"]["S"])
    kms = aws.client("kms")
    assert kms.decrypt(CiphertextBlob=encrypted_key,
                       EncryptionContext={"tenantId": tenant_id, "connectionId": connection["id"]})["Plaintext"]
    with pytest.raises(Exception) as refused:
        kms.decrypt(CiphertextBlob=encrypted_key,
                    EncryptionContext={"tenantId": oauth.stack.new_tenant(), "connectionId": connection["id"]})
    assert aws.error_code(refused.value) == "InvalidCiphertextException"
    as_stored = {k: v["S"] for k, v in sealed.items()}
    with pytest.raises(sealing.Unsealable):
        sealing.unseal(as_stored, {"tenantId": "ten_other", "connectionId": connection["id"]})

    # The state works once.
    assert reason(authorize(token, redirect)) == "unknown_state"

    deleted = delete(token, connection["id"])
    assert deleted.status == 200 and deleted.data == {"id": connection["id"], "deleted": True}
    assert listed(token).data == {"items": [], "nextCursor": None}
    assert stored(tenant_id) == ([], [])
    assert_error(delete(token, connection["id"]), 404, "RESOURCE_NOT_FOUND")


def test_post_start_answers_as_get_does_and_get_on_authorize_is_405(oauth):
    tenant_id = oauth.stack.new_tenant()
    token = user_token(tenant_id)
    posted = start(token, method="POST", body={})
    assert posted.status == 200 and set(posted.data) == {"authorizationUrl", "state", "expiresIn"}
    assert start(token, method="POST").status == 200  # no body at all
    assert "foo" in [f["field"] for f in assert_error(start(token, method="POST", body={"foo": 1}),
                                                     400, "VALIDATION_ERROR")["fields"]]
    redirect = oauth.approve(posted.data["authorizationUrl"])
    assert authorize(token, redirect).status == 201
    got = call("oauth", "OAuth-Authorize", token=token, path_params={"provider": "acme"}, method="GET")
    assert assert_error(got, 405, "METHOD_NOT_ALLOWED")["allowed"] == ["POST"]
    assert got.headers["allow"] == "POST"


def test_bad_authorize_bodies_are_400(oauth):
    tenant_id = oauth.stack.new_tenant()
    token = user_token(tenant_id)
    for body, field in [({"code": "abc"}, "state"), ({"state": "x" * 43}, "code"),
                        ({"code": "abc", "state": "short"}, "state"), ({"code": "", "state": "x" * 43}, "code"),
                        ({"code": "a b", "state": "x" * 43}, "code")]:
        details = assert_error(authorize(token, body), 400, "VALIDATION_ERROR")
        assert field in [f["field"] for f in details["fields"]], (body, details)


# ---- refused requests change nothing --------------------------------------------------------

def test_a_wrong_or_unknown_state_is_400_and_consumes_nothing(oauth):
    tenant_id = oauth.stack.new_tenant()
    token = user_token(tenant_id)
    _, redirect = started_and_approved(oauth, token)
    before = stored(tenant_id)
    assert reason(authorize(token, {**redirect, "state": secrets.token_urlsafe(32)})) == "unknown_state"
    assert stored(tenant_id) == before and before[0] == [] and len(before[1]) == 1
    assert authorize(token, redirect).status == 201  # the real state still works


def test_an_expired_state_is_400_and_changes_nothing(oauth, monkeypatch):
    clock = Clock(monkeypatch)
    tenant_id = oauth.stack.new_tenant()
    token = user_token(tenant_id)
    _, redirect = started_and_approved(oauth, token)
    before = stored(tenant_id)
    clock.travel(600)
    assert reason(authorize(token, redirect)) == "expired_state"
    assert stored(tenant_id) == before
    clock.travel(-1)  # 599 s after start it was still good
    assert authorize(token, redirect).status == 201


def test_a_state_started_by_another_user_or_in_another_tenant_is_unknown_to_them(oauth):
    from svc_core.auth.tokens import verify
    tenant_id = oauth.stack.new_tenant()
    owner = user_token(tenant_id)
    _, redirect = started_and_approved(oauth, owner)
    before = stored(tenant_id)
    colleague = user_token(tenant_id)
    same_user_elsewhere = user_token(oauth.stack.new_tenant(), user_id=verify(owner).subject)
    for intruder in (colleague, same_user_elsewhere):
        assert reason(authorize(intruder, redirect)) == "unknown_state"
    assert stored(tenant_id) == before
    assert authorize(owner, redirect).status == 201


def test_a_state_started_for_another_provider_is_refused(oauth):
    tenant_id = oauth.stack.new_tenant()
    token = user_token(tenant_id)
    _, redirect = started_and_approved(oauth, token, "acme")
    before = stored(tenant_id)
    assert reason(authorize(token, redirect, "beta")) == "provider_mismatch"
    assert stored(tenant_id) == before
    assert authorize(token, redirect, "acme").status == 201


def test_an_unknown_provider_is_404(oauth):
    tenant_id = oauth.stack.new_tenant()
    token = user_token(tenant_id)
    for reply in (start(token, "nope"), start(token, "nope", method="POST"),
                  authorize(token, {"code": "abc", "state": secrets.token_urlsafe(32)}, "nope"),
                  start(token, "connections")):
        details = assert_error(reply, 404, "RESOURCE_NOT_FOUND")
        assert details["resource"] == "oauth_provider"
    assert stored(tenant_id) == ([], [])


def test_a_code_the_provider_refuses_is_502_and_leaves_the_flow_for_a_retry(oauth):
    tenant_id = oauth.stack.new_tenant()
    token = user_token(tenant_id)
    _, redirect = started_and_approved(oauth, token)
    before = stored(tenant_id)
    refused = authorize(token, {**redirect, "code": "not-the-code"})
    details = assert_error(refused, 502, "PROVIDER_ERROR")
    assert details == {"provider": "acme", "providerStatus": 400, "providerError": "invalid_grant"}
    assert stored(tenant_id) == before
    assert authorize(token, redirect).status == 201


def test_a_provider_that_does_not_answer_is_502(oauth):
    tenant_id = oauth.stack.new_tenant()
    token = user_token(tenant_id)
    _, redirect = started_and_approved(oauth, token, "down")
    before = stored(tenant_id)
    details = assert_error(authorize(token, redirect, "down"), 502, "PROVIDER_ERROR")
    assert details == {"provider": "down", "providerError": "unreachable"}
    assert stored(tenant_id) == before


def test_client_secret_post_providers_send_the_secret_in_the_form(oauth):
    tenant_id = oauth.stack.new_tenant()
    token = user_token(tenant_id)
    connection = connect(oauth, token, "beta")
    assert connection["provider"] == "beta"
    exchange = oauth.token_requests[-1]
    assert exchange["scheme"] == "" and exchange["form"]["client_id"] == "svc-beta"
    assert exchange["form"]["client_secret"] == oauth.clients["svc-beta"].secret


# ---- who may do what --------------------------------------------------------------------------

def test_keys_cannot_connect_and_deleting_needs_the_owner_or_secrets_write(oauth):
    tenant_id = oauth.stack.new_tenant()
    member = user_token(tenant_id)
    reader_key = oauth.stack.new_key(tenant_id, ["secrets:read"])["key"]
    manager_key = oauth.stack.new_key(tenant_id, ["secrets:write"])["key"]
    assert_error(start(reader_key), 403, "FORBIDDEN")
    assert_error(authorize(reader_key, {"code": "abc", "state": secrets.token_urlsafe(32)}), 403, "FORBIDDEN")
    assert_error(listed(manager_key), 403, "FORBIDDEN")  # listing needs secrets:read

    mine = connect(oauth, member)
    theirs = connect(oauth, user_token(tenant_id))
    assert [c["id"] for c in listed(reader_key).data["items"]] == [theirs["id"], mine["id"]]  # newest first
    assert assert_error(delete(reader_key, mine["id"]), 403, "FORBIDDEN")["requiredScope"] == "secrets:write"
    assert_error(delete(member, theirs["id"]), 403, "FORBIDDEN")  # a member lacks secrets:write
    assert delete(member, mine["id"]).status == 200
    assert delete(user_token(tenant_id, role="admin"), theirs["id"]).status == 200
    assert listed(reader_key).data["items"] == []

    kept = connect(oauth, member)
    assert delete(manager_key, kept["id"]).status == 200
    assert_error(delete(member, "ocn_../../etc"), 404, "RESOURCE_NOT_FOUND")


def test_another_tenants_connections_are_invisible_and_the_list_pages(oauth):
    tenant_id = oauth.stack.new_tenant()
    token = user_token(tenant_id)
    made = [connect(oauth, token)["id"] for _ in range(3)]
    other = user_token(oauth.stack.new_tenant())
    assert listed(other).data["items"] == []
    assert_error(delete(other, made[0]), 404, "RESOURCE_NOT_FOUND")

    first = listed(token, limit=2)
    assert [c["id"] for c in first.data["items"]] == made[:0:-1]
    second = listed(token, limit=2, cursor=first.data["nextCursor"])
    assert [c["id"] for c in second.data["items"]] == made[:1] and second.data["nextCursor"] is None
    assert_error(listed(token, cursor="bm90LWEtY3Vyc29y"), 400, "VALIDATION_ERROR")
    assert_error(listed(token, limit=0), 400, "VALIDATION_ERROR")
