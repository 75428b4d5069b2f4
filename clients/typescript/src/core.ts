/**
 * The transport: one request to the service, typed from the OpenAPI document.
 *
 * - `call(operationId, {path, query, body, headers, signal})` reaches every operation of the document
 *   (src/operations.ts, generated) with its inputs and its answer's `data` typed (src/schema.d.ts).
 * - Credentials: an API key (servers, scripts) or a browser session (session.ts), never both.
 * - Retries: a 429 or a 503 is sent again after its Retry-After (at most `maxRetries` times, and only
 *   while the wait fits `maxRetryWaitSeconds`); a create sends an Idempotency-Key, the same on every
 *   attempt, so a retried create is made once.
 * - Timeouts: each attempt has `timeoutMs`; an AbortSignal of the caller ends it too.
 */

import {
  type ApiError, ConnectionError, type ErrorBody, errorFor, TimeoutError, Unauthorized,
} from "./errors.js";
import { OPERATIONS, type OperationId } from "./operations.js";
import type { operations } from "./schema.js";
import type { Session } from "./session.js";

export const API_PREFIX = "/api/v1";

export interface ClientOptions {
  /** The service's address, without /api/v1 (`http://127.0.0.1:3000`, `https://api.example.com`). */
  baseUrl: string;
  /** An API key (`svc_sdk_...`): the credential of a server or a script. */
  apiKey?: string;
  /** A browser session (session.ts): an access token kept in memory, requests sent with credentials. */
  session?: Session;
  /** Each attempt's time, in milliseconds (default 30,000). */
  timeoutMs?: number;
  /** How many times a 429 or a 503 is sent again (default 2). */
  maxRetries?: number;
  /** The longest Retry-After waited for (default 30 s); a longer one is thrown as it is. */
  maxRetryWaitSeconds?: number;
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
  readonly baseUrl: string;
  readonly options: ClientOptions;
  private readonly fetcher: typeof fetch;

  constructor(options: ClientOptions) {
    if (options.apiKey && options.session) throw new TypeError("give an apiKey or a session, not both");
    this.options = options;
    this.baseUrl = options.baseUrl.replace(/\/+$/, "").replace(/\/api\/v1$/, "");
    this.fetcher = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** Call an operation of the document by its operationId; the answer's `data`. */
  async call<Id extends OperationId>(operationId: Id, ...args: CallArgs<Id>): Promise<DataOf<Id>> {
    const input = (args[0] ?? {}) as { path?: object; query?: object; body?: unknown;
                                       headers?: Record<string, string>; signal?: AbortSignal };
    const operation = OPERATIONS[operationId];
    const path = this.fill(operation.path, (input.path ?? {}) as Record<string, unknown>);
    const answer = await this.send(operation.method, path, {
      query: input.query as Record<string, unknown> | undefined, body: input.body, headers: input.headers,
      signal: input.signal, create: operation.method === "POST" && operation.status === 201,
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
   * `create`: a POST that makes something (an Idempotency-Key is sent unless one is given).
   */
  async send(method: string, path: string, request: {
    query?: Record<string, unknown>; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal;
    create?: boolean; accept?: string;
  } = {}): Promise<RawAnswer> {
    const url = new URL(this.baseUrl + (path.startsWith(API_PREFIX) ? path : API_PREFIX + path));
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = { accept: request.accept ?? "application/json", ...request.headers };
    let payload: string | undefined;
    if (request.body !== undefined) {
      headers["content-type"] = "application/json";
      payload = JSON.stringify(request.body);
    }
    if (request.create && !Object.keys(headers).some((h) => h.toLowerCase() === "idempotency-key")) {
      headers["idempotency-key"] = newIdempotencyKey();   // one key for every attempt of this create
    }
    const maxRetries = this.options.maxRetries ?? 2;
    for (let attempt = 0; ; attempt++) {
      const response = await this.attempt(method, url, headers, payload, request.signal);
      const requestId = response.headers.get("x-request-id") ?? undefined;
      if (response.ok) return { response, requestId };
      const error = await this.failure(response, requestId);
      const wait = error.retryAfterSeconds ?? (response.status === 503 ? 1 : undefined);
      const retried = (response.status === 429 || response.status === 503) && attempt < maxRetries
        && wait !== undefined && wait <= (this.options.maxRetryWaitSeconds ?? 30);
      if (!retried) {
        if (error instanceof Unauthorized) this.options.session?.unauthorized(error);
        throw error;
      }
      await sleep(wait * 1000, request.signal);
    }
  }

  private async attempt(method: string, url: URL, headers: Record<string, string>, payload: string | undefined,
                        signal: AbortSignal | undefined): Promise<Response> {
    const session = this.options.session;
    const sent = { ...headers };
    if (this.options.apiKey) sent.authorization = `Bearer ${this.options.apiKey}`;
    const token = session ? await session.accessToken() : undefined;
    if (token) sent.authorization = `Bearer ${token}`;
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
