"""From an Authorization header to a verified Principal.

- `Bearer svc_<type>_...`: an API key. Its format and checksum are checked first (a bad one
  is refused with no database read); then the HMAC of the value (pepper from Secrets
  Manager) finds the secret's record, whose key id, tenant and scopes become the Principal.
  (No token is minted for it: the record is the service's own, found by an exact hash, and a
  token signed and verified here added a Secrets Manager read, PyJWT and ES256 to every key's
  first request.) The key's last use, and the request's source address (API Gateway's sourceIp,
  never a client's X-Forwarded-For), are written when the record says it is due (at most every
  five minutes). Records are cached per container for a minute; revocation, and a rotation
  with no overlap, still take effect on the next request because the per-request rate-limit
  count refuses a revoked key and a value older than the rotation's (data/rate_limits_table.py).
- `Bearer <JWT>`: a service access token, verified by auth/tokens.py.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
import time
from dataclasses import dataclass
from typing import Any

from svc_core.adapters import secrets_cache
from svc_core.auth import cell_routing, key_format, tenant_policy, tokens
from svc_core.auth.principal import Principal
from svc_core.data import api_keys_table
from svc_core.platform import container, parallel, snapshot, timeutil
from svc_core.platform.config import settings
from svc_core.platform.errors import Unauthorized
from svc_core.platform.log import logger


@dataclass(frozen=True)
class _CachedKey:
    fetched: float
    principal: Principal
    not_after: int | None


_key_cache: dict[tuple[Any, str], _CachedKey] = {}   # by (container, the key's hash)
snapshot.forget_on_restore(_key_cache.clear)  # credentials resolved before a snapshot: looked up again
_cache_lock = threading.Lock()


# The key pepper, read once per process and kept, across a SnapStart restore too: it cannot
# change while keys hashed with it exist (a new pepper would orphan every key), and a snapshot is
# only restored into environments of this function that may read it anyway (docs/deploying.md,
# "What a snapshot keeps").
_pepper: dict[Any, bytes] = {}   # by container


def key_pepper() -> bytes:
    scope = container.key()
    if scope not in _pepper:
        _pepper[scope] = secrets_cache.get_json_secret(settings().key_pepper_secret_id)["pepper"].encode()
    return _pepper[scope]


def forget_pepper() -> None:
    """For tests that provision a new pepper in the same process."""
    _pepper.clear()


def hash_key(value: str) -> str:
    return hmac.new(key_pepper(), value.encode(), hashlib.sha256).hexdigest()


def email_hash(email: str) -> str:
    """The keyed hash that names an e-mail address in the global directory (data/directory_table.py):
    the HMAC under the key pepper (the same in every cell) of the normalised address. Without the
    pepper, no list of likely addresses can be hashed and matched against the directory."""
    from svc_core.data import directory_table  # on first use: only the writers of accounts need it
    return hmac.new(key_pepper(), directory_table.email_key_text(email).encode(), hashlib.sha256).hexdigest()


def authenticate(authorization: str | None, *, source_ip: str | None = None) -> Principal:
    """`source_ip`: the request's sourceIp, recorded as an API key's last-use address."""
    if not authorization:
        raise Unauthorized("Send a credential: Authorization: Bearer <API key or access token>.")
    scheme, _, credential = authorization.strip().partition(" ")
    credential = credential.strip()
    if scheme.lower() != "bearer" or not credential:
        raise Unauthorized("The Authorization header must be 'Bearer <credential>'.")
    if credential.startswith("svc_"):
        return _from_api_key(credential, source_ip)
    return tokens.verify(credential)


def _from_api_key(value: str, source_ip: str | None) -> Principal:
    if key_format.parse_type(value) is None:
        raise Unauthorized("The API key is malformed.")
    secret_hash = hash_key(value)
    now = timeutil.now()
    cache_key = (container.key(), secret_hash)
    cached = _key_cache.get(cache_key)
    if cached is None or time.monotonic() - cached.fetched > settings().key_cache_seconds:
        cached = _load(secret_hash, now, source_ip)
    if cached.not_after is not None and now >= cached.not_after:
        raise Unauthorized("The API key has expired or was revoked.")
    return cached.principal


def _load(secret_hash: str, now: float, source_ip: str | None) -> _CachedKey:
    record = api_keys_table.find_secret(secret_hash)
    if record is None:
        cell_routing.api_key(secret_hash)  # a key of a tenant homed in another cell: 421 to it
        raise Unauthorized("The API key is not valid.")
    not_after = record.get("notAfter")
    if not_after is not None and now >= not_after:
        raise Unauthorized("The API key has expired or was revoked.")
    claims = {"sub": record["keyId"], "tid": record["tenantId"], "scopes": sorted(record["scopes"]),
              "cred": "api_key", "jti": record["keyId"], "gen": api_keys_table.generation(record)}
    cached = _CachedKey(fetched=time.monotonic(), principal=Principal.from_claims(claims), not_after=not_after)
    with _cache_lock:
        _key_cache[(container.key(), secret_hash)] = cached
    # The key's last use, when due (api_keys_table.LAST_USED_STEP), is written while its tenant's
    # policy, which admission reads next, is read (and cached): one round trip instead of two.
    if api_keys_table.touch_due(record, int(now)):
        parallel.both(lambda: _touch(record["keyId"], secret_hash, now, source_ip),
                      lambda: tenant_policy.policy_of(record["tenantId"]))
    return cached


def _touch(key_id: str, secret_hash: str, now: float, source_ip: str | None) -> None:
    try:
        api_keys_table.touch(key_id, secret_hash, int(now), source_ip)
    except Exception:
        logger.warning("could not record last use of an API key", extra={"key_id": key_id})


def forget_key(key_id: str) -> None:
    """Drop a key's cached records (after revoking or rotating it in this container)."""
    with _cache_lock:
        for cache_key in [k for k, c in _key_cache.items() if c.principal.subject == key_id]:
            del _key_cache[cache_key]
