"""CloudFormation custom resource: fails a deploy that offers a model without a price.

On Create and Update the resource's properties (the stack's ModelProvider, ModelId,
ModelAllowedIds and ModelFallbackId) go through svc_core/domain/metering.py's check_models: an
unknown provider or an unpriced model answers FAILED with the reason, so the stack does not create
or update (the reason is in its events). Delete does nothing.
"""

from __future__ import annotations

import json
import urllib.request
from types import SimpleNamespace
from typing import Any

from svc_core.adapters.models.registry import ModelConfigurationError
from svc_core.domain import metering
from svc_core.platform.log import logger


def _respond(event: dict[str, Any], status: str, reason: str = "") -> None:
    body = json.dumps({
        "Status": status, "Reason": (reason or status)[:1000], "PhysicalResourceId": "model-check",
        "StackId": event["StackId"], "RequestId": event["RequestId"], "LogicalResourceId": event["LogicalResourceId"],
    }).encode()
    request = urllib.request.Request(event["ResponseURL"], data=body, method="PUT",
                                     headers={"Content-Type": "", "Content-Length": str(len(body))})
    urllib.request.urlopen(request, timeout=10).close()


def model_settings(properties: dict[str, Any]) -> SimpleNamespace:
    """The model settings the deploy would give the functions (template.yaml's Globals)."""
    return SimpleNamespace(model_provider=properties.get("ModelProvider", ""), model_id=properties.get("ModelId", ""),
                           model_allowed_ids=properties.get("ModelAllowedIds", ""),
                           model_fallback_id=properties.get("ModelFallbackId", ""))


def lambda_handler(event: dict[str, Any], context: Any) -> None:
    try:
        if event["RequestType"] in ("Create", "Update"):
            metering.check_models(model_settings(event["ResourceProperties"]))
        _respond(event, "SUCCESS")
    except ModelConfigurationError as exc:
        logger.error("model check refused the deploy", extra={"reason": str(exc)})
        _respond(event, "FAILED", str(exc))
    except Exception:
        logger.exception("model check failed")
        _respond(event, "FAILED", "could not check the models; see the function's logs")
