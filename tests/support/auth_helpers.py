"""Helpers shared by the credential, rate-limit and HTTP-layer tests: the service's clock,
hand-made JWTs (good and hostile), the signing key set in Secrets Manager, a recorder of the
DynamoDB calls a request makes, and events the events/ files do not cover."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import secrets
import threading
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from svc_core.adapters import secrets_cache
from svc_core.auth import signing_keys, tokens
from svc_core.platform import timeutil
from svc_core.platform.config import settings
from tests.support.functions import Reply, api_event, load_function

KEY_RE = re.compile(r"^svc_(sdk|cli|ci|int|mkt)_[0-9A-Za-z]{32}[0-9A-Za-z]{6}$")
ISO_UTC_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$")
RATE_HEADERS = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset")


# ---- the service's clock -------------------------------------------------------------------

class Clock:
    """Stops svc_core.platform.timeutil.now() at a chosen instant; travel moves it (no sleeping)."""

    def __init__(self, monkeypatch, start: float | None = None) -> None:
        self.value = float(int(timeutil.now()) if start is None else start)
        monkeypatch.setattr(timeutil, "now", lambda: self.value)

    def travel(self, seconds: float) -> float:
        self.value += seconds
        return self.value

    def mid_window(self, window: int = 60) -> float:
        """Move to 10 s into the current window, so a burst cannot straddle two windows."""
        self.value = float(int(self.value) - int(self.value) % window + 10)
        return self.value


# ---- calling handlers ----------------------------------------------------------------------

def invoke(function: str, event: dict[str, Any]) -> Reply:
    return Reply(load_function(function).lambda_handler(event, None))


def unknown_route_event(token: str | None = None, path: str = "/api/v1/nope", method: str = "GET",
                        **kwargs: Any) -> dict[str, Any]:
    """What API Gateway sends the MetaFunction's catch-all /api/v1/{proxy+} route."""
    event = api_event("Meta-Jwks", token=token, method=method, **kwargs)
    event["resource"] = event["requestContext"]["resourcePath"] = "/api/v1/{proxy+}"
    event["path"] = path
    event["requestContext"]["path"] = "/v1" + path
    event["pathParameters"] = {"proxy": path[len("/api/v1/"):]}
    return event


def bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


# ---- JWTs ----------------------------------------------------------------------------------

def b64url(data: bytes | dict) -> str:
    if isinstance(data, dict):
        data = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def service_claims(tenant_id: str, scope_list: list[str], **changes: Any) -> dict[str, Any]:
    """Claims the service would accept; changes override (a value of None drops the claim)."""
    cfg = settings()
    now = int(timeutil.now())
    claims = {"iss": cfg.jwt_issuer, "aud": cfg.jwt_audience, "sub": "usr_tester", "tid": tenant_id,
              "scopes": sorted(scope_list), "cred": "user", "iat": now, "nbf": now, "exp": now + 900,
              "jti": secrets.token_urlsafe(16)}
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


def signed(claims: dict[str, Any], *, kid: str | None = None, typ: str | None = "at+jwt",
           private: ec.EllipticCurvePrivateKey | None = None) -> str:
    """ES256 with the active signing key (or `private`), with the given kid and typ headers."""
    keyset = signing_keys.current()
    headers = {"kid": keyset.active_kid if kid is None else kid, "typ": typ}  # typ None: PyJWT omits it
    return tokens.low_s(jwt.encode(claims, private or keyset.active_private, algorithm="ES256", headers=headers))


def high_s(token: str) -> str:
    """The token's ES256 signature (r, s) rewritten as (r, n - s): as valid to ECDSA, but the
    non-canonical twin of what the service signs (it signs only low s)."""
    signing_input, _, signature = token.rpartition(".")
    raw = base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))
    flipped = tokens.P256_ORDER - int.from_bytes(raw[32:], "big")
    return f"{signing_input}.{b64url(raw[:32] + flipped.to_bytes(32, 'big'))}"


def unsigned(header: dict[str, Any], claims: dict[str, Any], signature: bytes = b"") -> str:
    return f"{b64url(header)}.{b64url(claims)}.{b64url(signature) if signature else ''}"


def hs256(header: dict[str, Any], claims: dict[str, Any], secret: bytes) -> str:
    """HS256 by hand (PyJWT refuses a PEM as an HMAC secret, an attacker would not)."""
    signing_input = f"{b64url(header)}.{b64url(claims)}"
    mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64url(mac)}"


def active_public_pem() -> bytes:
    keyset = signing_keys.current()
    return keyset.public[keyset.active_kid].public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def with_payload(token: str, claims: dict[str, Any]) -> str:
    """The token with its payload swapped and the original signature kept."""
    header, _, signature = token.split(".")
    return f"{header}.{b64url(claims)}.{signature}"


def payload_of(token: str) -> dict[str, Any]:
    return jwt.decode(token, options={"verify_signature": False})


# ---- the signing key set -------------------------------------------------------------------

def signing_document(stack) -> dict[str, Any]:
    raw = stack.client("secretsmanager").get_secret_value(SecretId=settings().signing_keys_secret_id)
    return json.loads(raw["SecretString"])


def put_signing_document(stack, document: dict[str, Any]) -> None:
    stack.client("secretsmanager").put_secret_value(SecretId=settings().signing_keys_secret_id,
                                                    SecretString=signing_keys.dumps(document))
    secrets_cache.clear()


# ---- DynamoDB calls ------------------------------------------------------------------------

class DynamoCalls:
    """Records (operation, table) of every call made on the service's shared DynamoDB client
    (before-parameter-build sees the API parameters; before-call only the serialized request)."""

    def __init__(self, stack) -> None:
        self.client = stack.client("dynamodb")
        self.calls: list[tuple[str, str | None]] = []

    def _record(self, model, params, **_: Any) -> None:
        tables = [params.get("TableName")]
        for item in params.get("TransactItems", []):
            tables += [op.get("TableName") for op in item.values()]
        for table in tables:
            self.calls.append((model.name, table))

    def __enter__(self) -> DynamoCalls:
        self.client.meta.events.register("before-parameter-build.dynamodb.*", self._record,
                                         unique_id="test-dynamo-calls")
        return self

    def __exit__(self, *exc: Any) -> None:
        self.client.meta.events.unregister("before-parameter-build.dynamodb.*", unique_id="test-dynamo-calls")

    def on(self, table: str) -> list[str]:
        return [operation for operation, name in self.calls if name == table]


def atomic_dynamodb(stack, monkeypatch) -> None:
    """Make each DynamoDB request atomic, as DynamoDB is and the moto server is not (its threaded
    server runs a conditional update's check and write without a lock, so two requests can both
    pass a condition). Requests are serialized one at a time; the service's threads still
    interleave freely between their requests, which is what the counting algorithm must survive."""
    client = stack.client("dynamodb")
    real = client._make_api_call
    lock = threading.Lock()

    def one_at_a_time(operation_name, params):
        with lock:
            return real(operation_name, params)

    monkeypatch.setattr(client, "_make_api_call", one_at_a_time)
