"""OAuth connections: the provider configuration, and the flow's checks over an in-memory table
(the provider's token endpoint replaced by a function; no network)."""

import json
from urllib.parse import parse_qs, urlsplit

import pytest

from svc_core.auth.context import TenantContext
from svc_core.auth.principal import Principal
from svc_core.domain import oauth_connections as oc
from svc_core.domain.models.oauth import AuthorizeBody
from svc_core.platform import config
from svc_core.platform.errors import Forbidden, NotFound, ValidationFailed

PROVIDER = {"name": "acme", "authorizeUrl": "https://acme.example/authorize?prompt=consent",
            "tokenUrl": "https://acme.example/token", "clientId": "svc", "scopes": ["read", "write"],
            "redirectUri": "https://app.example/callback"}


def ctx(tenant="ten_A", user="usr_A", credential="user"):
    principal = Principal(subject=user, tenant_id=tenant, scopes=frozenset({"secrets:read"}),
                          credential=credential, token_id="jti")
    return TenantContext(tenant_id=tenant, principal=principal, request_id="req")


class MemoryFlows:
    def __init__(self):
        self.flows = {}

    def create(self, flow):
        self.flows[flow["stateHash"]] = dict(flow)

    def get(self, state_hash):
        return self.flows.get(state_hash)


@pytest.fixture(autouse=True)
def providers(monkeypatch):
    monkeypatch.setenv("OAUTH_PROVIDERS", json.dumps([PROVIDER]))
    config.settings.cache_clear()
    yield
    config.settings.cache_clear()


@pytest.mark.parametrize("change", [
    {"name": "Acme"}, {"name": "connections"}, {"authorizeUrl": "javascript:alert(1)"}, {"scopes": "read"},
    {"scopes": ["two words"]}, {"tokenAuthMethod": "private_key_jwt"}, {"clientId": ""},
])
def test_a_malformed_provider_list_is_refused(change):
    with pytest.raises(ValueError):
        oc.parse_providers(json.dumps([{**PROVIDER, **change}]))
    with pytest.raises(ValueError):
        oc.parse_providers(json.dumps([PROVIDER, PROVIDER]))  # a name twice


def test_start_keeps_the_verifier_and_answers_the_challenge():
    flows = MemoryFlows()
    started = oc.start(ctx(), "acme", flows)
    url = urlsplit(started["authorizationUrl"])
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    assert url.netloc == "acme.example" and query["prompt"] == "consent"  # the configured query is kept
    assert query["scope"] == "read write" and query["code_challenge_method"] == "S256"
    (flow,) = flows.flows.values()
    assert flow["stateHash"] == oc.state_hash(started["state"]) and started["state"] not in json.dumps(flow)
    assert oc.challenge_of(flow["codeVerifier"]) == query["code_challenge"]
    assert flow["codeVerifier"] not in started["authorizationUrl"]
    assert flow["expiresAt"] - flow["createdAt"] == 600


def test_only_a_signed_in_user_may_start_and_unknown_providers_are_404():
    with pytest.raises(Forbidden):
        oc.start(ctx(credential="api_key", user="key_A"), "acme", MemoryFlows())
    with pytest.raises(NotFound):
        oc.start(ctx(), "nope", MemoryFlows())


def test_authorize_refuses_bad_states_before_calling_the_provider():
    flows = MemoryFlows()
    started = oc.start(ctx(), "acme", flows)
    calls = []

    def exchange(*args):
        calls.append(args)
        raise AssertionError("the provider must not be called")

    body = AuthorizeBody(code="c0de", state=started["state"])
    for who in (ctx(user="usr_B"), ctx(tenant="ten_B")):
        with pytest.raises(ValidationFailed) as refused:
            oc.authorize(who, "acme", body, flows, store=None, exchange=exchange)
        assert refused.value.details["reason"] == "unknown_state"
    assert calls == []
