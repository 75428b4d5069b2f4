"""Amazon Bedrock's Converse API through botocore's `bedrock-runtime` client.

Requests and results are already in Converse shapes, so the adapter passes them through; what
it adds is the model id, usage marked as measured, and the mapping of every failure to one of two
errors whose messages are ours (the AWS error text is logged by code only, never shown):

- ModelThrottled (429, MODEL_THROTTLED, Retry-After): the model is busy or a quota is exhausted;
  retrying later may work. botocore has already retried (standard mode, 3 attempts).
- ModelUnavailable (502, MODEL_UNAVAILABLE, details.reason): the model refused the request, failed,
  timed out, or is not available to this deployment (access, unknown id).

converse_stream decodes the response's AWS event stream (botocore's EventStream) into the
interface's events; an exception frame in the middle of a stream raises the same errors.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from botocore.eventstream import ParserError as EventStreamParserError
from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotocoreConnectionError
from urllib3.exceptions import HTTPError as Urllib3Error

from svc_core.adapters.models.base import ConverseRequest, ConverseResult, StreamEvent, usage_of
from svc_core.platform.errors import ModelThrottled, ModelUnavailable

READ_TIMEOUT_SECONDS = 120      # a long answer takes tens of seconds
_REQUEST_KEYS = ("messages", "system", "toolConfig", "inferenceConfig")

_THROTTLED = {"ThrottlingException", "ServiceQuotaExceededException", "ModelNotReadyException",
              "TooManyRequestsException"}
# AWS error code -> (details.reason, the message shown)
_UNAVAILABLE: dict[str, tuple[str, str]] = {
    "ValidationException": ("invalid_request", "The model refused the request (for example, it is too long "
                                               "for the model or a tool definition is not valid)."),
    "ModelErrorException": ("model_error", "The model failed while answering."),
    "ModelStreamErrorException": ("model_error", "The model failed while answering."),
    "ModelTimeoutException": ("timeout", "The model took too long to answer."),
    "AccessDeniedException": ("not_enabled", "The model is not enabled for this deployment."),
    "ResourceNotFoundException": ("not_found", "The model is not available in this deployment's region."),
    "InternalServerException": ("service_error", "The model service failed; try again later."),
    "ServiceUnavailableException": ("service_error", "The model service failed; try again later."),
}


class RealModelForbidden(RuntimeError):
    """A real model was asked for where SVC_FORBID_REAL_MODEL=1 (the tests)."""


def forbid_if_tests() -> None:
    if os.environ.get("SVC_FORBID_REAL_MODEL") == "1":
        raise RealModelForbidden("SVC_FORBID_REAL_MODEL=1: the real model provider (Bedrock) may not be used here")


def _normalised(code: str | None) -> str:
    """Stream exception frames name errors in lower camel case (throttlingException)."""
    return (code[:1].upper() + code[1:]) if code else ""


def model_error(code: str | None, model_id: str) -> ModelThrottled | ModelUnavailable:
    """Our error for an AWS error code (the code is logged; its message never leaves the process)."""
    from svc_core.platform.log import logger
    code = _normalised(code)
    logger.warning("model call failed", extra={"provider": "bedrock", "modelId": model_id, "awsErrorCode": code})
    if code in _THROTTLED:
        return ModelThrottled(details={"model": model_id})
    reason, message = _UNAVAILABLE.get(code, ("model_error", "The model failed while answering."))
    return ModelUnavailable(message, {"model": model_id, "reason": reason})


class BedrockProvider:
    name = "bedrock"

    def __init__(self, model_id: str, client: Any = None) -> None:
        """client: a bedrock-runtime client (tests pass a stubbed one); by default the container's."""
        if client is None:
            forbid_if_tests()
            from svc_core.adapters import aws
            client = aws.client("bedrock-runtime", READ_TIMEOUT_SECONDS)
        self.model_id = model_id
        self._client = client

    def _arguments(self, request: ConverseRequest) -> dict[str, Any]:
        return {"modelId": self.model_id, **{k: request[k] for k in _REQUEST_KEYS if request.get(k)}}

    def _unreachable(self, exc: Exception) -> ModelUnavailable:
        from svc_core.platform.log import logger
        logger.warning("model call failed", extra={"provider": "bedrock", "modelId": self.model_id,
                                                   "error": type(exc).__name__})
        return ModelUnavailable("The model service did not answer; try again later.",
                                {"model": self.model_id, "reason": "unreachable"})

    def converse(self, request: ConverseRequest) -> ConverseResult:
        try:
            answer = self._client.converse(**self._arguments(request))
        except ClientError as exc:
            raise model_error(exc.response.get("Error", {}).get("Code"), self.model_id) from None
        except (BotocoreConnectionError, HTTPClientError) as exc:
            raise self._unreachable(exc) from None
        return ConverseResult(message=answer["output"]["message"], stop_reason=answer["stopReason"],
                              usage=usage_of(answer.get("usage"), estimated=False), model_id=self.model_id,
                              provider=self.name, metrics=dict(answer.get("metrics") or {}))

    def converse_stream(self, request: ConverseRequest) -> Iterator[StreamEvent]:
        try:
            answer = self._client.converse_stream(**self._arguments(request))
        except ClientError as exc:
            raise model_error(exc.response.get("Error", {}).get("Code"), self.model_id) from None
        except (BotocoreConnectionError, HTTPClientError) as exc:
            raise self._unreachable(exc) from None
        return self._events(answer["stream"])

    def _events(self, stream: Any) -> Iterator[StreamEvent]:
        try:
            for event in stream:
                if "metadata" in event:
                    metadata = event["metadata"]
                    event = {"metadata": {"usage": usage_of(metadata.get("usage"), estimated=False),
                                          "metrics": dict(metadata.get("metrics") or {})}}
                yield event
        except ClientError as exc:  # an exception frame (EventStreamError is a ClientError)
            raise model_error(exc.response.get("Error", {}).get("Code"), self.model_id) from None
        except (BotocoreConnectionError, HTTPClientError, Urllib3Error) as exc:  # the connection broke mid-stream
            raise self._unreachable(exc) from None
        except EventStreamParserError as exc:  # a frame that fails its checksums or lengths
            from svc_core.platform.log import logger
            logger.warning("model stream corrupt", extra={"provider": "bedrock", "modelId": self.model_id,
                                                          "error": type(exc).__name__})
            raise ModelUnavailable("The model's answer arrived damaged; try again.",
                                   {"model": self.model_id, "reason": "bad_stream"}) from None
        finally:
            close = getattr(stream, "close", None)
            if close:
                close()
