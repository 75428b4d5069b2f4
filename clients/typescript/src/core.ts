/**
 * The transport: one request to the service, typed from the OpenAPI document.
 *
 * - `call(operationId, {path, query, body, headers, signal})` reaches every operation of the document
 *   (src/operations.ts, generated) with its inputs and its answer's `data` typed (src/schema.d.ts).
 * - Credentials: an API key (servers, scripts) or a browser session (session.ts), never both.
 * - Retries: a 429 or a 503 is sent again after its Retry-After (seconds or an HTTP date; without one,
 *   exponential backoff with full jitter), at most `maxRetries` times, only while the wait fits
 *   `maxRetryWaitSeconds`, and only while the wait ends within `maxRetryTimeSeconds` of the call's
 *   first attempt. Every 429 of the service is a refusal made before the request's work began (rate
 *   limits and stream caps at admission, sign-in throttles before the password is checked): any
 *   request is sent again. A 503 does not always say so (a stalled datastore may still commit the
 *   write; an invitation whose e-mail failed is saved: docs/conventions.md), so it is sent again only
 *   for a request that may be sent twice (GET, HEAD, OPTIONS, PUT, DELETE, or an operation that takes
 *   an Idempotency-Key: the key's record tells the retry whether the change was made), or when its
 *   details.reason is "tenant_moving" (a tenant's writes paused while it moves between cells, refused
 *   at admission: docs/regions-and-storage.md). An operation that takes an Idempotency-Key sends one,
 *   the same on every attempt, so a retried create is made once.
 * - Cells: a 421 WRONG_REGION (the tenant, or the account signing in, lives in another cell) is sent
 *   again to `details.baseUrl`, which later calls use too; at most `maxCellFollows` times per call
 *   (docs/regions-and-storage.md, "Cells and routing"). A cell that cannot be connected to, kept from
 *   an earlier call, sends the request back once to the `baseUrl` given (after a failover, its cell
 *   names the tenant's new one). A cell a 421 named in this call that gives no answer, or one more 421
 *   past the limit, throws CellUnreachable: the request is never sent back to the cell that named it.
 *   (fetch itself, as the Fetch standard has it, sends a request answered 421 once more on a new
 *   connection before the client sees the answer: a cell answering 421 sees each send twice.)
 * - Timeouts: each attempt has `timeoutMs`; an AbortSignal of the caller ends it too.
 */

import {
  type ApiError, CellUnreachable, ConnectionError, type ErrorBody, errorFor, TimeoutError, Unauthorized,
} from "./errors.js";
import { OPERATIONS, type OperationId } from "./operations.js";
import type { operations } from "./schema.js";
import type { Session } from "./session.js";

export const API_PREFIX = "/api/v1";
/** How many times one call is sent on to another cell, by default (ClientOptions.maxCellFollows). */
export const DEFAULT_MAX_CELL_FOLLOWS = 3;
/** How many times a 429 or a 503 is sent again per call, by default: with Retry-After 2 (a tenant's
 * move pausing its writes), 20 s of refusals are ridden out. */
export const DEFAULT_MAX_RETRIES = 10;
/** A call's retries end when the next wait would end this long after its first attempt, by default. */
export const DEFAULT_MAX_RETRY_TIME_SECONDS = 30;
const IDEMPOTENT_METHODS = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);
/** Failures to connect at all: nothing of the request was sent. */
const NOT_CONNECTED = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH",
                               "UND_ERR_CONNECT_TIMEOUT"]);

export interface ClientOptions {
  /** The service's address, without /api/v1 (`http://127.0.0.1:3000`, `https://api.example.com`). */
  baseUrl: string;
  /** An API key (`svc_sdk_...`): the credential of a server or a script. */
  apiKey?: string;
  /** A browser session (session.ts): an access token kept in memory, requests sent with credentials. */
  session?: Session;
  /** Each attempt's time, in milliseconds (default 30,000). */
  timeoutMs?: number;
  /** How many times a 429 or a 503 is sent again per call (default 10; maxRetryTimeSeconds bounds them too). */
  maxRetries?: number;
  /** The longest Retry-After waited for (default 30 s); a longer one is thrown as it is. */
  maxRetryWaitSeconds?: number;
  /** A call's retries end when the next wait would end more than this long after its first attempt
   * (default 30 s): the last answer is thrown then. */
  maxRetryTimeSeconds?: number;
  /** How many times one call is sent on to another cell: each 421 WRONG_REGION followed, and the way
   * back to `baseUrl` when the kept cell cannot be connected to (default 3). Past it, CellUnreachable. */
  maxCellFollows?: number;
  /** Called with the new base URL when a cell a 421 named has served a call: later calls go there. */
  onMoved?: (baseUrl: string) => void;
  /** Another fetch (tests, instrumented ones); the global one by default. */
  fetch?: typeof fetch;
  /** fetch's credentials mode without a session (a session always sends "include"). */
  credentials?: RequestCredentials;
}

