"""The OpenAPI 3.1 document, generated from the code of every API function and merged.

    python -m devstack.openapi --write   # regenerate functions/meta/openapi.json
    python -m devstack.openapi --check   # exit 1 when the committed file and the code disagree,
                                         # or when the document is not valid OpenAPI 3.1

The meta function serves the committed file at GET /api/v1/openapi.json. scripts/generate writes
it together with the other derived files.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from devstack.template import ROOT, Resolver

LAYER = ROOT / "layers" / "shared" / "python"
if str(LAYER) not in sys.path:
    sys.path.insert(0, str(LAYER))

from svc_core.contracts import deployment_document  # noqa: E402  (the layer's path is set just above)

DOCUMENT = ROOT / "functions" / "meta" / "openapi.json"
LICENSE = "LicenseRef-Proprietary"   # an SPDX reference to a license of its own: the API is not open source
DESCRIPTION = (
    "Multi-tenant AI application service. Every response uses the envelope {data, meta} or "
    "{error, meta}; errors carry a code from the API reference. Authenticate with "
    "`Authorization: Bearer <API key or access token>`. Rate-limit headers X-RateLimit-Limit, "
    "X-RateLimit-Remaining and X-RateLimit-Reset (Unix epoch seconds) come on every counted response."
)


def _api_of(code_dir: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"openapi_{code_dir.name}_app", code_dir / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, "api", None)


def build_document() -> dict[str, Any]:
    from aws_lambda_powertools.event_handler.openapi.merge import OpenAPIMerge
    from aws_lambda_powertools.event_handler.openapi.models import APIKey, APIKeyIn, HTTPBearer, License, Server

    from svc_core.adapters.payments.stripe_provider import SIGNATURE_HEADER, SIGNATURE_SCHEME
    from svc_core.domain.chat_stream import STREAM_TOKEN_PARAMETER, STREAM_TOKEN_SCHEME
    from svc_core.http import openapi_doc
    from svc_core.http.api import Api

    schemes = {
        "bearerAuth": HTTPBearer(bearerFormat="API key (svc_<type>_...) or service JWT"),
        # Stripe's webhook only: its credential is the signature Stripe computes with the webhook secret.
        SIGNATURE_SCHEME: APIKey(name=SIGNATURE_HEADER, in_=APIKeyIn.header,
                                 description="Stripe's signature of the body (t=<time>,v1=<HMAC-SHA256 with the "
                                             "webhook secret>); only POST /billing/stripe/webhook"),
        # The chat stream only, instead of the Authorization header (EventSource cannot send one).
        STREAM_TOKEN_SCHEME: APIKey(name=STREAM_TOKEN_PARAMETER, in_=APIKeyIn.query,
                                    description="A stream token (POST /chat/sessions/{id}/stream-token): good "
                                                "for that session's stream only, 5 minutes at most"),
    }
    merge = OpenAPIMerge(
        title="Multi-tenant AI application service API", version="1.0.0", description=DESCRIPTION,
        servers=[Server(url="/", description="the API's base URL")], security_schemes=schemes,
        license_info=License(name="Proprietary", identifier=LICENSE),
        on_conflict="error",
    )
    resolver = Resolver({})
    seen = set()
    models: dict[str, tuple[str, str]] = {}
    for logical_id in sorted(resolver.of_type("AWS::Serverless::Function")):
        code_dir = resolver.function_code_dir(logical_id)
        if code_dir in seen:
            continue
        seen.add(code_dir)
        api = _api_of(code_dir)
        if isinstance(api, Api):
            schema = openapi_doc.resolver(api).get_openapi_schema(security_schemes=schemes)
            _refuse_clashing_models(schema, models, code_dir.name)
            merge.add_schema(schema)
    document = _event_streams_as_text(_without_unused_validation_response(json.loads(merge.get_openapi_json_schema())))
    _public_operations_say_so(document)
    _request_strings_hold_no_nul(document)
    return deployment_document.fill(document, template_default_lists(resolver))


def template_default_lists(resolver: Resolver) -> dict[str, list[str]]:
    """The lists a deployment decides, as the template's parameter defaults make them (the meta
    function serves the running deployment's own)."""
    from types import SimpleNamespace

    from svc_core.adapters.models.registry import allowed_models

    defaults = SimpleNamespace(model_id=resolver.ref("ModelId"), model_allowed_ids=resolver.ref("ModelAllowedIds"))
    models = allowed_models(defaults)
    return {deployment_document.ALLOWED_MODELS: models}


def _refuse_clashing_models(schema: Any, models: dict[str, tuple[str, str]], function: str) -> None:
    """Two functions' models of one name would be merged into one schema, silently describing
    one of them wrongly: refuse it (rename a model)."""
    components = json.loads(schema.model_dump_json(by_alias=True, exclude_none=True)).get("components") or {}
    for name, body in (components.get("schemas") or {}).items():
        text = json.dumps(body, sort_keys=True)
        if name in models and models[name][1] != text:
            raise SystemExit(f"OpenAPI model {name!r} of {function} differs from the one of {models[name][0]}: "
                             "give one of them another name")
        models.setdefault(name, (function, text))


