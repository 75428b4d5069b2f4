"""The AWS Parameters and Secrets Lambda Extension, emulated: a small HTTP server on loopback that
answers GET /secretsmanager/get?secretId=... from the emulator's Secrets Manager, as the extension
answers from AWS's (the GetSecretValue JSON). Like the extension, it refuses a request whose
X-Aws-Parameters-Secrets-Token header is not the function's session token.

The local stack and the bench start one, so the functions read their secrets as a deployment with
the extension's layer attached does (template.yaml's SecretsExtensionLayerArn). It keeps no cache
of its own: every request reads the emulator (the functions cache per container anyway).
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

import botocore.session
from botocore.exceptions import ClientError

from devstack.loopback_server import LoopbackHTTPServer
from devstack.template import REGION

TOKEN_HEADER = "X-Aws-Parameters-Secrets-Token"


class SecretsExtension:
    def __init__(self, endpoint: str, session_token: str | None = None) -> None:
        self.session_token = session_token or secrets.token_urlsafe(24)
        self._client = botocore.session.get_session().create_client(
            "secretsmanager", region_name=REGION, endpoint_url=endpoint,
            aws_access_key_id="local", aws_secret_access_key="local")
        self._server: LoopbackHTTPServer | None = None
        self.requests = 0  # answered with a secret (the tests count them)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def environment(self) -> dict[str, str]:
        """What a function with the layer attached has: the template's setting, the extension's
        port and a session token (Lambda gives one to functions without SnapStart)."""
        return {"SECRETS_EXTENSION_ATTACHED": "true", "PARAMETERS_SECRETS_EXTENSION_HTTP_PORT": str(self.port),
                "AWS_SESSION_TOKEN": self.session_token}

    def start(self) -> SecretsExtension:
        extension = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                extension._answer(self)

            def log_message(self, *args: Any) -> None:  # quiet: the functions log their own requests
                pass

        self._server = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, name="secrets-extension", daemon=True).start()
        return self

    def _answer(self, request: BaseHTTPRequestHandler) -> None:
        url = urlsplit(request.path)
        given = request.headers.get(TOKEN_HEADER) or ""
        if not hmac.compare_digest(given.encode(), self.session_token.encode()):
            return _send(request, 401, {"message": "the token header is missing or not the session token"})
        secret_id = parse_qs(url.query).get("secretId", [""])[0]
        if url.path != "/secretsmanager/get" or not secret_id:
            return _send(request, 400, {"message": "GET /secretsmanager/get?secretId=..."})
        try:
            answer = self._client.get_secret_value(SecretId=secret_id)
        except ClientError as exc:
            return _send(request, 400, {"message": exc.response["Error"]["Code"]})
        answer.pop("ResponseMetadata", None)
        self.requests += 1
        _send(request, 200, answer)

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def _send(request: BaseHTTPRequestHandler, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body, default=str).encode()  # default: CreatedDate, a datetime
    request.send_response(status)
    request.send_header("Content-Type", "application/json")
    request.send_header("Content-Length", str(len(data)))
    request.end_headers()
    request.wfile.write(data)
