"""The OpenAPI document is generated from the code, committed, and complete; and every route of
template.yaml is served by the function the template names (and the other way round)."""

from __future__ import annotations

import json

from devstack import openapi
from devstack.provision import shared_environment
from devstack.template import Resolver
from tests.support.functions import load_function, served_routes

PUBLIC = {"/api/v1/health", "/api/v1/.well-known/jwks.json", "/api/v1/openapi.json", "/api/v1/docs",
          "/api/v1/docs/redoc.standalone.js",
          "/api/v1/auth/register", "/api/v1/auth/login",
          "/api/v1/auth/refresh", "/api/v1/auth/logout"}


ANY_CREDENTIAL = {"/api/v1/auth/me", "/api/v1/cli/auth/complete", "/api/v1/cli/auth/deny",
                  "/api/v1/members/leave",  # a signed-in user leaves (checked in the domain)
                  "/api/v1/tenants"}  # POST: a signed-in user (checked in the domain), whatever the scopes
# OAuth connections: start and authorize check for a signed-in user, delete for its owner or
# secrets:write, in the domain (svc_core/domain/oauth_connections.py).
ANY_CREDENTIAL |= {"/api/v1/oauth/{provider}/start", "/api/v1/oauth/{provider}/authorize",
                   "/api/v1/oauth/connections/{id}"}
# The region catalogue and the routing info: any credential (svc_core/domain/routing.py).
ANY_CREDENTIAL |= {"/api/v1/regions", "/api/v1/routing-info"}
# Billing's reads: authentication only, as the spec says; Stripe's webhook: its signature instead.
ANY_CREDENTIAL |= {"/api/v1/billing/summary", "/api/v1/billing/invoices", "/api/v1/billing/invoices/{id}",
                   "/api/v1/billing/ledger"}
SIGNED_BY_PROVIDER = {"/api/v1/billing/stripe/webhook": "stripeSignature"}
PUBLIC |= {"/api/v1/auth/exchange", "/api/v1/cli/auth/start", "/api/v1/cli/auth/status", "/api/v1/cli/auth/info",
           "/api/v1/cli/auth/token", "/api/v1/cli/auth/approve"}
# The invitee's side: the link's token is the credential (docs/invitations.md).
PUBLIC |= {"/api/v1/invitations/lookup", "/api/v1/invitations/accept", "/api/v1/invitations/accept-page"}
# A forgotten password: the address asks, the e-mailed link's token is the credential (docs/authentication.md).
PUBLIC |= {"/api/v1/auth/password/forgot", "/api/v1/auth/password/reset", "/api/v1/auth/password/reset-page"}
# A person's own password, sessions and name (PATCH /auth/me): a signed-in user, checked in the domain
# (svc_core/domain/own_account.py refuses API keys).
ANY_CREDENTIAL |= {"/api/v1/auth/password", "/api/v1/auth/sessions", "/api/v1/auth/sessions/{id}"}


def test_the_committed_document_is_what_the_code_generates():
    assert openapi.DOCUMENT.read_text() == openapi.render(), \
        "functions/meta/openapi.json is stale: run scripts/generate"


def test_the_committed_document_is_valid_openapi_3_1():
    # The same check as python -m devstack.openapi --check: a client generator may refuse an invalid
    # document (a media type nested in a media type was one: GET /cli/auth/approve's page).
    assert openapi.problems(json.loads(openapi.DOCUMENT.read_text())) == []
    bad = json.loads(openapi.DOCUMENT.read_text())
    bad["paths"]["/api/v1/cli/auth/approve"]["get"]["responses"]["200"]["content"] = {
        "text/html": {"text/html": {"schema": {"type": "string"}}}}
    assert any("text/html" in problem for problem in openapi.problems(bad))


