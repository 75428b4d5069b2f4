"""Exceptions: one class per error code of the API, each carrying what the envelope said."""

from __future__ import annotations

from typing import Any


class SvcError(Exception):
    """Anything this library raises."""


class ApiError(SvcError):
    """The service answered with an error envelope (or a non-JSON error)."""

    code: str = "UNKNOWN_ERROR"

    def __init__(self, message: str, *, code: str | None = None, details: dict[str, Any] | None = None,
                 status: int = 0, request_id: str | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.details: dict[str, Any] = details or {}
        self.status = status
        self.request_id = request_id
        self.headers = headers or {}

    def __str__(self) -> str:
        suffix = f" (request {self.request_id})" if self.request_id else ""
        return f"{self.code} [{self.status}]: {self.message}{suffix}"

    @property
    def retry_after(self) -> float | None:
        value = self.headers.get("retry-after")
        try:
            return float(value) if value is not None else None
        except ValueError:
            return None


class ValidationError(ApiError):
    code = "VALIDATION_ERROR"

    @property
    def fields(self) -> list[dict[str, Any]]:
        return list(self.details.get("fields") or [])


class Unauthorized(ApiError):
    code = "UNAUTHORIZED"


class InvalidCredentials(Unauthorized):
    """A sign-in answered 401: wrong e-mail or password (the spec's rule for login)."""


class Forbidden(ApiError):
    code = "FORBIDDEN"


class AccountDisabled(Forbidden):
    """A sign-in answered 403: the account is disabled (the spec's rule for login)."""


class NotFound(ApiError):
    code = "RESOURCE_NOT_FOUND"


class MethodNotAllowed(ApiError):
    code = "METHOD_NOT_ALLOWED"


class Conflict(ApiError):
    code = "CONFLICT"


class LoginSessionConsumed(Conflict):
    code = "LOGIN_SESSION_CONSUMED"


class LoginSessionExpired(Conflict):
    """409: the login session expired (details.reason timed_out) or was denied (denied)."""
    code = "LOGIN_SESSION_EXPIRED"


class PaymentRequired(ApiError):
    code = "PAYMENT_REQUIRED"


class IdempotencyKeyReused(ApiError):
    """The Idempotency-Key was used before with another request."""
    code = "IDEMPOTENCY_KEY_REUSED"


class RequestInProgress(Conflict):
    """A request with the same Idempotency-Key is still being served."""
    code = "REQUEST_IN_PROGRESS"


class PayloadTooLarge(ApiError):
    code = "PAYLOAD_TOO_LARGE"


class UnsupportedMediaType(ApiError):
    code = "UNSUPPORTED_MEDIA_TYPE"


class RateLimited(ApiError):
    code = "RATE_LIMIT_EXCEEDED"


class ModelThrottled(RateLimited):
    code = "MODEL_THROTTLED"


class ProviderError(ApiError):
    code = "PROVIDER_ERROR"


class ModelUnavailable(ApiError):
    code = "MODEL_UNAVAILABLE"


class InternalError(ApiError):
    code = "INTERNAL_ERROR"


class ServiceUnavailable(InternalError):
    """503: the service could not serve the request now (its datastore stalled; a tenant's writes
    paused while it moves between cells: details.reason "tenant_moving"); `retry_after` says when."""
    code = "SERVICE_UNAVAILABLE"


class ConnectionFailed(SvcError):
    """No answer came: the connection failed or timed out (after the retries allowed)."""


class CellUnreachable(ConnectionFailed):
    """The request could not be brought to the cell that holds its tenant (or account), so no answer
    of the service came: the cell a 421 WRONG_REGION named gave none (`reason` "unreachable": its
    region down, or not reachable from here), or the cells sent the request on more times than the
    client's `max_cell_follows` allows (`reason` "follow_limit": cells that disagree, e.g. while a
    tenant moves or fails over). `base_url` and `region` name that cell (region None when the 421
    did not say); `visited` lists the base URLs the call was sent to, in order."""

    def __init__(self, message: str, *, base_url: str, region: str | None, reason: str,
                 visited: list[str]) -> None:
        super().__init__(message)
        self.base_url = base_url
        self.region = region
        self.reason = reason
        self.visited = list(visited)


class StreamInterrupted(SvcError):
    """A chat stream broke and could not be resumed within the attempts allowed."""


class WebhookVerificationError(SvcError):
    """A webhook delivery whose signature or timestamp does not verify."""


_BY_CODE: dict[str, type[ApiError]] = {cls.code: cls for cls in (
    ValidationError, Unauthorized, Forbidden, NotFound, MethodNotAllowed, Conflict, LoginSessionConsumed,
    LoginSessionExpired, PaymentRequired, IdempotencyKeyReused, RequestInProgress, PayloadTooLarge,
    UnsupportedMediaType, RateLimited, ModelThrottled, ProviderError, ModelUnavailable, InternalError,
    ServiceUnavailable)}
_BY_STATUS: dict[int, type[ApiError]] = {400: ValidationError, 401: Unauthorized, 402: PaymentRequired,
                                         403: Forbidden, 404: NotFound, 405: MethodNotAllowed, 409: Conflict,
                                         422: IdempotencyKeyReused, 413: PayloadTooLarge,
                                         415: UnsupportedMediaType, 429: RateLimited, 500: InternalError,
                                         503: ServiceUnavailable}


def error_for(status: int, body: Any, headers: dict[str, str]) -> ApiError:
    """The exception for an error answer: by its code, else by its HTTP status."""
    error = body.get("error") if isinstance(body, dict) else None
    meta = body.get("meta") if isinstance(body, dict) else None
    request_id = (meta or {}).get("request_id") or headers.get("x-request-id")
    if isinstance(error, dict):
        code = str(error.get("code") or "UNKNOWN_ERROR")
        cls = _BY_CODE.get(code) or _BY_STATUS.get(status, ApiError)
        return cls(str(error.get("message") or code), code=code, details=error.get("details") or {},
                   status=status, request_id=request_id, headers=headers)
    cls = _BY_STATUS.get(status, InternalError if status >= 500 else ApiError)
    return cls(f"HTTP {status} without an error envelope", status=status, request_id=request_id, headers=headers)


def as_login_error(error: ApiError) -> ApiError:
    """The spec: on login, 401 reads as invalid credentials and 403 as a disabled account."""
    cls: type[ApiError] | None = {401: InvalidCredentials, 403: AccountDisabled}.get(error.status)
    if cls is None:
        return error
    return cls(error.message, code=error.code, details=error.details, status=error.status,
               request_id=error.request_id, headers=error.headers)
