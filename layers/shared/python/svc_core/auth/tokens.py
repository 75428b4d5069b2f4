"""Service access tokens: ES256 JWTs, explicitly typed, verified per RFC 8725.

Verification accepts exactly one algorithm (ES256) for keys we publish, requires typ at+jwt,
a known kid, and the iss, aud, sub, tid, scopes, exp, iat and jti claims. alg "none" in any
spelling, HS256 keyed with our public key, an unknown kid, an expired token or a wrong
issuer or audience all raise Unauthorized.

An ECDSA signature (r, s) also verifies as (r, n - s), so each token would have two valid
forms; only the canonical low-s form (s <= n/2, as mint() writes it) is accepted, and a
signature that is not 64 bytes (r || s) is refused before any verification.
"""

from __future__ import annotations

import base64
import binascii
import secrets
from typing import Any

from svc_core.auth.principal import Principal
from svc_core.platform import timeutil
from svc_core.platform.config import settings
from svc_core.platform.errors import Unauthorized

TOKEN_TYPE = "at+jwt"
_REQUIRED = ["iss", "aud", "sub", "exp", "iat", "jti"]
LEEWAY_SECONDS = 5  # clock skew between containers
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551  # n of the curve
_HALF_ORDER = P256_ORDER // 2


def _signature(token: str) -> tuple[str, int, int] | None:
    """The signing input and the ES256 signature's r and s; None when it is not 64 bytes of base64url."""
    signing_input, _, encoded = token.rpartition(".")
    try:
        raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    except (binascii.Error, ValueError):
        return None
    if len(raw) != 64:
        return None
    return signing_input, int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")


def low_s(token: str) -> str:
    """The token with its signature in the canonical form: s replaced by n - s when above n/2
    (the same signature to ECDSA; cryptography signs with either half)."""
    signing_input, r, s = _signature(token)  # type: ignore[misc]  # a token just signed
    if s <= _HALF_ORDER:
        return token
    raw = r.to_bytes(32, "big") + (P256_ORDER - s).to_bytes(32, "big")
    return f"{signing_input}.{base64.urlsafe_b64encode(raw).rstrip(b'=').decode()}"


def mint(*, subject: str, tenant_id: str, scopes: list[str] | frozenset[str], credential: str,
         lifetime: int | None = None, extra: dict[str, Any] | None = None, token_type: str = TOKEN_TYPE,
         audience: str | None = None) -> tuple[str, int]:
    """A signed token and its lifetime in seconds. token_type and audience other than the access
    token's make a token that verify() refuses unless asked for exactly them (the chat stream's)."""
    cfg = settings()
    lifetime = lifetime or cfg.jwt_lifetime_seconds
    issued = int(timeutil.now())
    claims = {
        "iss": cfg.jwt_issuer, "aud": audience or cfg.jwt_audience, "sub": subject, "tid": tenant_id,
        "scopes": sorted(scopes), "cred": credential, "iat": issued, "nbf": issued,
        "exp": issued + lifetime, "jti": secrets.token_urlsafe(16), **(extra or {}),
    }
    import jwt  # on first use: PyJWT and the X.509 half of cryptography cost ~40 ms at start

    from svc_core.auth import signing_keys  # on first use too: cryptography's EC keys

    keyset = signing_keys.current()
    token = jwt.encode(claims, keyset.active_private, algorithm=signing_keys.ALGORITHM,
                       headers={"kid": keyset.active_kid, "typ": token_type})
    return low_s(token), lifetime


def verify(token: str, token_type: str = TOKEN_TYPE, audience: str | None = None) -> Principal:
    import jwt  # on first use, as in mint()

    from svc_core.auth import signing_keys

    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        raise Unauthorized("The access token is malformed.") from None
    if header.get("typ") != token_type or header.get("alg") != signing_keys.ALGORITHM:
        raise Unauthorized("The access token's type or algorithm is not accepted.")
    signature = _signature(token)
    if signature is None:
        raise Unauthorized("The access token's signature is malformed.")
    if signature[2] > _HALF_ORDER:
        raise Unauthorized("The access token's signature is not in its canonical (low-s) form.")
    kid = header.get("kid")
    keyset = signing_keys.current()
    if kid not in keyset.public:
        # A key added by a rotation elsewhere may not be in our cached copy yet.
        keyset = signing_keys.current(force_fetch=True)
    public = keyset.public.get(kid)
    if public is None:
        raise Unauthorized("The access token was signed by an unknown key.")
    cfg = settings()
    try:
        claims = jwt.decode(token, public, algorithms=[signing_keys.ALGORITHM],
                            audience=audience or cfg.jwt_audience, issuer=cfg.jwt_issuer,
                            options={"require": _REQUIRED, "verify_exp": False, "verify_nbf": False,
                                     "verify_iat": False}, leeway=LEEWAY_SECONDS)
    except jwt.PyJWTError:
        raise Unauthorized("The access token is not valid.") from None
    # Times are checked against the service's clock (timeutil), the one mint() stamps them with.
    times = [claims.get(name) for name in ("exp", "iat", "nbf")]
    if not all(t is None or (isinstance(t, (int, float)) and not isinstance(t, bool)) for t in times):
        raise Unauthorized("The access token is not valid.")
    now = timeutil.now()
    if claims["exp"] <= now - LEEWAY_SECONDS:
        raise Unauthorized("The access token has expired.")
    if max(t for t in times[1:] if t is not None) > now + LEEWAY_SECONDS:
        raise Unauthorized("The access token is not valid yet.")
    if not isinstance(claims.get("tid"), str) or not isinstance(claims.get("scopes"), list):
        raise Unauthorized("The access token lacks tenant or scope claims.")
    return Principal.from_claims(claims)
