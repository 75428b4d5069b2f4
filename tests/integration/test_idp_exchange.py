"""The identity-provider exchange, against a real JWKS server on loopback whose keys the test holds."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.support.functions import call

ISSUER = "https://example-app.clerk.accounts.dev"
AUDIENCE = "svc-test-app"


class Provider:
    """An identity provider's signing keys, published as a JWKS over HTTP on 127.0.0.1."""

    def __init__(self) -> None:
        self.keys: dict[str, rsa.RSAPrivateKey] = {}
        self.fetches = 0
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                provider.fetches += 1
                body = json.dumps({"keys": [
                    {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key())), "kid": kid,
                     "alg": "RS256", "use": "sig"} for kid, key in provider.keys.items()]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/.well-known/jwks.json"

    def add_key(self, kid: str) -> None:
        self.keys[kid] = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def token(self, kid="k1", sub="user_2abc", key=None, **claims) -> str:
        now = int(time.time())
        payload = {"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "iat": now, "nbf": now, "exp": now + 60,
                   "email": "grace@example.com", "name": "Grace", **claims}
        return jwt.encode(payload, key or self.keys[kid], algorithm="RS256", headers={"kid": kid})


@pytest.fixture
def provider(stack, monkeypatch):
    from svc_core.domain import idp_exchange
    from svc_core.platform import config
    idp = Provider()
    idp.add_key("k1")
    for name, value in {"IDP_ISSUER": ISSUER, "IDP_AUDIENCE": AUDIENCE, "IDP_JWKS_URL": idp.url,
                        "IDP_JWKS_COOLDOWN_SECONDS": "0"}.items():
        monkeypatch.setenv(name, value)
    config.settings.cache_clear()
    idp_exchange._jwks_client.cache_clear()
    yield idp
    idp.server.shutdown()
    idp_exchange._jwks_client.cache_clear()


def exchange(token):
    return call("auth", "Auth-Exchange", body={"token": token})


def outbox_types(stack):
    return sorted(i["type"]["S"] for i in stack.client("dynamodb").scan(TableName="OutboxTable")["Items"])


def test_first_sight_creates_the_user_and_tenant_and_later_exchanges_find_them(stack, provider):
    first = exchange(provider.token())
    assert first.status == 200, first
    assert first.data["tokenType"] == "Bearer" and first.data["expiresIn"] == 900
    assert first.data["user"]["email"] == "grace@example.com" and first.data["tenant"]["role"] == "owner"
    assert outbox_types(stack) == ["tenant.created", "user.created"]
    assert call("projects", "Projects-ListProjects", token=first.data["accessToken"]).status == 200
    again = exchange(provider.token())
    assert again.data["user"]["id"] == first.data["user"]["id"]
    assert outbox_types(stack) == ["tenant.created", "user.created"]  # no second user
    other = exchange(provider.token(sub="user_other"))
    assert other.data["user"]["id"] != first.data["user"]["id"]


# Times as offsets from when the test runs (a whole run may take longer than ten minutes).
@pytest.mark.parametrize("claims", [
    {"exp": -60, "iat": -120},              # expired
    {"nbf": 600},                           # not yet valid
    {"aud": "another-app"},                 # another audience
    {"iss": "https://evil.example"},        # another issuer
], ids=["expired", "not-yet-valid", "another-audience", "another-issuer"])
def test_tokens_that_fail_a_claim_check_are_401_and_create_nobody(stack, provider, claims):
    now = int(time.time())
    claims = {name: now + value if name in ("exp", "iat", "nbf") else value for name, value in claims.items()}
    answer = exchange(provider.token(**claims))
    assert answer.status == 401 and answer.error["code"] == "UNAUTHORIZED"
    assert outbox_types(stack) == []


def test_a_forged_signature_is_401(stack, provider):
    forger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    assert exchange(provider.token(key=forger)).status == 401


def test_alg_none_and_hs256_are_401(stack, provider):
    unsigned = jwt.encode({"iss": ISSUER, "aud": AUDIENCE, "sub": "x", "exp": int(time.time()) + 60},
                          None, algorithm="none", headers={"kid": "k1"})
    assert exchange(unsigned).status == 401
    hs = jwt.encode({"iss": ISSUER, "aud": AUDIENCE, "sub": "x", "exp": int(time.time()) + 60},
                    "a shared secret of enough length!!", algorithm="HS256", headers={"kid": "k1"})
    assert exchange(hs).status == 401


def test_an_unknown_kid_fetches_the_keys_once_more(stack, provider):
    assert exchange(provider.token()).status == 200
    fetched = provider.fetches
    provider.add_key("k2")  # the provider rotates its keys
    assert exchange(provider.token(kid="k2")).status == 200
    assert provider.fetches == fetched + 1
    unpublished = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    assert exchange(provider.token(kid="k9", key=unpublished)).status == 401  # unknown after one more fetch
    assert provider.fetches == fetched + 2


def test_without_a_configured_provider_the_exchange_is_404(stack):
    answer = exchange("eyJhbGciOiJSUzI1NiJ9.e30.c2ln")
    assert answer.status == 404 and answer.error["details"]["feature"] == "idp_exchange"
