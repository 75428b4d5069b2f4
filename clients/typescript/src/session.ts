/**
 * A browser session, as the service's interface states it:
 *
 * 1. The access token is kept in memory only (a private field), never in any browser storage.
 * 2. Requests are sent with credentials (cookie mode): the refresh cookie goes with them.
 * 3. A token is treated as expired 60 s before its expiry (`expiresIn`, in seconds); the next request
 *    first runs the configured `exchange` callback for a new one (one run for all the requests
 *    waiting on it).
 * 4. Every 401 calls the configured `onUnauthorized` callback.
 * 5. Logout clears the server's session first (POST /auth/logout), then the client's tokens.
 *
 * Sign-in: `login` reads 401 as InvalidCredentials and 403 as AccountDisabled; `exchangeToken`
 * posts an identity provider's session token (e.g. Clerk's) to /auth/exchange; `refresh` turns the
 * refresh token (the cookie, or the one login returned when the page is on another site) into a new
 * access token.
 */

import { AccountDisabled, Forbidden, InvalidCredentials, Unauthorized } from "./errors.js";

export const EXPIRY_BUFFER_SECONDS = 60;

/** What login, refresh and exchange return (the fields a session uses). */
export interface TokenGrant {
  accessToken: string;
  /** Seconds the access token lives. */
  expiresIn: number;
  refreshToken?: string;
}

export interface SessionOptions {
  /** Runs when there is no token, or it is within 60 s of its expiry: returns a new grant (null: none). */
  exchange?: (session: Session) => Promise<TokenGrant | null>;
  /** Called on every 401 answer, with its error. */
  onUnauthorized?: (error: Unauthorized) => void;
  /** The clock, in milliseconds (tests). */
  now?: () => number;
}

/** The calls a session makes itself (the client's transport, bound). */
export interface SessionTransport {
  post(path: string, body: unknown, bearer?: string): Promise<{ data: unknown }>;
}

export class Session {
  #token: string | undefined;
  #expiresAt = 0;
  #refreshToken: string | undefined;
  #pending: Promise<string | undefined> | undefined;
  readonly options: SessionOptions;
  transport: SessionTransport | undefined;

  constructor(options: SessionOptions = {}) {
    this.options = options;
  }

  private now(): number {
    return this.options.now ? this.options.now() : Date.now();
  }

  /** Whether a token is held that is not yet within the expiry buffer. */
  get signedIn(): boolean {
    return this.#token !== undefined && this.now() < this.#expiresAt;
  }

  /** The refresh token the last grant carried (kept in memory too; for a page on another site). */
  get refreshToken(): string | undefined {
    return this.#refreshToken;
  }

  /** Keep a grant: the token in memory, treated as expired 60 s before `expiresIn` ends. */
  accept(grant: TokenGrant): void {
    this.#token = grant.accessToken;
    this.#expiresAt = this.now() + (grant.expiresIn - EXPIRY_BUFFER_SECONDS) * 1000;
    if (grant.refreshToken) this.#refreshToken = grant.refreshToken;
  }

  /** Forget every token (the server's session is the caller's to end first: logout). */
  clear(): void {
    this.#token = undefined;
    this.#expiresAt = 0;
    this.#refreshToken = undefined;
  }

  /** The token to send: the one held, or, when none is or it is within the buffer, the exchange's. */
  async accessToken(): Promise<string | undefined> {
    if (this.signedIn) return this.#token;
    if (!this.options.exchange) return this.#token;   // nothing to renew with: the service will say 401
    this.#pending ??= this.options.exchange(this).then((grant) => {
      if (grant) this.accept(grant);
      return this.#token;
    }).finally(() => { this.#pending = undefined; });
    return this.#pending;
  }

  /** A 401 reached the caller: tell the application. */
  unauthorized(error: Unauthorized): void {
    this.options.onUnauthorized?.(error);
  }

  private calls(): SessionTransport {
    if (!this.transport) throw new TypeError("the session is not attached to a client");
    return this.transport;
  }

  /** Sign in with e-mail and password. 401: InvalidCredentials; 403: AccountDisabled. */
  async login(email: string, password: string): Promise<TokenGrant> {
    try {
      const { data } = await this.calls().post("/auth/login", { email, password });
      this.accept(data as TokenGrant);
      return data as TokenGrant;
    } catch (error) {
      if (error instanceof Unauthorized) {
        throw new InvalidCredentials(error.status, { code: error.code, message: error.message, details: error.details },
                                     error.requestId);
      }
      if (error instanceof Forbidden) {
        throw new AccountDisabled(error.status, { code: error.code, message: error.message, details: error.details },
                                  error.requestId);
      }
      throw error;
    }
  }

  /** A new access token from the refresh token (the cookie, and the body's when one is held); with
   * `tenantId`, for another tenant of the user's (the tenant switcher of a dashboard). */
  async refresh(options: { tenantId?: string } = {}): Promise<TokenGrant> {
    const body = { ...(this.#refreshToken ? { refreshToken: this.#refreshToken } : {}),
                   ...(options.tenantId ? { tenantId: options.tenantId } : {}) };
    const { data } = await this.calls().post("/auth/refresh", body);
    this.accept(data as TokenGrant);
    return data as TokenGrant;
  }

  /** An identity provider's session token (e.g. Clerk's) exchanged for the service's access token. */
  async exchangeToken(token: string): Promise<TokenGrant> {
    const { data } = await this.calls().post("/auth/exchange", { token });
    this.accept(data as TokenGrant);
    return data as TokenGrant;
  }

  /** End the server's session first, then forget the tokens (even when the server's answer is an error). */
  async logout(): Promise<void> {
    const bearer = this.#token;
    const body = this.#refreshToken ? { refreshToken: this.#refreshToken } : {};
    try {
      await this.calls().post("/auth/logout", body, bearer);
    } finally {
      this.clear();
    }
  }
}
