"""Amazon Bedrock's Converse API through botocore's `bedrock-runtime` client.

Requests and results are already in Converse shapes, so the adapter passes them through; what
it adds is the model id, usage marked as measured, and the mapping of every failure to one of two
errors whose messages are ours (the AWS error text is logged by code only, never shown):

- ModelThrottled (429, MODEL_THROTTLED, Retry-After: the answer's own, at most 60 s, else 10 s): the
  model is busy or a quota is exhausted; retrying later may work.
- ModelUnavailable (502, MODEL_UNAVAILABLE, details.reason): the model refused the request, failed,
  timed out, is not available to this deployment (access, unknown id), or AWS refused the
  deployment's credentials (reason credentials: an unknown, expired or badly signed key).

One total time budget per call, as the HTTP providers have (http_api.py): the client reads for at
most the budget and botocore does not retry; this module retries a throttled call, a failing service
or a refused connection while at least a second of the budget is left (MAX_ATTEMPTS in all), so a
model that hangs is given up when the budget is spent, not after read timeout x attempts.

converse_stream decodes the response's AWS event stream (botocore's EventStream) into the
interface's events; an exception frame in the middle of a stream raises the same errors.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterator
from typing import Any

from botocore.eventstream import ParserError as EventStreamParserError
from botocore.exceptions import ClientError, HTTPClientError, NoCredentialsError, ReadTimeoutError
from botocore.exceptions import ConnectionError as BotocoreConnectionError
from urllib3.exceptions import HTTPError as Urllib3Error

from svc_core.adapters.models.base import (
    DEFAULT_BUDGET_SECONDS,
    FIRST_BACKOFF_SECONDS,
    MAX_ATTEMPTS,
    Budget,
    ConverseRequest,
    ConverseResult,
    Received,
    StreamEvent,
    retry_after,
    usage_of,
)
from svc_core.platform.errors import ModelThrottled, ModelUnavailable

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
_CREDENTIALS = ("credentials", "The model provider refused this deployment's credentials.")
for _code in ("UnrecognizedClientException", "InvalidSignatureException", "ExpiredTokenException", "ExpiredToken",
              "SignatureDoesNotMatch", "IncompleteSignature", "InvalidClientTokenId",
              "MissingAuthenticationTokenException"):
    _UNAVAILABLE[_code] = _CREDENTIALS
_RETRIED = _THROTTLED | {"InternalServerException", "ServiceUnavailableException"}


class RealModelForbidden(RuntimeError):
    """A real model was asked for where SVC_FORBID_REAL_MODEL=1 (the tests)."""


def forbid_if_tests() -> None:
    if os.environ.get("SVC_FORBID_REAL_MODEL") == "1":
        raise RealModelForbidden("SVC_FORBID_REAL_MODEL=1: the real model provider (Bedrock) may not be used here")


def _normalised(code: str | None) -> str:
    """Stream exception frames name errors in lower camel case (throttlingException)."""
    return (code[:1].upper() + code[1:]) if code else ""


def model_error(code: str | None, model_id: str, wait: float | None = None) -> ModelThrottled | ModelUnavailable:
    """Our error for an AWS error code (the code is logged; its message never leaves the process);
    wait: the answer's Retry-After, if it had one."""
    from svc_core.platform.log import logger
    code = _normalised(code)
    logger.warning("model call failed", extra={"provider": "bedrock", "modelId": model_id, "awsErrorCode": code})
    if code in _THROTTLED:
        return ModelThrottled(details={"model": model_id}, retry_after_seconds=retry_after(wait))
    reason, message = _UNAVAILABLE.get(code, ("model_error", "The model failed while answering."))
    return ModelUnavailable(message, {"model": model_id, "reason": reason})


def _retry_after(exc: ClientError) -> float | None:
    """The Retry-After (seconds) of a refused call's answer, if it had one."""
    headers = (exc.response.get("ResponseMetadata") or {}).get("HTTPHeaders") or {}
    try:
        return float(headers["retry-after"]) if "retry-after" in headers else None
    except (TypeError, ValueError):
        return None


