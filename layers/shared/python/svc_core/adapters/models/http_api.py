"""The HTTP side of the providers that speak JSON over HTTP (openai.py, anthropic.py).

Plain httpx, one client per provider: no SDK (the official ones load pydantic models of their
whole API at import and bring their own retry and timeout policies, which this module replaces
with one budget).

One total time budget per call (DEFAULT_BUDGET_SECONDS, a constructor argument of each provider):
connecting, sending, waiting for the answer, the retries and their waits all come out of it.

- Each attempt's connect / write / read timeouts are what is left of the budget when it starts.
- converse: a timer shuts the connection's socket when the budget runs out while the body is read,
  so a server that trickles its answer is given up too, not only one that is silent.
- converse_stream: the budget covers everything up to the answer's headers, then each silence of
  the stream (a stream that keeps sending is a long answer being written, and is let run).
- Retried, while the budget allows and at most MAX_ATTEMPTS times: a connection refused or reset
  before anything was sent, 429 (after its Retry-After / retry-after-ms, if it fits in what is
  left), 500, 502, 503, 504 and 529 (Anthropic's "overloaded"). A 429 whose wait does not fit
  raises ModelThrottled with that wait as its Retry-After.

Failures map to the errors bedrock.py raises, with the provider's text logged by code only (it
can quote part of the key) and never shown:

  429, 529 (after the retries)  ModelThrottled (Retry-After: the provider's, at most 60 s, else 10 s)
  401                           ModelUnavailable reason credentials (the key is wrong or revoked)
  403                           not_enabled (the key may not use this model); OpenAI's 429
                                insufficient_quota too (the account's credit is spent: no retry)
  404                           not_found (no such model, or a wrong base URL)
  400, 413, 422                 invalid_request
  408, the budget spent         timeout
  other 5xx (after retries)     service_error
  refused, reset, no DNS name   unreachable
  an answer that is not JSON    model_error; a stream broken in the middle: bad_stream
"""

from __future__ import annotations

import email.utils
import json
import random
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from svc_core.adapters.models.base import FIRST_BACKOFF_SECONDS, MAX_ATTEMPTS, Budget, estimated_usage, retry_after
from svc_core.platform.errors import ModelThrottled, ModelUnavailable

__all__ = ["JsonOverHttp", "estimated_usage", "retry_after_seconds"]

_RETRIED_STATUSES = {429, 500, 502, 503, 504, 529}
_THROTTLED_STATUSES = {429, 529}
_NO_RETRY_CODES = {"insufficient_quota"}   # OpenAI's 429 for an account without credit

_MESSAGES = {
    "credentials": "The model provider refused this deployment's credentials (its API key).",
    "not_enabled": "The model is not enabled for this deployment's account at the model provider.",
    "not_found": "The model is not available at this deployment's model provider.",
    "invalid_request": "The model refused the request (for example, it is too long for the model or a tool "
                       "definition is not valid).",
    "timeout": "The model took too long to answer.",
    "service_error": "The model service failed; try again later.",
    "unreachable": "The model service did not answer; try again later.",
    "model_error": "The model failed while answering.",
    "bad_stream": "The model's answer arrived damaged; try again.",
}
_REASON_OF_STATUS = {400: "invalid_request", 401: "credentials", 403: "not_enabled", 404: "not_found",
                     408: "timeout", 413: "invalid_request", 422: "invalid_request"}


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    """The wait a 429 / 503 asks for: retry-after-ms (OpenAI), else Retry-After (seconds or a date)."""
    try:
        if "retry-after-ms" in headers:
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        if value.strip().replace(".", "", 1).isdigit():
            return float(value)
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    except (ValueError, TypeError):
        return None


def _shut(sock: socket.socket) -> None:
    """End the connection under a read blocked in another thread: shutdown on a duplicate of its
    descriptor (the read then sees the end of the stream; closing the socket would not wake it)."""
    try:
        duplicate = socket.fromfd(sock.fileno(), sock.family, sock.type)
        try:
            duplicate.shutdown(socket.SHUT_RDWR)
        finally:
            duplicate.close()
    except OSError:
        pass  # already closed


