"""The identity-provider exchange: a browser signed in with the provider (Clerk first) posts
the provider's OIDC token and gets a service access token.

The token is verified against the provider's JWKS (PyJWKClient: fetched, cached, and fetched
once more when a token names an unknown kid, at most once per cooldown), with iss, aud, exp
and nbf checked. The (iss, sub) pair names one user, created on first sight with a personal
tenant (user.created, tenant.created). Issuer, audience and JWKS URL are deployment settings;
without them the route answers 404.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from svc_core.auth import tokens
from svc_core.auth.roles import ROLE_SCOPES
from svc_core.data import users_table
from svc_core.data.common import transact
from svc_core.domain import audit, people
from svc_core.platform.config import settings
from svc_core.platform.errors import Conflict, Forbidden, NotFound, Unauthorized

if TYPE_CHECKING:
    from svc_core.domain.models.idp_exchange import ExchangeBody

ALGORITHMS = ["RS256", "ES256", "EdDSA"]


@lru_cache(maxsize=4)
def _jwks_client(url: str, cooldown: int) -> Any:
    import jwt
    return jwt.PyJWKClient(url, cache_jwk_set=True, lifespan=300, timeout=5, cooldown_duration=cooldown)


def _verified_claims(token: str) -> dict[str, Any]:
    cfg = settings()
    if not (cfg.idp_issuer and cfg.idp_audience and cfg.idp_jwks_url):
        raise NotFound("No identity provider is configured for this deployment.", {"feature": "idp_exchange"})
    import jwt  # on first use: PyJWT and cryptography cost ~45 ms at start, and most requests never exchange
    try:
        header = jwt.get_unverified_header(token)
        if header.get("alg") not in ALGORITHMS:
            raise Unauthorized("The identity token's algorithm is not accepted.")
        key = _jwks_client(cfg.idp_jwks_url, cfg.idp_jwks_cooldown_seconds).get_signing_key(header.get("kid", ""))
        return jwt.decode(token, key.key, algorithms=[header["alg"]], audience=cfg.idp_audience,
                          issuer=cfg.idp_issuer, options={"require": ["exp", "iss", "aud", "sub"]}, leeway=5)
    except jwt.PyJWKClientConnectionError:
        raise Unauthorized("The identity provider's keys could not be fetched.") from None
    except jwt.PyJWTError:
        raise Unauthorized("The identity token is not valid.") from None


def _first_sight(issuer: str, subject: str, claims: dict[str, Any], source_ip: str) -> str:
    from svc_core.domain.tenants import create_tenant_with_owner  # on first use, as accounts.register says
    name = str(claims.get("name") or claims.get("given_name") or "New user")[:200]
    try:
        made = create_tenant_with_owner(tenant_name=f"{name}'s workspace", email=str(claims.get("email") or "")[:254],
                                        user_name=name, federated=(issuer, subject), source_ip=source_ip)
    except Conflict:  # a concurrent first exchange of the same account won: use its user
        existing = users_table.id_for_federated(issuer, subject)
        if existing is None:
            raise
        return existing
    return made["user"]["id"]


def exchange(body: ExchangeBody, source_ip: str = "") -> dict[str, Any]:
    claims = _verified_claims(body.token)
    issuer, subject = claims["iss"], str(claims["sub"])
    user_id = users_table.id_for_federated(issuer, subject) or _first_sight(issuer, subject, claims, source_ip)
    user, memberships = users_table.with_memberships(user_id)
    if user is None or user["status"] != "active":
        raise Forbidden("This account is disabled.", {"reason": "account_disabled"})
    memberships = people.memberships(user_id, memberships)  # tenants homed in other cells too
    if not memberships:
        raise Forbidden("This account belongs to no tenant.")
    membership = sorted(memberships, key=lambda m: m["created_at"])[0]
    tenant = people.tenant(membership)
    signed_in = people.written_at_home(membership, audit.sign_in_entries(
        tenant["id"], user["id"], membership["role"], source_ip, "identity_provider"))
    if signed_in:  # the sign-in writes nothing else: its entry is a transaction of its own
        transact(signed_in)
    token, lifetime = tokens.mint(subject=user["id"], tenant_id=tenant["id"], scopes=ROLE_SCOPES[membership["role"]],
                                  credential="user")
    return {"accessToken": token, "tokenType": "Bearer", "expiresIn": lifetime,
            "user": {k: user[k] for k in ("id", "email", "name", "status", "created_at")},
            "tenant": {"id": tenant["id"], "name": tenant["name"], "plan": tenant["plan"],
                       "status": tenant["status"], "role": membership["role"]}}