def test_every_operation_has_summary_schemas_errors_and_security():
    document = json.loads(openapi.DOCUMENT.read_text())
    assert document["openapi"].startswith("3.1")
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            where = f"{method.upper()} {path}"
            assert operation.get("summary"), where
            responses = operation["responses"]
            success = [code for code in responses if code.startswith("2")]
            assert success and "content" in responses[success[0]], where
            assert "500" in responses, where
            # Bad input is 400; a 422 is only ever our own (a reused Idempotency-Key), never Powertools' default.
            assert "422" not in responses or "IDEMPOTENCY_KEY_REUSED" in responses["422"]["description"], where
            if path in SIGNED_BY_PROVIDER:
                # A provider's webhook: its signature header is the credential, no bearer is asked for.
                assert operation["security"] == [{SIGNED_BY_PROVIDER[path]: []}] and "401" in responses, where
            elif operation.get("security"):
                # Every authenticated route names its scope, but those any signed-in caller may call.
                assert operation["security"][0]["bearerAuth"] or path in ANY_CREDENTIAL, f"{where} names no scope"
                assert {"401", "403", "429"} <= set(responses), where
            else:
                # A public route says so (`security: []`), as Redocly's recommended lint asks: no credential.
                assert path in PUBLIC and operation["security"] == [], f"{where} is public"
            if method in ("post", "put", "patch") and "requestBody" in operation:
                assert {"400", "413", "415"} <= set(responses), where


def test_the_document_names_its_license():
    info = json.loads(openapi.DOCUMENT.read_text())["info"]
    assert info["license"] == {"name": "Proprietary", "identifier": "LicenseRef-Proprietary"}


def test_the_stripe_signature_scheme_is_the_webhooks_alone():
    document = json.loads(openapi.DOCUMENT.read_text())
    assert document["components"]["securitySchemes"]["stripeSignature"] | {"description": ""} == {
        "type": "apiKey", "in": "header", "name": "Stripe-Signature", "description": ""}
    using = [(method, path) for path, operations in document["paths"].items()
             for method, operation in operations.items() if "stripeSignature" in json.dumps(operation.get("security"))]
    assert using == [("post", "/api/v1/billing/stripe/webhook")]


def test_template_routes_and_function_routes_agree():
    resolver = Resolver({})
    declared = {(m, p, f) for m, p, f in resolver.api_routes() if m != "ANY" and "{proxy+}" not in p}
    served = set()
    for logical_id in resolver.of_type("AWS::Serverless::Function"):
        code_dir = resolver.function_code_dir(logical_id)
        api = getattr(load_function(code_dir.name), "api", None)
        for (method, path) in getattr(api, "specs", {}):
            served.add((method, path, logical_id))
    assert declared == served


def test_every_resource_with_routes_answers_other_methods_with_405():
    routes = Resolver({}).api_routes()
    paths = {p for m, p, f in routes if m != "ANY" and "{proxy+}" not in p}
    any_paths = {p for m, p, f in routes if m == "ANY"}
    assert paths <= any_paths


def _served_cursor_patterns() -> dict[str, str]:
    """METHOD path -> the pattern the route's `cursor` parameter is declared with, for every route of
    every function's Api that takes one."""
    return {f"{method} {path}": parameter.marker.kwargs["pattern"]
            for (method, path), route in served_routes().items() for parameter in route.binder.parameters
            if parameter.kind == "query" and parameter.key == "cursor"}


def test_every_list_documents_the_cursor_pattern_the_server_checks():
    """The document's cursor pattern is the one decoding checks (svc_core/contracts/cursors.py): every string it
    allows is a position, so a schema-valid cursor is never refused. The lists are the routes that
    declare a cursor, read from the functions' Api objects."""
    from svc_core.contracts import cursors
    document = json.loads(openapi.DOCUMENT.read_text())
    patterns = {}
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                if parameter["name"] == "cursor":
                    string, = [s for s in parameter["schema"]["anyOf"] if s.get("type") == "string"]
                    patterns[f"{method.upper()} {path}"] = string
    served = _served_cursor_patterns()
    assert len(served) >= 12 and set(served.values()) == {cursors.ID_CURSOR, cursors.ATTEMPT_CURSOR}
    assert patterns == {route: {"type": "string", "pattern": pattern} for route, pattern in served.items()}