type Op<Id extends OperationId> = Id extends keyof operations ? operations[Id] : never;
type JsonBody<T> = T extends { content: { "application/json": infer B } } ? B : never;
type PathOf<Id extends OperationId> = Op<Id> extends { parameters: { path: infer V } } ? V : never;
type QueryOf<Id extends OperationId> = Op<Id> extends { parameters: { query?: infer V } } ? NonNullable<V> : never;
type BodyOf<Id extends OperationId> = Op<Id> extends { requestBody: infer R } ? JsonBody<R>
  : Op<Id> extends { requestBody?: infer R } ? JsonBody<NonNullable<R>> | undefined : never;
type Success<Id extends OperationId> = (typeof OPERATIONS)[Id]["status"];
type Envelope<Id extends OperationId> =
  Op<Id> extends { responses: infer R } ? (Success<Id> extends keyof R ? JsonBody<R[Success<Id>]> : never) : never;
/** What `call` returns for an operation: the envelope's `data`. */
export type DataOf<Id extends OperationId> = Envelope<Id> extends { data: infer D } ? D : undefined;

/** What `call` takes for an operation: its path parameters (required when it has any), its query,
 * its body (required when the operation requires one), headers and an AbortSignal. */
export type CallInput<Id extends OperationId> =
  ([PathOf<Id>] extends [never] ? { path?: never } : { path: PathOf<Id> })
  & ([QueryOf<Id>] extends [never] ? { query?: never } : { query?: QueryOf<Id> })
  & ([BodyOf<Id>] extends [never] ? { body?: never }
    : undefined extends BodyOf<Id> ? { body?: BodyOf<Id> } : { body: BodyOf<Id> })
  & { headers?: Record<string, string>; signal?: AbortSignal };
/** The input is optional where nothing in it is required. */
export type CallArgs<Id extends OperationId> =
  {} extends CallInput<Id> ? [input?: CallInput<Id>] : [input: CallInput<Id>];

export interface RawAnswer {
  response: Response;
  requestId: string | undefined;
}

/** A base URL as the client keeps it: no trailing slash, no /api/v1. */
function baseOf(url: string): string {
  return url.replace(/\/+$/, "").replace(/\/api\/v1$/, "");
}

/** The cell a 421 WRONG_REGION names (an http(s) URL, never from https down to http), else undefined. */
function namedCell(status: number, body: ErrorBody, sentTo: URL): { baseUrl: string; region: string | undefined } | undefined {
  if (status !== 421 || body.code !== "WRONG_REGION") return undefined;
  const { baseUrl, region } = body.details ?? {};
  if (typeof baseUrl !== "string" || !/^https?:\/\//.test(baseUrl)) return undefined;
  if (sentTo.protocol === "https:" && !baseUrl.startsWith("https://")) return undefined;
  return { baseUrl: baseOf(baseUrl), region: typeof region === "string" ? region : undefined };
}

/** Whether a failed attempt surely sent nothing (the connection was never made). */
function neverSent(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 4; cause = cause.cause, depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && NOT_CONNECTED.has(code)) return true;
  }
  return false;
}

/** How many times a call was sent on to another cell (each base URL after the first). */
function follows(visited: string[]): number {
  return visited.length - 1;
}

function backoffSeconds(attempt: number): number {
  return Math.random() * Math.min(8, 0.5 * 2 ** attempt);
}

const sleep = (ms: number, signal?: AbortSignal) => new Promise<void>((resolve, reject) => {
  const timer = setTimeout(resolve, ms);
  signal?.addEventListener("abort", () => { clearTimeout(timer); reject(signal.reason); }, { once: true });
});

function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

function retryAfterSeconds(response: Response): number | undefined {
  const value = response.headers.get("retry-after");
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const when = Date.parse(value);
  return Number.isNaN(when) ? undefined : Math.max(0, (when - Date.now()) / 1000);
}

export class Transport {
  /** The base URL given (its cell is asked again when the kept one cannot be reached). */
  readonly entryUrl: string;
  readonly options: ClientOptions;
  private readonly fetcher: typeof fetch;
  #baseUrl: string;