class JsonOverHttp:
    """POSTs a JSON body to one URL for one provider and model; the providers translate the shapes."""

    def __init__(self, provider: str, model_id: str, url: str, headers: dict[str, str], budget_seconds: float,
                 client: httpx.Client | None = None) -> None:
        self.provider, self.model_id, self.url = provider, model_id, url
        self.headers = {"content-type": "application/json", "accept": "application/json", **headers}
        self.budget_seconds = float(budget_seconds)
        # No timeout of the client's own: each attempt gets what is left of the call's budget.
        self._client = client or httpx.Client(timeout=None, follow_redirects=False)

    # ---- errors ----

    def failure(self, reason: str, **log: Any) -> ModelUnavailable:
        from svc_core.platform.log import logger
        logger.warning("model call failed", extra={"provider": self.provider, "modelId": self.model_id,
                                                   "reason": reason, **log})
        return ModelUnavailable(_MESSAGES[reason], {"model": self.model_id, "reason": reason})

    def throttled(self, wait: float | None, **log: Any) -> ModelThrottled:
        from svc_core.platform.log import logger
        logger.warning("model call throttled", extra={"provider": self.provider, "modelId": self.model_id, **log})
        return ModelThrottled(details={"model": self.model_id}, retry_after_seconds=retry_after(wait))

    def _transport_failure(self, exc: Exception, budget: Budget) -> ModelUnavailable:
        """timeout when the budget ran out (a timeout, or the connection shut at the deadline), else unreachable."""
        if isinstance(exc, httpx.TimeoutException) or budget.spent():
            return self.failure("timeout", error=type(exc).__name__)
        return self.failure("unreachable", error=type(exc).__name__)

    def _error_code(self, response: httpx.Response) -> str | None:
        """The provider's error code or type ({"error": {"code" | "type"}}), for the log and the mapping."""
        try:
            error = json.loads(response.read()).get("error")
        except (ValueError, AttributeError, httpx.HTTPError):
            return None
        if not isinstance(error, dict):
            return None
        code = error.get("code") or error.get("type")
        return str(code) if code is not None else None

    def _status_failure(self, response: httpx.Response, code: str | None, wait: float | None
                        ) -> ModelThrottled | ModelUnavailable:
        status = response.status_code
        if code in _NO_RETRY_CODES:
            return self.failure("not_enabled", status=status, providerCode=code)
        if status in _THROTTLED_STATUSES:
            return self.throttled(wait, status=status, providerCode=code)
        reason = _REASON_OF_STATUS.get(status) or ("service_error" if status >= 500 else "model_error")
        return self.failure(reason, status=status, providerCode=code)

    # ---- the call ----

    def send(self, body: dict[str, Any], stream: bool) -> tuple[httpx.Response, Budget]:
        """The provider's 2xx answer (its body not read yet) and the budget left; every failure raised."""
        budget = Budget(self.budget_seconds)
        headers = {**self.headers, "accept": "text/event-stream"} if stream else self.headers
        attempt = 0
        while True:
            attempt += 1
            left = budget.left()
            if left <= 0:
                raise self.failure("timeout", attempts=attempt - 1)
            request = self._client.build_request("POST", self.url, json=body, headers=headers,
                                                 timeout=httpx.Timeout(left))
            try:
                response = self._client.send(request, stream=True)
            except httpx.ConnectError as exc:  # nothing was sent: another attempt is harmless
                wait = FIRST_BACKOFF_SECONDS * 2 ** (attempt - 1) * random.uniform(0.8, 1.2)
                if attempt < MAX_ATTEMPTS and wait < budget.left():
                    time.sleep(wait)
                    continue
                raise self._transport_failure(exc, budget) from None
            except httpx.HTTPError as exc:
                raise self._transport_failure(exc, budget) from None
            if response.status_code < 300:
                return response, budget
            try:
                code = self._error_code(response)
            finally:
                response.close()
            wait = retry_after_seconds(response.headers)
            if response.status_code in _RETRIED_STATUSES and code not in _NO_RETRY_CODES and attempt < MAX_ATTEMPTS:
                pause = wait if wait is not None else FIRST_BACKOFF_SECONDS * 2 ** (attempt - 1)
                if pause < budget.left():
                    time.sleep(pause)
                    continue
            raise self._status_failure(response, code, wait) from None

    def call(self, body: dict[str, Any]) -> dict[str, Any]:
        """The JSON answer, read whole within the call's budget."""
        response, budget = self.send(body, stream=False)
        try:
            with self._deadline(response, budget):
                try:
                    raw = response.read()
                except httpx.HTTPError as exc:
                    raise self._transport_failure(exc, budget) from None
        finally:
            response.close()
        try:
            answer = json.loads(raw)
        except ValueError:
            raise self.failure("model_error", error="not JSON") from None
        if not isinstance(answer, dict):
            raise self.failure("model_error", error="not a JSON object")
        return answer

    @contextmanager
    def _deadline(self, response: httpx.Response, budget: Budget) -> Iterator[None]:
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        timer = threading.Timer(budget.left(), _shut, (sock,)) if sock is not None else None
        if timer is not None:
            timer.daemon = True
            timer.start()
        try:
            yield
        finally:
            if timer is not None:
                timer.cancel()

    def events(self, body: dict[str, Any]) -> Iterator[tuple[str, str]]:
        """Send at once (failures before the stream raise here), then the stream's (event, data) pairs."""
        response, _ = self.send(body, stream=True)
        return self._sse(response)

    def _sse(self, response: httpx.Response) -> Iterator[tuple[str, str]]:
        """Server-sent events: `event:` and `data:` lines, a blank line ending each event."""
        event, data = "", []
        try:
            for line in response.iter_lines():
                if not line:
                    if data:
                        yield event or "message", "\n".join(data)
                    event, data = "", []
                    continue
                name, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if name == "event":
                    event = value
                elif name == "data":
                    data.append(value)
            if data:
                yield event or "message", "\n".join(data)
        except httpx.TimeoutException as exc:  # a silence longer than what was left of the budget
            raise self.failure("timeout", error=type(exc).__name__) from None
        except httpx.HTTPError as exc:  # the connection broke in the middle of the answer
            raise self.failure("bad_stream", error=type(exc).__name__) from None
        finally:
            response.close()

    def close(self) -> None:
        self._client.close()
