"""CloudFormation custom resource: fails a deploy that offers a model without a price.

On Create and Update the resource's properties (the stack's ModelProvider, ModelId,
ModelAllowedIds and ModelFallbackId) go through svc_core/domain/metering.py's check_models: an
unknown provider or an unpriced model answers FAILED with the reason, so the stack does not create
or update (the reason is in its events). Delete does nothing.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from svc_core.adapters.models.registry import ModelConfigurationError
from svc_core.domain import metering
from svc_core.platform.custom_resource import respond
from svc_core.platform.log import logger


def model_settings(properties: dict[str, Any]) -> SimpleNamespace:
    """The model settings the deploy would give the functions (template.yaml's Globals)."""
    return SimpleNamespace(model_provider=properties.get("ModelProvider", ""), model_id=properties.get("ModelId", ""),
                           model_allowed_ids=properties.get("ModelAllowedIds", ""),
                           model_fallback_id=properties.get("ModelFallbackId", ""))


def lambda_handler(event: dict[str, Any], context: Any) -> None:
    try:
        if event["RequestType"] in ("Create", "Update"):
            metering.check_models(model_settings(event["ResourceProperties"]))
        respond(event, "SUCCESS", "model-check")
    except ModelConfigurationError as exc:
        logger.error("model check refused the deploy", extra={"reason": str(exc)})
        respond(event, "FAILED", "model-check", str(exc))
    except Exception:
        logger.exception("model check failed")
        respond(event, "FAILED", "model-check", "could not check the models; see the function's logs")
