"""events/<Function>-<Event>.json: one API Gateway proxy event (REST API, payload format 1.0) per
route of template.yaml, for the tests (which set credentials, ids and bodies on a copy) and for
`sam local invoke -e`.

The shape is SAM CLI's sample (`sam local generate-event apigateway aws-proxy`, stage v1, a
`{"name":"Example"}` body on POST/PATCH/PUT), written down here once so that regenerating the files
needs no SAM CLI. The e2e tests compare the local gateway's events with these files.

Written by scripts/generate (with openapi.json); do not edit the files by hand.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from devstack.template import ROOT, load

EVENTS_DIR = ROOT / "events"
STAGE = "v1"
SAMPLE_IDS = {"id": "proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA", "run_id": "run_01JD2Q7ZB6V8S3K4X9W2M5N7PA",
              "proxy": "no/such/route"}
SAMPLE_BODY = '{"name":"Example"}'
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


def proxy_event(method: str, resource: str, path: str, body: str) -> dict[str, Any]:
    """The event API Gateway would hand the function for this request (SAM CLI's sample values)."""
    return {
        "body": base64.b64encode(body.encode()).decode(),
        "resource": resource,
        "path": path,
        "httpMethod": method,
        "isBase64Encoded": True,
        "queryStringParameters": {},
        "multiValueQueryStringParameters": {"foo": ["bar"]},
        "pathParameters": {"proxy": path},
        "stageVariables": {"baz": "qux"},
        "headers": dict(_HEADERS),
        "multiValueHeaders": {name: list(values) for name, values in _MULTI_VALUE_HEADERS.items()},
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


def render(template: dict[str, Any] | None = None) -> dict[Path, str]:
    """Every file of events/ and its text, from the template's Api routes (ANY routes have none)."""
    resources = (template or load())["Resources"]
    files = {}
    for logical_id, resource in resources.items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        for event_name, event in resource["Properties"].get("Events", {}).items():
            if event["Type"] != "Api" or event["Properties"]["Method"].upper() == "ANY":
                continue
            method, resource_path = event["Properties"]["Method"].upper(), event["Properties"]["Path"]
            path = resource_path
            for name, value in SAMPLE_IDS.items():
                path = path.replace("{%s+}" % name, value).replace("{%s}" % name, value)
            body = SAMPLE_BODY if method in ("POST", "PATCH", "PUT") else ""
            name = f"{logical_id.removesuffix('Function')}-{event_name}.json"
            files[EVENTS_DIR / name] = json.dumps(proxy_event(method, resource_path, path, body), indent=2) + "\n"
    return files


def obsolete(files: dict[Path, str]) -> list[Path]:
    """Files in events/ that no route of the template writes any more."""
    return sorted(set(EVENTS_DIR.glob("*.json")) - set(files))
