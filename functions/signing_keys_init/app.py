"""CloudFormation custom resource: puts the first JWT signing key into its secret.

On Create (and Update), a key set without an active key gets one; an existing key set is
left alone, so redeploying never invalidates issued tokens. Delete does nothing (the secret
goes with the stack). Rotation later is scripts/ops.py's job.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from svc_core.auth import signing_keys
from svc_core.platform.log import logger


def _respond(event: dict[str, Any], status: str, reason: str = "") -> None:
    body = json.dumps({
        "Status": status, "Reason": reason or status, "PhysicalResourceId": "signing-keys",
        "StackId": event["StackId"], "RequestId": event["RequestId"], "LogicalResourceId": event["LogicalResourceId"],
    }).encode()
    request = urllib.request.Request(event["ResponseURL"], data=body, method="PUT",
                                     headers={"Content-Type": "", "Content-Length": str(len(body))})
    urllib.request.urlopen(request, timeout=10).close()


def lambda_handler(event: dict[str, Any], context: Any) -> None:
    try:
        if event["RequestType"] in ("Create", "Update"):
            added = signing_keys.ensure_active_key(event["ResourceProperties"]["SecretId"])
            logger.info("signing key set checked", extra={"key_added": added})
        _respond(event, "SUCCESS")
    except Exception:
        logger.exception("signing key initialisation failed")
        _respond(event, "FAILED", "could not initialise the signing keys; see the function's logs")
