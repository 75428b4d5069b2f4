"""OAuth provider connections: a signed-in user links an account at an OAuth 2.0 provider
(authorization-code grant with PKCE S256, RFC 6749 and RFC 7636), and the tenant keeps the
provider's tokens, sealed with KMS, for the service to call the provider later.

    start (GET or POST)   a flow: `state` (32 random bytes) and a PKCE verifier kept server-side,
                          for this user, tenant and provider, for 10 minutes; answers the
                          provider's authorization URL (with the state and the S256 challenge)
    authorize (POST)      {code, state}: the state must name an unexpired flow this user started
                          in this tenant for this provider; the code is exchanged at the
                          provider's token endpoint (with the verifier and the client's
                          credentials); the connection is stored and the flow consumed in one
                          transaction, so a flow yields at most one connection
    list, delete          the tenant's connections (never their tokens)

Providers are deployment configuration (the OAuthProviders parameter, a JSON list); their
client secrets live in Secrets Manager ({provider name: secret}). A refused request changes
nothing: a bad state consumes no flow, and a code the provider refuses leaves the flow for a
retry with the right code until it expires.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import quote_plus, urlencode

from svc_core.adapters import sealing, secrets_cache
from svc_core.auth.context import TenantContext
from svc_core.data import oauth_connections_table, oauth_flows_table
from svc_core.data.common import ConditionFailed
from svc_core.domain.paging import tenant_list_page
from svc_core.platform import ids, timeutil
from svc_core.platform.config import settings
from svc_core.platform.errors import Forbidden, NotFound, ProviderError, ServiceError, ValidationFailed
from svc_core.platform.log import logger

if TYPE_CHECKING:
    from svc_core.domain.models.oauth import AuthorizeBody

FLOW_SECONDS = 600
PREFIX = "ocn"
MANAGE_SCOPE = "secrets:write"  # deletes any connection of the tenant (a user may delete their own)
PROVIDER_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")
RESERVED_NAMES = {"connections"}  # /oauth/connections is the list's path
AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")
_OAUTH_ERROR = re.compile(r"^[a-z_]{1,64}$")  # RFC 6749 error codes; anything else is not repeated


# ---- configuration -------------------------------------------------------------------------

@dataclass(frozen=True)
class Provider:
    name: str
    authorize_url: str
    token_url: str
    client_id: str
    scopes: tuple[str, ...]
    redirect_uri: str
    token_auth_method: str = "client_secret_basic"


def _url(entry: dict[str, Any], field: str) -> str:
    value = entry.get(field)
    if not isinstance(value, str) or not re.match(r"^https?://[^\s]+$", value):
        raise ValueError(f"OAuthProviders: {entry.get('name')!r}.{field} must be an http(s) URL")
    return value


@lru_cache(maxsize=4)
def parse_providers(raw: str) -> dict[str, Provider]:
    """The OAuthProviders parameter: a JSON list of {name, authorizeUrl, tokenUrl, clientId,
    scopes, redirectUri, tokenAuthMethod?}. A malformed list is a deployment error (ValueError)."""
    entries = json.loads(raw or "[]")
    if not isinstance(entries, list):
        raise ValueError("OAuthProviders must be a JSON list")
    found: dict[str, Provider] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            raise ValueError("OAuthProviders: every entry must be an object")
        name = entry.get("name")
        if not isinstance(name, str) or not PROVIDER_NAME.match(name) or name in RESERVED_NAMES or name in found:
            raise ValueError(f"OAuthProviders: bad or repeated name {name!r}")
        scopes = entry.get("scopes", [])
        if not isinstance(scopes, list) or not all(isinstance(s, str) and s and " " not in s for s in scopes):
            raise ValueError(f"OAuthProviders: {name}.scopes must be a list of scope names")
        method = entry.get("tokenAuthMethod", "client_secret_basic")
        client_id = entry.get("clientId")
        if method not in AUTH_METHODS or not isinstance(client_id, str) or not client_id:
            raise ValueError(f"OAuthProviders: {name} needs a clientId and a tokenAuthMethod of {AUTH_METHODS}")
        found[name] = Provider(name=name, authorize_url=_url(entry, "authorizeUrl"), token_url=_url(entry, "tokenUrl"),
                               client_id=client_id, scopes=tuple(scopes), redirect_uri=_url(entry, "redirectUri"),
                               token_auth_method=method)
    return found


def provider(name: str) -> Provider:
    try:
        configured = parse_providers(settings().oauth_providers)
    except ValueError:
        logger.exception("the OAuthProviders parameter is not valid")
        raise ServiceError() from None
    found = configured.get(name)
    if found is None:
        raise NotFound("No such OAuth provider.", {"id": name, "resource": "oauth_provider"})
    return found


def _client_secret(p: Provider) -> str | None:
    if p.token_auth_method == "none":
        return None
    secret = secrets_cache.get_json_secret(settings().oauth_client_secrets_secret_id).get(p.name)
    if not isinstance(secret, str) or not secret:
        logger.error("no client secret for an OAuth provider", extra={"provider": p.name})
        raise ServiceError()
    return secret


# ---- views ---------------------------------------------------------------------------------

def _view(record: dict[str, Any]) -> dict[str, Any]:
    return {"id": record["id"], "provider": record["provider"], "userId": record["userId"],
            "scopes": list(record.get("scopes", [])), "tokenType": record["tokenType"],
            "hasRefreshToken": bool(record.get("hasRefreshToken")), "created_at": record["created_at"],
            "access_token_expires_at": timeutil.iso(record.get("accessTokenExpiresAt"))}


# ---- the flow ------------------------------------------------------------------------------

def _require_user(ctx: TenantContext) -> None:
    if ctx.principal.credential != "user":
        raise Forbidden("Only a signed-in user can connect a provider account (the connection is theirs).")


def state_hash(state: str) -> str:
    return hashlib.sha256(state.encode()).hexdigest()


def challenge_of(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def start(ctx: TenantContext, provider_name: str, flows=oauth_flows_table) -> dict[str, Any]:
    _require_user(ctx)
    p = provider(provider_name)
    now = int(timeutil.now())
    state = secrets.token_urlsafe(32)
    verifier = secrets.token_urlsafe(64)  # 86 characters of the RFC 7636 alphabet
    flows.create({"stateHash": state_hash(state), "provider": p.name, "tenantId": ctx.tenant_id,
                  "userId": ctx.actor, "codeVerifier": verifier, "redirectUri": p.redirect_uri,
                  "createdAt": now, "expiresAt": now + FLOW_SECONDS})
    query = urlencode({"response_type": "code", "client_id": p.client_id, "redirect_uri": p.redirect_uri,
                       "scope": " ".join(p.scopes), "state": state, "code_challenge": challenge_of(verifier),
                       "code_challenge_method": "S256"})
    separator = "&" if "?" in p.authorize_url else "?"
    return {"authorizationUrl": f"{p.authorize_url}{separator}{query}", "state": state, "expiresIn": FLOW_SECONDS}


def _bad_state(reason: str, text: str) -> ValidationFailed:
    return ValidationFailed(f"The state {text}.", {
        "reason": reason, "fields": [{"field": "state", "in": "body", "reason": text}]})


def _check_flow(flow: dict[str, Any] | None, ctx: TenantContext, p: Provider, now: float) -> dict[str, Any]:
    # Another user's or tenant's flow is answered as a missing one: its existence is not told.
    if flow is None or flow["tenantId"] != ctx.tenant_id or flow["userId"] != ctx.actor:
        raise _bad_state("unknown_state", "is unknown or was already used")
    if now >= flow["expiresAt"]:
        raise _bad_state("expired_state", "has expired (flows last 10 minutes): start again")
    if flow["provider"] != p.name:
        raise _bad_state("provider_mismatch", "was issued for another provider")
    return flow


def exchange_code(p: Provider, code: str, verifier: str, redirect_uri: str) -> dict[str, Any]:
    """POST the code to the provider's token endpoint (RFC 6749 4.1.3 with RFC 7636's verifier);
    the provider's token response, or ProviderError."""
    import httpx  # only this route needs it: kept out of the other routes' cold start

    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri, "code_verifier": verifier}
    secret = _client_secret(p)
    auth = None
    if p.token_auth_method == "client_secret_basic":  # RFC 6749 2.3.1: each part form-encoded first
        auth = httpx.BasicAuth(quote_plus(p.client_id), quote_plus(secret))
    elif p.token_auth_method == "client_secret_post":
        form.update(client_id=p.client_id, client_secret=secret)
    else:
        form["client_id"] = p.client_id
    details: dict[str, Any] = {"provider": p.name}
    try:
        answer = httpx.post(p.token_url, data=form, auth=auth, headers={"Accept": "application/json"},
                            timeout=settings().oauth_http_timeout_seconds, follow_redirects=False)
    except httpx.HTTPError as exc:
        logger.warning("the OAuth provider's token endpoint did not answer",
                       extra={"provider": p.name, "error": type(exc).__name__})
        raise ProviderError("The provider's token endpoint did not answer.",
                            {**details, "providerError": "unreachable"}) from None
    try:
        body = answer.json()
    except ValueError:
        body = None
    if answer.status_code == 200 and isinstance(body, dict) and isinstance(body.get("access_token"), str) \
            and body["access_token"]:
        return body
    error = body.get("error") if isinstance(body, dict) else None
    details.update(providerStatus=answer.status_code,
                   providerError=error if isinstance(error, str) and _OAUTH_ERROR.match(error) else "invalid_response")
    logger.warning("the OAuth provider refused the code", extra=details)
    raise ProviderError("The provider did not accept the authorization code.", details)


