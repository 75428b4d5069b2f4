"""Errors of the API: each has a code, an HTTP status and optional details.

Raising one anywhere below a handler gives the error envelope with that code; anything else
becomes a 500 INTERNAL_ERROR whose body says nothing of the cause.
"""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    code = "INTERNAL_ERROR"
    status = 500
    default_message = "The server failed to handle the request."

    def __init__(self, message: str | None = None, details: dict[str, Any] | None = None,
                 headers: dict[str, str] | None = None) -> None:
        self.message = message or self.default_message
        self.details = details or {}
        self.headers = headers or {}
        super().__init__(self.message)


class ValidationFailed(ServiceError):
    code, status, default_message = "VALIDATION_ERROR", 400, "The request is not valid."


class Unauthorized(ServiceError):
    code, status, default_message = "UNAUTHORIZED", 401, "Missing, invalid or expired credential."


class Forbidden(ServiceError):
    code, status, default_message = "FORBIDDEN", 403, "The credential may not do this."


class NotFound(ServiceError):
    code, status, default_message = "RESOURCE_NOT_FOUND", 404, "The resource does not exist."


class MethodNotAllowed(ServiceError):
    code, status, default_message = "METHOD_NOT_ALLOWED", 405, "The method is not allowed on this path."


class Conflict(ServiceError):
    code, status, default_message = "CONFLICT", 409, "The request conflicts with the current state."


class LoginSessionConsumed(ServiceError):
    code, status, default_message = "LOGIN_SESSION_CONSUMED", 409, "This login session was already used."


class LoginSessionExpired(ServiceError):
    # 409, not 410: the session still exists (status reads it), in a state that forbids the move.
    code, status, default_message = "LOGIN_SESSION_EXPIRED", 409, "This login session has expired; start again."


class WrongRegion(ServiceError):
    """421 Misdirected Request: the tenant (or account) lives in another cell; nothing was read or
    written here. details: {region, baseUrl, tenantId?} (docs/regions-and-storage.md, "Cells")."""
    code, status, default_message = "WRONG_REGION", 421, "This lives in another region: send the request to its cell."

    def __init__(self, region: str, base_url: str, **ids: str) -> None:
        super().__init__(f"This lives in {region}: send the request to {base_url}.",
                         {"region": region, "baseUrl": base_url, **ids})


class PayloadTooLarge(ServiceError):
    code, status, default_message = "PAYLOAD_TOO_LARGE", 413, "The request body is too large."


class UnsupportedMediaType(ServiceError):
    code, status, default_message = "UNSUPPORTED_MEDIA_TYPE", 415, "Send the body as application/json."


class RateLimited(ServiceError):
    code, status, default_message = "RATE_LIMIT_EXCEEDED", 429, "Too many requests."


class ProviderError(ServiceError):
    code, status, default_message = "PROVIDER_ERROR", 502, "The OAuth provider refused the request or did not answer."


class ModelThrottled(ServiceError):
    code, status, default_message = "MODEL_THROTTLED", 429, "The model is busy; try again shortly."

    def __init__(self, message: str | None = None, details: dict[str, Any] | None = None,
                 retry_after_seconds: int = 10) -> None:
        super().__init__(message, {"retryAfterSeconds": retry_after_seconds, **(details or {})},
                         {"Retry-After": str(retry_after_seconds)})


class ModelUnavailable(ServiceError):
    code, status, default_message = "MODEL_UNAVAILABLE", 502, "The model could not answer this request."


class PaymentRequired(ServiceError):
    code, status, default_message = "PAYMENT_REQUIRED", 402, "The tenant's credit balance is used up."


class IdempotencyKeyReused(ServiceError):
    code, status, default_message = ("IDEMPOTENCY_KEY_REUSED", 422,
                                     "This Idempotency-Key was used with another request body.")


class RequestInProgress(ServiceError):
    code, status, default_message = ("REQUEST_IN_PROGRESS", 409,
                                     "A request with this Idempotency-Key is still being processed.")


class ServiceUnavailable(ServiceError):
    """The datastore (or another AWS service the request needs) did not answer within the function's
    time: nothing is known of a write it was making, so a create is sent again with its Idempotency-Key."""
    code, status, default_message = ("SERVICE_UNAVAILABLE", 503,
                                     "The service could not reach its datastore in time; retry shortly.")
    RETRY_AFTER_SECONDS = 5

    def __init__(self, message: str | None = None, details: dict[str, Any] | None = None,
                 retry_after_seconds: int = RETRY_AFTER_SECONDS) -> None:
        super().__init__(message, {"retryAfterSeconds": retry_after_seconds, **(details or {})},
                         {"Retry-After": str(retry_after_seconds)})


class InternalError(ServiceError):
    pass


# The table of codes the API reference lists; tests check that it stays complete.
ALL_ERRORS: tuple[type[ServiceError], ...] = (
    ValidationFailed, Unauthorized, Forbidden, NotFound, MethodNotAllowed, Conflict, LoginSessionConsumed,
    LoginSessionExpired, WrongRegion,
    PayloadTooLarge, UnsupportedMediaType, RateLimited, ProviderError, ModelThrottled, ModelUnavailable,
    InternalError,
    PaymentRequired, IdempotencyKeyReused, RequestInProgress, ServiceUnavailable,
)
