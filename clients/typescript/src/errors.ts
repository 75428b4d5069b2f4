/** The errors the client throws: the service's envelope as a typed error, and the failures of the wire. */

export interface ErrorBody {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/** An answer in the service's error envelope: `code`, `status`, `requestId`, `details`. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly requestId: string | undefined;
  readonly details: Record<string, unknown>;
  /** Seconds the service asked to wait (429, 503), when it said. */
  readonly retryAfterSeconds: number | undefined;

  constructor(status: number, body: ErrorBody, requestId?: string, retryAfterSeconds?: number) {
    super(body.message);
    this.name = new.target.name;
    this.status = status;
    this.code = body.code;
    this.requestId = requestId;
    this.details = body.details ?? {};
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class ValidationError extends ApiError {}
/** 401: the credential is missing, invalid, expired or revoked. */
export class Unauthorized extends ApiError {}
/** A sign-in's 401: the e-mail and password do not match an account. */
export class InvalidCredentials extends Unauthorized {}
/** A sign-in's 403: the account is disabled. */
export class AccountDisabled extends ApiError {}
export class Forbidden extends ApiError {}
export class NotFound extends ApiError {}
export class Conflict extends ApiError {}
export class PaymentRequired extends ApiError {}
export class RateLimited extends ApiError {}
/** 421: the tenant lives in another cell; `details.baseUrl` names it. The client follows it by itself
 * (at most `maxCellFollows` times per call); one is thrown only when it names no cell to go to. */
export class WrongRegion extends ApiError {}
export class ServiceUnavailable extends ApiError {}
export class ServerError extends ApiError {}

const BY_STATUS: Record<number, typeof ApiError> = {
  400: ValidationError, 401: Unauthorized, 402: PaymentRequired, 403: Forbidden, 404: NotFound, 409: Conflict,
  421: WrongRegion, 429: RateLimited, 503: ServiceUnavailable,
};

export function errorFor(status: number, body: ErrorBody, requestId?: string, retryAfter?: number): ApiError {
  const Kind = BY_STATUS[status] ?? (status >= 500 ? ServerError : ApiError);
  return new Kind(status, body, requestId, retryAfter);
}

/** The request never got an answer: no connection, or it broke before the answer was read. */
export class ConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ConnectionError";
  }
}

/**
 * The request could not be brought to the cell that holds its tenant (or account), so no answer of the
 * service came: the cell a 421 WRONG_REGION named gave none (`reason` "unreachable": its region down,
 * or not reachable from here; `cause` says how), or the cells sent the request on more times than
 * `maxCellFollows` allows (`reason` "follow_limit": cells that disagree, e.g. while a tenant moves).
 * `baseUrl` and `region` name that cell; `visited` lists the base URLs the call was sent to, in order.
 */
export class CellUnreachable extends ConnectionError {
  readonly baseUrl: string;
  readonly region: string | undefined;
  readonly reason: "unreachable" | "follow_limit";
  readonly visited: string[];

  constructor(message: string, cell: { baseUrl: string; region: string | undefined; reason: "unreachable" | "follow_limit";
                                       visited: string[] }, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "CellUnreachable";
    this.baseUrl = cell.baseUrl;
    this.region = cell.region;
    this.reason = cell.reason;
    this.visited = cell.visited;
  }
}

/** The client's own timeout ended the request (an abort by the caller's signal is rethrown as it is). */
export class TimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = "TimeoutError";
  }
}