def _granted_scopes(p: Provider, tokens: dict[str, Any]) -> list[str]:
    scope = tokens.get("scope")
    if isinstance(scope, str):
        return sorted(set(scope.split()))
    return sorted(set(p.scopes))  # RFC 6749 5.1: omitted when it is what was asked


def authorize(ctx: TenantContext, provider_name: str, body: AuthorizeBody, flows=oauth_flows_table,
              store=oauth_connections_table, exchange: Callable[..., dict[str, Any]] = exchange_code) -> dict[str, Any]:
    _require_user(ctx)
    p = provider(provider_name)
    hashed = state_hash(body.state)
    flow = _check_flow(flows.get(hashed), ctx, p, timeutil.now())
    tokens = exchange(p, body.code, flow["codeVerifier"], flow["redirectUri"])
    now = timeutil.now()
    connection_id = ids.new_id(PREFIX)
    expires_in = tokens.get("expires_in")
    refresh_token = tokens.get("refresh_token") if isinstance(tokens.get("refresh_token"), str) else None
    secret = json.dumps({"accessToken": tokens["access_token"], "refreshToken": refresh_token}).encode()
    record = {
        "id": connection_id, "provider": p.name, "userId": ctx.actor, "scopes": _granted_scopes(p, tokens),
        "tokenType": str(tokens.get("token_type") or "Bearer")[:32], "hasRefreshToken": refresh_token is not None,
        "created_at": timeutil.iso(now),
        "accessTokenExpiresAt": int(now) + int(expires_in) if isinstance(expires_in, int) and expires_in > 0 else None,
        "tokens": sealing.seal(secret, {"tenantId": ctx.tenant_id, "connectionId": connection_id}),
    }
    try:
        store.create(ctx.tenant_id, record, flows.consume_item(hashed, tenant_id=ctx.tenant_id, user_id=ctx.actor,
                                                               provider=p.name, now=int(now)))
    except ConditionFailed:
        # Expired meanwhile, or consumed by a concurrent authorize: say which, store nothing.
        _check_flow(flows.get(hashed), ctx, p, timeutil.now())
        raise _bad_state("unknown_state", "is unknown or was already used") from None
    return _view(record)


