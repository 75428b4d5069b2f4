"""Secrets Manager values cached per container for a few minutes.

Powertools Parameters does this too but imports boto3 (see aws.py); this is the few lines of
it we need. A rotated secret is picked up when its cache entry ages out.

Where the AWS Parameters and Secrets Lambda Extension is attached (settings().secrets_extension_attached),
a secret is read through it, over HTTP on localhost: a cold start then builds no Secrets Manager
client (~25 ms: its model, endpoint rules and the client). The extension needs the function's
AWS_SESSION_TOKEN, which SnapStart functions do not have (their credentials come from the
container): there, and whenever the extension fails, the SDK reads the secret.
"""

from __future__ import annotations

import http.client
import json
import os
import threading
import time
import urllib.parse
from typing import Any

from svc_core.adapters import aws
from svc_core.platform import container, snapshot
from svc_core.platform.config import settings

# The extension is on this machine: a second is long. On a miss it calls Secrets Manager itself.
EXTENSION_TIMEOUT_SECONDS = 1.0

_cache: dict[tuple[Any, str], tuple[float, Any]] = {}   # by (container, secret id)
_lock = threading.Lock()


def get_json_secret(secret_id: str, *, force_fetch: bool = False) -> Any:
    now = time.monotonic()
    cache_key = (container.key(), secret_id)
    hit = _cache.get(cache_key)
    if hit and not force_fetch and now - hit[0] < settings().secrets_cache_seconds:
        return hit[1]
    with _lock:
        # A forced read wants what Secrets Manager holds now: the extension may answer from its own cache.
        raw = None if force_fetch else _from_extension(secret_id)
        if raw is None:
            raw = aws.client("secretsmanager").get_secret_value(SecretId=secret_id)["SecretString"]
        value = json.loads(raw)
        _cache[cache_key] = (now, value)
        return value


def _from_extension(secret_id: str) -> str | None:
    """The secret's string through the extension; None where it is not attached, cannot be used
    (no session token) or fails (then the caller asks Secrets Manager)."""
    cfg = settings()
    token = os.environ.get("AWS_SESSION_TOKEN")
    if not (cfg.secrets_extension_attached and token):
        return None
    # http.client (urllib3 has imported it already): an HTTP library would cost more at start than the call.
    connection = http.client.HTTPConnection("localhost", cfg.secrets_extension_port, timeout=EXTENSION_TIMEOUT_SECONDS)
    try:
        connection.request("GET", "/secretsmanager/get?" + urllib.parse.urlencode({"secretId": secret_id}),
                           headers={"X-Aws-Parameters-Secrets-Token": token})
        response = connection.getresponse()
        body = response.read()
        if response.status == 200:
            return json.loads(body)["SecretString"]
        failure = f"HTTP {response.status}"  # the status only, never a body
    except (OSError, http.client.HTTPException, ValueError, KeyError) as exc:
        failure = type(exc).__name__
    finally:
        connection.close()
    from svc_core.platform.log import logger  # as models/bedrock.py: Powertools only where a line is written
    logger.warning("the secrets extension failed: reading from Secrets Manager",
                   extra={"secret_id": secret_id, "failure": failure})
    return None


@snapshot.forget_on_restore  # no secret read before a snapshot outlives the restore
def clear() -> None:
    _cache.clear()