def test_a_functions_own_variables_are_the_defaults_the_local_stack_runs_with(monkeypatch):
    """The local stack runs every function in one process with the template's Globals: a variable a
    function sets for itself must equal the setting's default, or the stack would not behave as AWS."""
    from svc_core.platform import config
    resolver = Resolver({})
    globals_env = resolver.template.get("Globals", {}).get("Function", {}).get("Environment", {}).get("Variables", {})
    own = [(logical_id, name, str(value))
           for logical_id, resource in resolver.of_type("AWS::Serverless::Function").items()
           for name, value in ((resource["Properties"].get("Environment") or {}).get("Variables") or {}).items()
           if name not in globals_env and not name.startswith(("AWS_", "BRAND_"))]
    # AWS_*: the Lambda Web Adapter's. BRAND_*: the local stack gives them to every function (devstack/provision.py).
    assert {k for k in shared_environment(resolver) if k.startswith("BRAND_")} == \
        {"BRAND_NAME", "BRAND_LOGO", "BRAND_FAVICON", "BRAND_COLOR", "BRAND_FILES_URL"}
    assert own, "no function sets a variable of its own: this test checks nothing"
    for logical_id, name, value in own:
        monkeypatch.delenv(name, raising=False)
        config.settings.cache_clear()
        default = config.settings()
        monkeypatch.setenv(name, value)
        config.settings.cache_clear()
        assert config.settings() == default, f"{logical_id} sets {name}={value}, not the default"
        monkeypatch.delenv(name)
    config.settings.cache_clear()


def test_every_optional_body_documents_null_as_the_api_accepts_it():
    """A JSON null body is taken as no body (svc_core/http/api.py): an optional body's schema must say so,
    or a client checking against the document would think null is refused."""
    document = json.loads(openapi.DOCUMENT.read_text())
    optional = [(method, path, operation["requestBody"]["content"]["application/json"]["schema"])
                for path, operations in document["paths"].items() for method, operation in operations.items()
                if "requestBody" in operation and not operation["requestBody"].get("required")]
    assert optional, "no optional body: this test checks nothing"
    for method, path, schema in optional:
        assert {"type": "null"} in schema.get("anyOf", []), f"{method.upper()} {path}"


def _marked_enums(document):
    from svc_core.contracts import deployment_document
    return [schema.get("enum") for schema in deployment_document.marked(document)]


def test_the_served_document_offers_exactly_the_models_the_deployment_accepts(monkeypatch):
    """An agent's config.model is an enum of the running deployment's allowed models: a client or
    fuzzer choosing from the served document is never refused, and nothing else is accepted."""
    import pytest

    from svc_core.adapters.models.registry import choose_model
    from svc_core.platform import config
    from svc_core.platform.errors import ValidationFailed

    monkeypatch.setenv("MODEL_ID", "model-a")
    monkeypatch.setenv("MODEL_ALLOWED_IDS", "model-b, model-c")
    config.settings.cache_clear()
    try:
        meta = load_function("meta")
        meta._openapi_document.cache_clear()
        enums = _marked_enums(meta._openapi_document())
        assert len(enums) >= 2, "create and update of an agent both mark config.model"
        assert all(enum == ["model-a", "model-b", "model-c"] for enum in enums), enums
        for model in enums[0]:
            assert choose_model(config.settings(), model) == model
        with pytest.raises(ValidationFailed):
            choose_model(config.settings(), "us.anthropic.claude-haiku-4-5-20251001-v1:0")
        committed = _marked_enums(json.loads(openapi.DOCUMENT.read_text()))
        assert committed and all("model-a" not in enum for enum in committed), "the committed file keeps the defaults"
    finally:
        config.settings.cache_clear()
        load_function("meta")._openapi_document.cache_clear()


def test_the_stream_token_is_declared_as_the_streams_other_credential():
    """?token= authenticates the chat stream instead of the header (EventSource sends none): a
    security alternative, so tools that strip credentials strip it too; no other route takes it."""
    from svc_core.domain.chat_stream import STREAM_PATH, STREAM_SCOPE, STREAM_TOKEN_PARAMETER, STREAM_TOKEN_SCHEME
    document = json.loads(openapi.DOCUMENT.read_text())
    scheme = document["components"]["securitySchemes"][STREAM_TOKEN_SCHEME]
    assert (scheme["type"], scheme["in"], scheme["name"]) == ("apiKey", "query", STREAM_TOKEN_PARAMETER)
    takers = {(path, method): operation["security"] for path, operations in document["paths"].items()
              for method, operation in operations.items()
              if any(STREAM_TOKEN_SCHEME in alternative for alternative in operation.get("security", []))}
    assert takers == {(STREAM_PATH, "get"): [{"bearerAuth": [STREAM_SCOPE]}, {STREAM_TOKEN_SCHEME: []}]}
    stream = document["paths"][STREAM_PATH]["get"]
    assert STREAM_TOKEN_PARAMETER not in [p["name"] for p in stream.get("parameters", [])]