# ---- connections ---------------------------------------------------------------------------

def _not_found(connection_id: str) -> NotFound:
    return NotFound("The connection does not exist.", {"id": connection_id, "resource": "oauth_connection"})


def list_connections(ctx: TenantContext, limit: int, cursor: str | None,
                     store=oauth_connections_table) -> dict[str, Any]:
    return tenant_list_page(store, ctx.tenant_id, limit, cursor, id_prefix=PREFIX, view=_view)


def delete_connection(ctx: TenantContext, connection_id: str, store=oauth_connections_table) -> dict[str, Any]:
    record = store.get(ctx.tenant_id, connection_id) if ids.is_id(connection_id, PREFIX) else None
    if record is None:
        raise _not_found(connection_id)
    if record["userId"] != ctx.actor and MANAGE_SCOPE not in ctx.scopes:
        raise Forbidden("Only the user who connected it, or a credential with secrets:write, can delete it.",
                        {"requiredScope": MANAGE_SCOPE})
    try:
        store.delete(ctx.tenant_id, connection_id)
    except ConditionFailed:
        raise _not_found(connection_id) from None  # deleted meanwhile
    return {"id": connection_id, "deleted": True}


def connection_tokens(ctx: TenantContext, connection_id: str, store=oauth_connections_table) -> dict[str, Any]:
    """The provider's tokens in clear, for the service's own calls to the provider (no route
    answers them). The seal opens only with this tenant and connection id."""
    record = store.get(ctx.tenant_id, connection_id) if ids.is_id(connection_id, PREFIX) else None
    if record is None:
        raise _not_found(connection_id)
    return json.loads(sealing.unseal(record["tokens"], {"tenantId": ctx.tenant_id, "connectionId": connection_id}))
