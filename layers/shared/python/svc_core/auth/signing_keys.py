"""The JWT signing key set, kept in Secrets Manager.

The secret holds {"keys": [{"kid", "status", "privateKeyPem"}]} with status "active" (signs and
verifies; exactly one), "verifying" (a rotated-out key that still verifies tokens it signed)
or "retired" (gone from the JWKS, verifies nothing). Rotation: add a new active key, demote
the old one to verifying, retire it once its last token has expired (15 minutes later).
"""

from __future__ import annotations

import base64
import json
import secrets
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from svc_core.adapters import aws, secrets_cache
from svc_core.platform import snapshot
from svc_core.platform.config import settings

ALGORITHM = "ES256"


@dataclass(frozen=True)
class KeySet:
    active_kid: str
    active_private: ec.EllipticCurvePrivateKey
    public: dict[str, ec.EllipticCurvePublicKey]   # kid -> key, active and verifying


_parsed: dict[int, KeySet] = {}
snapshot.forget_on_restore(_parsed.clear)  # private keys: never kept across a restore


def _parse(document: dict[str, Any]) -> KeySet:
    active = [k for k in document["keys"] if k["status"] == "active"]
    if len(active) != 1:
        raise RuntimeError("the signing key set must have exactly one active key")
    public = {}
    private_active = None
    for entry in document["keys"]:
        if entry["status"] not in ("active", "verifying"):
            continue
        private = serialization.load_pem_private_key(entry["privateKeyPem"].encode(), password=None)
        public[entry["kid"]] = private.public_key()
        if entry is active[0]:
            private_active = private
    return KeySet(active_kid=active[0]["kid"], active_private=private_active, public=public)


def current(*, force_fetch: bool = False) -> KeySet:
    document = secrets_cache.get_json_secret(settings().signing_keys_secret_id, force_fetch=force_fetch)
    keyset = _parsed.get(id(document))
    if keyset is None:
        _parsed.clear()
        keyset = _parsed[id(document)] = _parse(document)
    return keyset


def new_key_entry(status: str = "active") -> dict[str, str]:
    private = ec.generate_private_key(ec.SECP256R1())
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    return {"kid": f"sig_{secrets.token_hex(8)}", "status": status, "privateKeyPem": pem}


def rotated(document: dict[str, Any]) -> dict[str, Any]:
    """The key set with a new active key and the old active one demoted to verifying."""
    keys = [dict(k, status="verifying") if k["status"] == "active" else dict(k) for k in document["keys"]]
    return {"keys": [new_key_entry()] + keys}


def _b64url(number: int) -> str:
    return base64.urlsafe_b64encode(number.to_bytes(32, "big")).rstrip(b"=").decode()


def jwks(keyset: KeySet) -> dict[str, Any]:
    keys = []
    for kid, public in keyset.public.items():
        numbers = public.public_numbers()
        keys.append({"kty": "EC", "crv": "P-256", "kid": kid, "use": "sig", "alg": ALGORITHM,
                     "x": _b64url(numbers.x), "y": _b64url(numbers.y)})
    return {"keys": keys}


def dumps(document: dict[str, Any]) -> str:
    return json.dumps(document)


def ensure_active_key(secret_id: str) -> bool:
    """Give a key set without an active key one (first deployment); True when one was added."""
    client = aws.client("secretsmanager")
    document = json.loads(client.get_secret_value(SecretId=secret_id)["SecretString"] or "{}")
    if any(k.get("status") == "active" for k in document.get("keys", [])):
        return False
    document = {"keys": [new_key_entry()] + list(document.get("keys", []))}
    client.put_secret_value(SecretId=secret_id, SecretString=dumps(document))
    return True
