"""events/<Function>-<Event>.json: one API Gateway proxy event (REST API, payload format 1.0) per
route of template.yaml, for `sam local invoke -e` and for the tests (which set credentials, ids and
bodies on a copy).

Each event is a request that succeeds against the local stack's sample data, written with
placeholders, never with a credential or an id of one machine's data:

- `Authorization: Bearer {{api_key}}`: the development API key (.local/dev-credentials.json);
- a path parameter names a sample object: `{{projects}}`, `{{agents}}`, `{{agents.runs}}`,
  `{{chat.sessions}}`... (the collection's path segments), `{{tenant_id}}` for a tenant id, and
  `{{spare:projects}}`... on a DELETE, so that deleting never takes the object the other events
  name; another parameter is filled by its name (`{{provider}}`);
- the body is the OpenAPI document's example of the operation's request model (or one built from
  its schema), an id field of it (`projectId`) naming a sample object too.

devstack/sam_local.py creates the sample objects through the API and fills the placeholders: the
local stack writes the usable copies into .local/events/ at start with --sam-local (docs/sam-local.md).
EXPECTED_STATUS says which status an event is written for (the operation's first 2xx unless named
there); tests/e2e/test_sam_local_events.py invokes every event and expects it.

The shape is SAM CLI's sample (`sam local generate-event apigateway aws-proxy`, stage v1), written
down here once so that regenerating the files needs no SAM CLI. The e2e tests compare the local
gateway's events with these files.

Written by scripts/generate (with openapi.json); do not edit the files by hand.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

from devstack.template import ROOT, load

EVENTS_DIR = ROOT / "events"
STAGE = "v1"
API_KEY = "{{api_key}}"
SPARE = "spare:"  # a DELETE's own object: {{spare:projects}}
_PLACEHOLDER = re.compile(r"\{\{([^{}]+)\}\}")
_API_PREFIX = ("api", "v1")

# Events that cannot succeed on sample data alone, and the status each is written for (why):
# they still show the function invoked, its credential accepted and its request read. A tuple of
# statuses: either may come, by what other events did first.
EXPECTED_STATUS: dict[str, tuple[int | tuple[int, ...], str]] = {
    "Webhooks-ReplayWebhookEvents": ((202, 409), "one replay of a webhook runs at a time: the sample replay may "
                                                 "still be running"),
    "Audit-ExportAuditLog": (403, "exporting the audit log needs the enterprise plan; the development tenant's "
                                  "is lower"),
    "Agents-ApproveRun": (409, "the offline model completes the sample run at once: it waits for no approval"),
    "Agents-CancelRun": (409, "the offline model completes the sample run at once"),
    "Agents-RejectRun": (409, "the offline model completes the sample run at once: it waits for no approval"),
    "Auth-CliComplete": (404, "the login id comes from a device login started by `svc login`"),
    "Auth-CliDeny": (404, "the login id comes from a device login started by `svc login`"),
    "Auth-CliInfo": (404, "the login id comes from a device login started by `svc login`"),
    "Auth-CliStatus": (404, "the login id comes from a device login started by `svc login`"),
    "Auth-CliToken": (404, "the login id comes from a device login started by `svc login`"),
    "Auth-Exchange": (404, "the local stack configures no identity provider"),
    "Auth-ChangePassword": (403, "a password change is a person's, with their current password: the development "
                                 "API key is refused (changing the developer's password would break the other samples)"),
    "Auth-EndOtherSessions": (403, "ending the developer's other sessions would end those the other samples sign in "
                                   "with: the development API key is refused, as it is for any person's own route"),
    "Auth-EndSession": (404, "ending a session would sign out another sample's: the event names one that does not exist"),
    "Auth-ResetPassword": (404, "the token comes from a password reset's e-mail (the local mailbox)"),
    "Billing-GetInvoice": (404, "invoices come from the payment provider's webhooks"),
    "Billing-RedeemGiftCard": (404, "gift cards are issued by an operator (python -m ops)"),
    "ChatStream-StreamChatSession": ((200, 204), "204 until a message is sent to the sample session "
                                                 "(Chat-SendChatMessage), 200 with its turn's events after"),
    "Invitations-AcceptInvitation": (404, "the token comes from an invitation's e-mail (the local mailbox)"),
    "Invitations-CreateInvitation": ((201, 409), "the event invites one address: once it is invited (or has joined), "
                                                 "again is 409"),
    "Invitations-ResendInvitation": ((200, 409), "409 once the revoke event revoked the sample invitation"),
    "Invitations-LookupInvitation": (404, "the token comes from an invitation's e-mail (the local mailbox)"),
    "Members-LeaveTenant": (409, "the developer is the development tenant's only owner, who stays"),
    "Members-RemoveMember": (409, "the sample member is the developer, the development tenant's only owner, who stays"),
    "Members-TransferOwnership": (409, "the sample member is the developer, who owns the tenant already (another "
                                       "member joins by an invitation from the local mailbox)"),
    "Regions-GetMigration": (404, "a tenant has a move only once one was started, in a deployment of several cells "
                                  "(scripts/dev --regions)"),
    "Regions-StartMigration": (409, "the local stack is one cell unless started with --regions: there is no other "
                                    "cell to move to (details.reason single_cell)"),
    "OAuth-Authorize": (400, "the state comes from a started flow and the code from the provider"),
    "OAuth-Start": (404, "the local stack configures no OAuth provider (the OAuthProviders parameter)"),
    "OAuth-StartPost": (404, "the local stack configures no OAuth provider (the OAuthProviders parameter)"),
    "OAuth-DeleteConnection": (404, "connections come from a completed provider flow"),
    "Regions-ValidateStorage": (403, "bring-your-own storage needs the growth plan; the development tenant's is lower"),
    "StripeWebhook-StripeWebhook": (401, "the local stack configures no payment provider's webhook secret"),
}

# Requests only a signed-in user makes (an API key belongs to a tenant, not to a person): their
# Authorization is a session's access token (a spare session for the one that ends it).
USER_SESSION: dict[str, str] = {
    "Auth-CliComplete": "access_token",
    "Auth-CliDeny": "access_token",
    "Auth-EndSession": "access_token",
    "Auth-ListSessions": "access_token",
    "Auth-Logout": "spare:access_token",
    "Auth-UpdateMe": "access_token",
    "Members-ChangeMemberRole": "access_token",   # owners are made and unmade by a signed-in owner
    "Members-LeaveTenant": "access_token",
    "Members-RemoveMember": "access_token",
    "Members-TransferOwnership": "access_token",
    "OAuth-Start": "access_token",
    "OAuth-StartPost": "access_token",
    "Tenants-CreateTenant": "access_token",
}
# Body fields that carry a sign-in's own values.
BODY_VALUES: dict[str, dict[str, str]] = {
    "Auth-Login": {"email": "{{email}}", "password": "{{password}}"},
    "Auth-Refresh": {"refreshToken": "{{refresh_token}}"},
    "Members-TransferOwnership": {"userId": "{{members}}"},
}
USER_AGENT = "Custom User Agent String"

# SAM CLI's sample headers, as it writes them (its multi-value Host names another API id).
_HEADERS = {
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,image/webp,*/*;q=0.8",
    "Accept-Encoding": "gzip, deflate, sdch",
    "Accept-Language": "en-US,en;q=0.8",
    "Cache-Control": "max-age=0",
    "CloudFront-Forwarded-Proto": "https",
    "CloudFront-Is-Desktop-Viewer": "true",
    "CloudFront-Is-Mobile-Viewer": "false",
    "CloudFront-Is-SmartTV-Viewer": "false",
    "CloudFront-Is-Tablet-Viewer": "false",
    "CloudFront-Viewer-Country": "US",
    "Host": "1234567890.execute-api.us-east-1.amazonaws.com",
    "Upgrade-Insecure-Requests": "1",
    "User-Agent": USER_AGENT,
    "Via": "1.1 08f323deadbeefa7af34d5feb414ce27.cloudfront.net (CloudFront)",
    "X-Amz-Cf-Id": "cDehVQoZnx43VYQb9j2-nvCh-9z396Uhbp027Y2JvkCPNLmGJHqlaA==",
    "X-Forwarded-For": "127.0.0.1, 127.0.0.2",
    "X-Forwarded-Port": "443",
    "X-Forwarded-Proto": "https",
}
_MULTI_VALUE_HEADERS = {name: [value] for name, value in
                        {**_HEADERS, "Host": "0123456789.execute-api.us-east-1.amazonaws.com"}.items()}
_IDENTITY = {
    "cognitoIdentityPoolId": None, "accountId": None, "cognitoIdentityId": None, "caller": None,
    "accessKey": None, "sourceIp": "127.0.0.1", "cognitoAuthenticationType": None,
    "cognitoAuthenticationProvider": None, "userArn": None, "userAgent": USER_AGENT, "user": None,
}


def proxy_event(method: str, resource: str, path: str, body: str, *, path_parameters: dict[str, str] | None = None,
                query: dict[str, str] | None = None, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """The event API Gateway would hand the function for this request (SAM CLI's sample values)."""
    extra = dict(headers or {})
    return {
        "body": base64.b64encode(body.encode()).decode(),
        "resource": resource,
        "path": path,
        "httpMethod": method,
        "isBase64Encoded": True,
        "queryStringParameters": dict(query) if query else None,
        "multiValueQueryStringParameters": {k: [v] for k, v in query.items()} if query else None,
        "pathParameters": dict(path_parameters) if path_parameters else None,
        "stageVariables": {"baz": "qux"},
        "headers": {**_HEADERS, **extra},
        "multiValueHeaders": {**{name: list(values) for name, values in _MULTI_VALUE_HEADERS.items()},
                              **{name: [value] for name, value in extra.items()}},
        "requestContext": {
            "accountId": "123456789012",
            "resourceId": "123456",
            "stage": STAGE,
            "requestId": "c6af9ac6-7b61-11e6-9a41-93e8deadbeef",
            "requestTime": "09/Apr/2015:12:34:56 +0000",
            "requestTimeEpoch": 1428582896000,
            "identity": dict(_IDENTITY),
            "path": f"/{STAGE}{path}",
            "resourcePath": resource,
            "httpMethod": method,
            "apiId": "1234567890",
            "protocol": "HTTP/1.1",
        },
    }


def placeholder_key(resource_path: str, parameter: str, method: str = "GET") -> str:
    """The sample a path parameter names: the collection's static segments for an id
    (/api/v1/agents/{id}/runs/{run_id}: run_id -> agents.runs), tenant_id for a tenant's id, the
    parameter's own name for anything else; a DELETE's target is a spare of its own."""
    if parameter in ("tenantId", "tenant_id"):
        return "tenant_id"
    segments = resource_path.strip("/").split("/")
    position = segments.index("{%s}" % parameter)
    if not (parameter == "id" or parameter.endswith(("_id", "Id"))):
        return parameter
    static = [s for s in segments[:position] if not s.startswith("{")]
    while static[:2] == list(_API_PREFIX):
        static = static[2:]
    key = ".".join(static)
    key = "tenant_id" if key == "tenants" else key
    last = position == len(segments) - 1
    return f"{SPARE}{key}" if method == "DELETE" and last and key not in ("tenant_id", *DELETED_AGAIN) else key


# Collections whose DELETE may be repeated (revoking a revoked invitation answers 200): it names the
# collection's sample itself, not a spare. A spare invitation would hold one of the development
# tenant's 3 seats for good, one more at every restart with --persist (spares are made anew).
DELETED_AGAIN = ("invitations",)


def placeholders(value: Any) -> set[str]:
    """The placeholder names in an event (its base64 body read too) or any text."""
    if isinstance(value, dict) and value.get("isBase64Encoded") and value.get("body"):
        value = {**value, "body": base64.b64decode(value["body"]).decode()}
    return set(_PLACEHOLDER.findall(value if isinstance(value, str) else json.dumps(value)))


class _Examples:
    """A value for a schema of the OpenAPI document: its example, else one built from its rules."""

    def __init__(self, document: dict[str, Any], id_keys: dict[str, str]) -> None:
        self.schemas = document.get("components", {}).get("schemas", {})
        self.id_keys = id_keys  # a body's id field (projectId) -> the sample it names (projects)

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            schema = self.schemas[schema["$ref"].rsplit("/", 1)[1]]
        return schema

    def value(self, schema: dict[str, Any], field: str = "") -> Any:
        schema = self.resolve(schema)
        if field in self.id_keys:
            return "{{%s}}" % self.id_keys[field]
        for key in ("examples", "example"):
            if key in schema:
                return schema[key][0] if key == "examples" else schema[key]
        if "const" in schema:
            return schema["const"]
        if "properties" in schema:  # an object's oneOf/anyOf only constrain its own properties
            return self.object(schema)
        for key in ("oneOf", "anyOf"):
            if key in schema:
                choices = [c for c in schema[key] if self.resolve(c).get("type") != "null"]
                return self.value(choices[0], field) if choices else None
        if "allOf" in schema:
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                merged.update(self.resolve(part))
            return self.value({**merged, **{k: v for k, v in schema.items() if k != "allOf"}}, field)
        if "enum" in schema:
            return schema["enum"][0]
        if "default" in schema and schema["default"] is not None:
            return schema["default"]
        kind = schema.get("type")
        if kind == "object" or "properties" in schema:
            return self.object(schema)
        if kind == "array":
            return [self.value(schema.get("items", {}), field)] if schema.get("minItems") else []
        if kind == "integer" or kind == "number":
            return schema.get("minimum", 1)
        if kind == "boolean":
            return True
        return self.string(schema, field)

    def object(self, schema: dict[str, Any]) -> dict[str, Any]:
        """The required fields, and the optional ones whose schema shows an example."""
        properties = schema.get("properties", {})
        required = set(schema.get("required", ()))
        shown = {name for name, prop in properties.items()
                 if "examples" in self.resolve(prop) or "example" in self.resolve(prop)}
        return {name: self.value(prop, name) for name, prop in properties.items() if name in required | shown}

    @staticmethod
    def string(schema: dict[str, Any], field: str) -> str:
        if schema.get("format") == "email":
            return "dev@example.com"
        if schema.get("format") in ("uri", "url"):
            return "https://example.com/"
        text = f"Sample {field or 'value'}"
        return text.ljust(int(schema.get("minLength", 0)), "x")


def _operation(document: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    return (document.get("paths", {}).get(path) or {}).get(method.lower()) or {}


def absent_allowed(name: str) -> bool:
    """Whether the event is written for a 404: a sample it names may be absent (a well-formed unknown id)."""
    return EXPECTED_STATUS.get(name, (0, ""))[0] == 404


def _expected(name: str, operation: dict[str, Any]) -> tuple[int, ...]:
    if name in EXPECTED_STATUS:
        status = EXPECTED_STATUS[name][0]
        return status if isinstance(status, tuple) else (status,)
    answers = sorted(int(code) for code in operation.get("responses", {}) if code.isdigit() and code.startswith("2"))
    return (answers[0] if answers else 200,)


def routes(template: dict[str, Any] | None = None) -> list[tuple[str, str, str, str]]:
    """(event file stem, function logical id, method, resource path) for each Api route (ANY routes have none)."""
    found = []
    for logical_id, resource in (template or load())["Resources"].items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        for event_name, event in resource["Properties"].get("Events", {}).items():
            if event["Type"] != "Api" or event["Properties"]["Method"].upper() == "ANY":
                continue
            found.append((f"{logical_id.removesuffix('Function')}-{event_name}", logical_id,
                          event["Properties"]["Method"].upper(), event["Properties"]["Path"]))
    return found


def _id_fields(all_routes: list[tuple[str, str, str, str]]) -> dict[str, str]:
    """projectId -> projects, agentId -> agents ...: a body field naming an object of a collection."""
    keys = {placeholder_key(path, p) for _, _, _, path in all_routes for p in re.findall(r"\{(\w+)\+?\}", path)}
    fields = {"tenantId": "tenant_id"}
    for key in keys:
        last = key.rsplit(".", 1)[-1]
        if last.endswith("s"):
            stem = re.sub(r"-(\w)", lambda m: m.group(1).upper(), last[:-1])
            fields[f"{stem}Id"] = key
    return fields


def build(template: dict[str, Any] | None = None, document: dict[str, Any] | None = None
          ) -> dict[str, tuple[dict[str, Any], tuple[int, ...]]]:
    """Each event (by file stem) with the status it is written for."""
    if document is None:  # the committed document (scripts/generate passes the one it writes)
        document = json.loads((ROOT / "functions" / "meta" / "openapi.json").read_text())
    all_routes = routes(template)
    examples = _Examples(document, _id_fields(all_routes))
    built = {}
    for name, _logical_id, method, resource_path in all_routes:
        operation = _operation(document, method, resource_path)
        parameters = {}
        for parameter in re.findall(r"\{(\w+)\+?\}", resource_path):
            spec = next((p for p in operation.get("parameters", ()) if p.get("in") == "path"
                         and p.get("name") == parameter), {})
            schema = examples.resolve(spec.get("schema", {}))
            given = spec.get("example", schema.get("examples", [None])[0] if "examples" in schema else None)
            parameters[parameter] = given or "{{%s}}" % placeholder_key(resource_path, parameter, method)
        path = resource_path
        for parameter, value in parameters.items():
            path = path.replace("{%s+}" % parameter, value).replace("{%s}" % parameter, value)
        query = {p["name"]: str(p["example"] if "example" in p else examples.value(p.get("schema", {}), p["name"]))
                 for p in operation.get("parameters", ()) if p.get("in") == "query" and p.get("required")}
        bearer = any("bearerAuth" in scheme for scheme in operation.get("security") or ())
        headers = {}
        if name in USER_SESSION or bearer:
            headers["Authorization"] = "Bearer " + ("{{%s}}" % USER_SESSION[name] if name in USER_SESSION else API_KEY)
        body = ""
        content = (operation.get("requestBody") or {}).get("content", {})
        if "application/json" in content:
            value = examples.value(content["application/json"].get("schema", {}))
            if name in BODY_VALUES:
                value = {**(value or {}), **BODY_VALUES[name]}
            body = json.dumps(value, separators=(",", ":"))
            headers["Content-Type"] = "application/json"
        elif method in ("POST", "PATCH", "PUT"):
            headers["Content-Type"] = "application/json"
        event = proxy_event(method, resource_path, path, body, path_parameters=parameters, query=query,
                            headers=headers)
        built[name] = (event, _expected(name, operation))
    return built


def expected_statuses(template: dict[str, Any] | None = None) -> dict[str, tuple[int, ...]]:
    """The status(es) each event of events/ is written for, by file stem."""
    return {name: status for name, (_event, status) in build(template).items()}


def render(template: dict[str, Any] | None = None, document: dict[str, Any] | None = None) -> dict[Path, str]:
    """Every file of events/ and its text."""
    return {EVENTS_DIR / f"{name}.json": json.dumps(event, indent=2) + "\n"
            for name, (event, _status) in build(template, document).items()}


def obsolete(files: dict[Path, str]) -> list[Path]:
    """Files in events/ that no route of the template writes any more."""
    return sorted(set(EVENTS_DIR.glob("*.json")) - set(files))
