"""CloudFormation custom resource: puts the first JWT signing key into its secret.

On Create (and Update), a key set without an active key gets one; an existing key set is
left alone, so redeploying never invalidates issued tokens. Delete does nothing (the secret
goes with the stack). Rotation later is scripts/ops.py's job.
"""

from __future__ import annotations

from typing import Any

from svc_core.auth import signing_keys
from svc_core.platform.custom_resource import respond
from svc_core.platform.log import logger


def lambda_handler(event: dict[str, Any], context: Any) -> None:
    try:
        if event["RequestType"] in ("Create", "Update"):
            added = signing_keys.ensure_active_key(event["ResourceProperties"]["SecretId"])
            logger.info("signing key set checked", extra={"key_added": added})
        respond(event, "SUCCESS", "signing-keys")
    except Exception:
        logger.exception("signing key initialisation failed")
        respond(event, "FAILED", "signing-keys", "could not initialise the signing keys; see the function's logs")