  constructor(options: ClientOptions) {
    if (options.apiKey && options.session) throw new TypeError("give an apiKey or a session, not both");
    if ((options.maxCellFollows ?? 0) < 0) throw new TypeError("maxCellFollows is 0 or more");
    this.options = options;
    this.entryUrl = baseOf(options.baseUrl);
    this.#baseUrl = this.entryUrl;
    this.fetcher = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** Where calls go: the base URL given, or the cell a 421 named once that cell served. */
  get baseUrl(): string {
    return this.#baseUrl;
  }

  /** Send later calls to this cell (onMoved hears of a change). */
  useCell(baseUrl: string): void {
    if (baseUrl === this.#baseUrl) return;
    this.#baseUrl = baseUrl;
    this.options.onMoved?.(baseUrl);
  }

  /** Call an operation of the document by its operationId; the answer's `data`. */
  async call<Id extends OperationId>(operationId: Id, ...args: CallArgs<Id>): Promise<DataOf<Id>> {
    const input = (args[0] ?? {}) as { path?: object; query?: object; body?: unknown;
                                       headers?: Record<string, string>; signal?: AbortSignal };
    const operation = OPERATIONS[operationId];
    const path = this.fill(operation.path, (input.path ?? {}) as Record<string, unknown>);
    const answer = await this.send(operation.method, path, {
      query: input.query as Record<string, unknown> | undefined, body: input.body, headers: input.headers,
      signal: input.signal, idempotencyKey: "idempotencyKey" in operation,
    });
    if (operation.answer !== "json" || answer.response.status === 204) {
      return undefined as DataOf<Id>;
    }
    const envelope = await answer.response.json() as { data: DataOf<Id> };
    return envelope.data;
  }

  /** Fill a path template's {names}, each value encoded as one segment. */
  fill(template: string, values: Record<string, unknown>): string {
    return template.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = values[name];
      if (value === undefined || value === null || value === "") throw new TypeError(`path parameter ${name} is missing`);
      return encodeURIComponent(String(value));
    });
  }