def _public_operations_say_so(document: dict[str, Any]) -> None:
    """A public operation (sign-in, health, the document itself) says `security: []`: no credential,
    rather than nothing said (Powertools leaves an empty list out). Every other operation names its
    scheme (svc_core/http/openapi_doc.py), so an operation without one is a public route."""
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            operation.setdefault("security", [])


EVENT_STREAM = "text/event-stream"
NO_NUL = "^[^\\u0000]*$"


def _may_match_nul(pattern: str) -> bool:
    """False only when the pattern surely refuses every string holding a NUL: anchored at both
    ends, and made of positive character classes and escapes (no negation, no dot, no NUL named)."""
    anchored = pattern.startswith("^") and pattern.endswith("$")
    return not anchored or any(token in pattern for token in ("[^", "\\S", "\\W", "\\D", ".", "\\x00", "\\u0000"))


def _request_strings_hold_no_nul(document: dict[str, Any]) -> None:
    """A body's strings may not hold a NUL anywhere (svc_core/http/json_body.py refuses it, in every
    field): every string schema a request body reaches says so, with its own pattern if it has
    none, else beside it in an allOf (a schema has one pattern)."""
    schemas = document.get("components", {}).get("schemas", {})
    seen: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                visit(item)
        if not isinstance(node, dict):
            return
        reference = node.get("$ref", "").rpartition("/")[2]
        if reference and reference not in seen:
            seen.add(reference)
            visit(schemas[reference])
        if node.get("type") == "string" and "enum" not in node and "const" not in node:
            if "pattern" not in node:
                node["pattern"] = NO_NUL
            elif _may_match_nul(node["pattern"]) and {"pattern": NO_NUL} not in node.get("allOf", []):
                node.setdefault("allOf", []).append({"pattern": NO_NUL})
        for key, value in node.items():
            if key != "allOf":
                visit(value)

    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            visit(operation.get("requestBody"))


def _event_streams_as_text(document: dict[str, Any]) -> dict[str, Any]:
    """OpenAPI 3.1 does not say whether the `schema` of text/event-stream describes the whole body
    or one event (3.2 added itemSchema for the second), and readers differ: a generated client
    reads the body as text, schemathesis checks each event against it. The schema says both, as
    `anyOf` of the body's text and the route's event model."""
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            for response in operation.get("responses", {}).values():
                media = response.get("content", {}).get(EVENT_STREAM)
                if media and "$ref" in media.get("schema", {}):
                    media["schema"] = {"anyOf": [
                        {"type": "string", "description": "the whole body: Server-Sent Events (read it with an "
                                                          "SSE parser or EventSource)"},
                        media["schema"]],
                        "description": "the stream as text, or one of its events (OpenAPI 3.2's itemSchema)"}
    return document


def _without_unused_validation_response(document: dict[str, Any]) -> dict[str, Any]:
    """Powertools documents a 422 for every operation; this API answers bad input with 400. A 422 a
    route names itself (in our error envelope, e.g. IDEMPOTENCY_KEY_REUSED) stays."""
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.get("responses", {})
            if "HTTPValidationError" in json.dumps(responses.get("422", {})):
                responses.pop("422")
    schemas = document.get("components", {}).get("schemas", {})
    text = json.dumps(document["paths"])
    for name in ("HTTPValidationError", "ResponseValidationError", "ValidationError"):
        if f"#/components/schemas/{name}" not in text and f"#/components/schemas/{name}" not in json.dumps(
                {k: v for k, v in schemas.items() if k != name}):
            schemas.pop(name, None)
    return document


def problems(document: dict[str, Any]) -> list[str]:
    """Where the document breaks the OpenAPI 3.1 specification (empty when it is valid): clients
    and generators (and the fuzzer) read it, and some refuse an invalid one outright."""
    from openapi_spec_validator import OpenAPIV31SpecValidator

    found = []
    for error in OpenAPIV31SpecValidator(document).iter_errors():
        where = " > ".join(str(part) for part in getattr(error, "absolute_path", ()))
        found.append(f"{where or '(document)'}: {error.message.splitlines()[0]}")
    return found


def render() -> str:
    return json.dumps(build_document(), indent=2, sort_keys=True) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser()
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true")
    group.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = render()
    if args.write:
        DOCUMENT.write_text(text)
        print(f"wrote {DOCUMENT.relative_to(ROOT)}")
        return 0
    if DOCUMENT.read_text() != text:
        print(f"{DOCUMENT.relative_to(ROOT)} is out of date: run scripts/generate (or python -m devstack.openapi --write)")
        return 1
    invalid = problems(json.loads(text))
    if invalid:
        print(f"{DOCUMENT.relative_to(ROOT)} is not valid OpenAPI 3.1 (fix the route declarations, then --write):")
        for problem in invalid:
            print(f"  {problem}")
        return 1
    print("openapi.json matches the code and is valid OpenAPI 3.1")
    return 0


if __name__ == "__main__":
    sys.exit(main())
