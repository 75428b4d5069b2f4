"""Secrets at rest sealed with KMS (envelope encryption), bound to where they belong.

seal() asks KMS for a fresh 256-bit data key under the key TENANT_DATA_KEY_ID, with an
encryption context (e.g. {tenantId, connectionId}), encrypts the plaintext locally with
AES-256-GCM (the same context as associated data) and keeps only the data key as KMS encrypted
it. unseal() needs the same context: KMS refuses to decrypt the data key under any other, so a
sealed value copied into another tenant's item cannot be opened there. Envelope encryption
rather than kms:Encrypt keeps values larger than KMS's 4 KiB limit (long provider tokens) sealable.
"""

from __future__ import annotations

import base64
import json
import os
from typing import Any

from svc_core.adapters import aws
from svc_core.platform.config import settings

ALGORITHM = "AES-256-GCM+KMS"


class Unsealable(Exception):
    """The sealed value does not open with this context (moved, altered or another key)."""


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _aad(context: dict[str, str]) -> bytes:
    return json.dumps(context, sort_keys=True, separators=(",", ":")).encode()


def seal(plaintext: bytes, context: dict[str, str]) -> dict[str, str]:
    data_key = aws.client("kms").generate_data_key(KeyId=settings().tenant_data_key_id, KeySpec="AES_256",
                                                   EncryptionContext=context)
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # on first use: ~20 ms at start

    nonce = os.urandom(12)
    ciphertext = AESGCM(data_key["Plaintext"]).encrypt(nonce, plaintext, _aad(context))
    return {"alg": ALGORITHM, "encryptedKey": _b64(data_key["CiphertextBlob"]), "nonce": _b64(nonce),
            "ciphertext": _b64(ciphertext)}


def _data_key(sealed: dict[str, Any], context: dict[str, str]) -> bytes:
    """The value's data key, opened by this cell's key under the context (Unsealable if it does not open)."""
    if sealed.get("alg") != ALGORITHM:
        raise Unsealable()
    try:
        data_key = aws.client("kms").decrypt(CiphertextBlob=base64.b64decode(sealed["encryptedKey"]),
                                             EncryptionContext=context,
                                             KeyId=settings().tenant_data_key_id)["Plaintext"]
    except Exception as exc:
        if aws.error_code(exc) in ("InvalidCiphertextException", "IncorrectKeyException"):
            raise Unsealable() from None
        raise
    return data_key


def unseal(sealed: dict[str, Any], context: dict[str, str]) -> bytes:
    data_key = _data_key(sealed, context)
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    try:
        return AESGCM(data_key).decrypt(base64.b64decode(sealed["nonce"]), base64.b64decode(sealed["ciphertext"]),
                                        _aad(context))
    except InvalidTag:
        raise Unsealable() from None


def rewrap(sealed: dict[str, Any], context: dict[str, str], kms_there: Any, key_there: str) -> dict[str, str]:
    """The sealed value with its data key sealed again under another cell's key (`kms_there`, a KMS
    client of that region, `key_there` its key id or alias), the same context: the ciphertext and its
    nonce stay as they are, so a value moved between cells is never in clear outside KMS's answer.
    Unsealable when the value does not open here with this context."""
    data_key = _data_key(sealed, context)
    wrapped = kms_there.encrypt(KeyId=key_there, Plaintext=data_key, EncryptionContext=context)["CiphertextBlob"]
    return {**sealed, "encryptedKey": _b64(wrapped)}