  /**
   * Send a request and return its successful answer (an error answer is thrown as its ApiError).
   * `idempotencyKey`: the operation takes an Idempotency-Key (one is sent unless given, the same on
   * every attempt), so the request may be sent again after a 503.
   */
  async send(method: string, path: string, request: {
    query?: Record<string, unknown>; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal;
    idempotencyKey?: boolean; accept?: string;
  } = {}): Promise<RawAnswer> {
    const below = path.startsWith(API_PREFIX) ? path : API_PREFIX + path;
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined && value !== null) search.set(name, String(value));
    }
    const headers: Record<string, string> = { accept: request.accept ?? "application/json", ...request.headers };
    let payload: string | undefined;
    if (request.body !== undefined) {
      headers["content-type"] = "application/json";
      payload = JSON.stringify(request.body);
    }
    const keyed = Object.keys(headers).some((h) => h.toLowerCase() === "idempotency-key");
    if (request.idempotencyKey && !keyed) {
      headers["idempotency-key"] = newIdempotencyKey();   // one key for every attempt of this request
    }
    const repeatable = IDEMPOTENT_METHODS.has(method.toUpperCase()) || Boolean(request.idempotencyKey);
    const maxRetries = this.options.maxRetries ?? DEFAULT_MAX_RETRIES;
    const maxFollows = this.options.maxCellFollows ?? DEFAULT_MAX_CELL_FOLLOWS;
    const started = Date.now();
    const start = this.#baseUrl;
    let base = start;
    const visited = [base];
    const named = new Map<string, string | undefined>();   // the cells a 421 named in this call: their regions
    const unreached = new Set<string>();
    const unreachable = (origin: string, cell: string, region: string | undefined, reason: "unreachable" | "follow_limit",
                         why: string, cause?: unknown) => {
      const where = region ? `the cell ${region} at ${cell}` : `the cell at ${cell}`;
      const told = `a 421 WRONG_REGION from ${origin} sent ${method} ${below} to ${where}`;
      const message = reason === "unreachable"
        ? `cannot reach ${where}: ${told}, and ${why}; its region may be down, try again later`
        : `${method} ${below} did not reach its cell: ${told}, but ${why}; cells visited: ${visited.join(" -> ")}`;
      return new CellUnreachable(message, { baseUrl: cell, region, reason, visited: [...visited] }, { cause });
    };
    for (let attempt = 0; ;) {
      const url = new URL(base + below);
      url.search = search.toString();
      let sent: Record<string, string>;
      try {
        sent = await this.authorized(headers);   // may run the session's exchange: its failures are its own
      } catch (error) {
        // the session's exchange gave up on a 401 of its own (a refresh token spent elsewhere)
        if (error instanceof Unauthorized) this.options.session?.unauthorized(error);
        throw error;
      }
      let response: Response;
      try {
        response = await this.attempt(method, url, sent, payload, request.signal);
      } catch (error) {
        const noAnswer = error instanceof ConnectionError || error instanceof TimeoutError;
        if (noAnswer && named.has(base)) {
          throw unreachable(visited[visited.length - 2] ?? start, base, named.get(base), "unreachable",
                            error.message, error);
        }
        if (noAnswer && base !== this.entryUrl && follows(visited) < maxFollows && (repeatable || neverSent(error))) {
          unreached.add(base);   // the kept cell is gone: the entry says where the tenant is now
          base = this.entryUrl;
          visited.push(base);
          continue;
        }
        throw error;
      }
      const requestId = response.headers.get("x-request-id") ?? undefined;
      if (response.ok) {
        this.arrived(start, base);
        return { response, requestId };
      }
      const error = await this.failure(response, requestId);
      const cell = namedCell(response.status, { code: error.code, message: error.message, details: error.details }, url);
      if (cell) {
        if (unreached.has(cell.baseUrl)) {
          throw unreachable(base, cell.baseUrl, cell.region, "unreachable", "it could not be connected to earlier in this call");
        }
        if (follows(visited) >= maxFollows) {
          throw unreachable(base, cell.baseUrl, cell.region, "follow_limit",
                            `the request was sent on ${follows(visited)} times already (maxCellFollows)`);
        }
        named.set(cell.baseUrl, cell.region);
        base = cell.baseUrl;
        visited.push(base);
        continue;
      }
      this.arrived(start, base);
      const wait = this.retryWait(attempt, maxRetries, error, repeatable, started);
      if (wait === undefined) {
        if (error instanceof Unauthorized) this.options.session?.unauthorized(error);
        throw error;
      }
      await sleep(wait * 1000, request.signal);
      attempt++;
    }
  }

  /** Seconds to wait before sending again after this error answer, or undefined: not again. */
  private retryWait(attempt: number, maxRetries: number, error: ApiError, repeatable: boolean,
                    started: number): number | undefined {
    const again = error.status === 429
      || (error.status === 503 && (repeatable || error.details.reason === "tenant_moving"));
    if (!again || attempt >= maxRetries) return undefined;
    const wait = error.retryAfterSeconds ?? backoffSeconds(attempt);
    if (wait > (this.options.maxRetryWaitSeconds ?? 30)) return undefined;
    const budget = this.options.maxRetryTimeSeconds ?? DEFAULT_MAX_RETRY_TIME_SECONDS;
    return (Date.now() - started) / 1000 + wait <= budget ? wait : undefined;
  }

  /** A cell answered (not a 421 followed): keep it for later calls when it is not where this one started. */
  private arrived(start: string, base: string): void {
    if (base !== start) this.useCell(base);
  }

  /** The headers with the credential: the API key, or the session's token (its exchange run when due). */
  private async authorized(headers: Record<string, string>): Promise<Record<string, string>> {
    const session = this.options.session;
    const sent = { ...headers };
    if (this.options.apiKey) sent.authorization = `Bearer ${this.options.apiKey}`;
    const token = session ? await session.accessToken() : undefined;
    if (token) sent.authorization = `Bearer ${token}`;
    return sent;
  }

  private async attempt(method: string, url: URL, sent: Record<string, string>, payload: string | undefined,
                        signal: AbortSignal | undefined): Promise<Response> {
    if (signal?.aborted) throw signal.reason;   // aborted while the credential was being found
    const session = this.options.session;
    const timeoutMs = this.options.timeoutMs ?? 30_000;
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new TimeoutError(timeoutMs)), timeoutMs);
    const aborted = () => timeout.abort(signal?.reason);
    signal?.addEventListener("abort", aborted, { once: true });
    try {
      return await this.fetcher(url, {
        method, headers: sent, body: payload, signal: timeout.signal,
        // The session's refresh cookie (HttpOnly) goes with the browser's requests: cookie mode.
        credentials: session ? "include" : (this.options.credentials ?? "same-origin"),
      });
    } catch (cause) {
      if (timeout.signal.aborted) throw timeout.signal.reason;
      throw new ConnectionError(`could not reach ${url.origin}`, { cause });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", aborted);
    }
  }

  private async failure(response: Response, requestId: string | undefined): Promise<ApiError> {
    let body: ErrorBody = { code: "HTTP_ERROR", message: `the service answered ${response.status}` };
    try {
      const parsed = await response.json() as { error?: ErrorBody; meta?: { request_id?: string } };
      if (parsed.error?.code) body = parsed.error;
      requestId = requestId ?? parsed.meta?.request_id;
    } catch {
      // not the envelope (a proxy's page): the status says what there is to say
    }
    return errorFor(response.status, body, requestId, retryAfterSeconds(response));
  }
}