class BedrockProvider:
    name = "bedrock"

    def __init__(self, model_id: str, client: Any = None, *, budget_seconds: float = DEFAULT_BUDGET_SECONDS,
                 endpoint_url: str | None = None, shown_as: str | None = None) -> None:
        """client: a bedrock-runtime client (tests pass a stubbed one); by default one reading for at
        most the budget, at Bedrock's regional endpoint or endpoint_url (a server that speaks its API;
        the registry has already checked that the tests may reach it). shown_as: the id results and
        errors name (the registry's `bedrock:model`), model_id going in the request."""
        self.budget_seconds = float(budget_seconds)
        self._endpoint_url, self._own_client = endpoint_url, client is None
        if client is None:
            if endpoint_url is None:
                forbid_if_tests()
            from svc_core.adapters import aws
            client = aws.model_client("bedrock-runtime", self.budget_seconds, endpoint_url)
        self.model, self.model_id = model_id, shown_as or model_id
        self._client = client

    def _arguments(self, request: ConverseRequest) -> dict[str, Any]:
        return {"modelId": self.model, **{k: request[k] for k in _REQUEST_KEYS if request.get(k)}}

    def _call(self, operation: str, request: ConverseRequest) -> Any:
        """One operation of the client, retried within the budget (the module's docstring)."""
        budget = Budget(self.budget_seconds)
        attempt = 0
        while True:
            attempt += 1
            try:
                return getattr(self._client_for(budget), operation)(**self._arguments(request))
            except ClientError as exc:
                code = _normalised(exc.response.get("Error", {}).get("Code"))
                error: ModelThrottled | ModelUnavailable = model_error(code, self.model_id, _retry_after(exc))
                retried = code in _RETRIED
            except ReadTimeoutError as exc:
                raise self._failure("timeout", "The model took too long to answer.", exc) from None
            except NoCredentialsError as exc:
                raise self._failure(*_CREDENTIALS, exc) from None
            except (BotocoreConnectionError, HTTPClientError) as exc:
                error, retried = self._unreachable(exc), True
            wait = FIRST_BACKOFF_SECONDS * 2 ** (attempt - 1)
            if not retried or attempt == MAX_ATTEMPTS or budget.left() - wait < 1.0:
                raise error from None   # AWS's own text stays out (logged by code only)
            time.sleep(wait)

    def _client_for(self, budget: Budget) -> Any:
        """The client, or where the request's deadline leaves less than the budget, one that reads for
        at most what is left (whole seconds, so a few clients at most; made once each per container)."""
        left = budget.left()
        if not self._own_client or left >= self.budget_seconds - 0.5:
            return self._client
        from svc_core.adapters import aws
        return aws.model_client("bedrock-runtime", float(max(1, math.ceil(left))), self._endpoint_url)

    def _failure(self, reason: str, message: str, exc: Exception) -> ModelUnavailable:
        from svc_core.platform.log import logger
        logger.warning("model call failed", extra={"provider": "bedrock", "modelId": self.model_id,
                                                   "reason": reason, "error": type(exc).__name__})
        return ModelUnavailable(message, {"model": self.model_id, "reason": reason})

    def _unreachable(self, exc: Exception) -> ModelUnavailable:
        from svc_core.platform.log import logger
        logger.warning("model call failed", extra={"provider": "bedrock", "modelId": self.model_id,
                                                   "error": type(exc).__name__})
        return ModelUnavailable("The model service did not answer; try again later.",
                                {"model": self.model_id, "reason": "unreachable"})

    def converse(self, request: ConverseRequest) -> ConverseResult:
        answer = self._call("converse", request)
        return ConverseResult(message=answer["output"]["message"], stop_reason=answer["stopReason"],
                              usage=usage_of(answer.get("usage"), estimated=False), model_id=self.model_id,
                              provider=self.name, metrics=dict(answer.get("metrics") or {}))

    def converse_stream(self, request: ConverseRequest) -> Iterator[StreamEvent]:
        answer = self._call("converse_stream", request)
        return self._events(answer["stream"], request)

    def _events(self, stream: Any, request: ConverseRequest | None = None) -> Iterator[StreamEvent]:
        received = Received(self.model_id, self.name)   # what a failure had received is billed
        try:
            for event in stream:
                if "metadata" in event:
                    metadata = event["metadata"]
                    event = {"metadata": {"usage": usage_of(metadata.get("usage"), estimated=False),
                                          "metrics": dict(metadata.get("metrics") or {})}}
                    received.report(event["metadata"]["usage"])
                elif "contentBlockDelta" in event:
                    delta = event["contentBlockDelta"].get("delta") or {}
                    received.streamed(delta.get("text") or (delta.get("toolUse") or {}).get("input"))
                yield event
        except ClientError as exc:  # an exception frame (EventStreamError is a ClientError)
            raise received.attach(model_error(exc.response.get("Error", {}).get("Code"), self.model_id),
                                  request) from None
        except ReadTimeoutError as exc:  # silent for the whole budget in the middle of the answer
            raise received.attach(self._failure("timeout", "The model took too long to answer.", exc),
                                  request) from None
        except (BotocoreConnectionError, HTTPClientError, Urllib3Error) as exc:  # the connection broke mid-stream
            raise received.attach(self._unreachable(exc), request) from None
        except EventStreamParserError as exc:  # a frame that fails its checksums or lengths
            from svc_core.platform.log import logger
            logger.warning("model stream corrupt", extra={"provider": "bedrock", "modelId": self.model_id,
                                                          "error": type(exc).__name__})
            raise received.attach(ModelUnavailable("The model's answer arrived damaged; try again.",
                                                   {"model": self.model_id, "reason": "bad_stream"}),
                                  request) from None
        finally:
            close = getattr(stream, "close", None)
            if close:
                close()
