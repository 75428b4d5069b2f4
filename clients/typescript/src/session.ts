/**
 * A browser session, as the service's interface states it:
 *
 * 1. The access token is kept in memory only (a private field), never in any browser storage.
 * 2. Requests are sent with credentials (cookie mode): the refresh cookie goes with them.
 * 3. A token is treated as expired 60 s before its expiry (`expiresIn`, in seconds); the next request
 *    first runs the configured `exchange` callback for a new one (one run for all the requests
 *    waiting on it).
 * 4. Every 401 the client gives up on calls the configured `onUnauthorized` callback, once: a request's,
 *    and the session's own renewal's (`refresh` or `exchangeToken`, whether the `exchange` callback
 *    runs it or the application does): a refresh token spent elsewhere ends the session as surely as
 *    a revoked access token. Not `login`'s (a wrong password: InvalidCredentials) nor `logout`'s (the
 *    session ends either way).
 * 5. Logout clears the server's session first (POST /auth/logout), then the client's tokens.
 *
 * Sign-in: `login` reads 401 as InvalidCredentials and 403 as AccountDisabled; `exchangeToken`
 * posts an identity provider's session token (e.g. Clerk's) to /auth/exchange; `refresh` turns the
 * refresh token (the cookie, or the one login returned when the page is on another site) into a new
 * access token. A forgotten password: `forgotPassword` asks for the e-mailed link, `resetPassword` sets
 * the new password with its token (every session of the account ends, this one's tokens are forgotten);
 * neither needs a sign-in nor runs the exchange.
 *
 * After a reload nothing is in memory: the refresh cookie (HttpOnly, SameSite=Strict: a page on the
 * API's site) is what restores the session, so the `exchange` to give is `(s) => s.refresh()` (it sends
 * the refresh token in the body too when one is held, for a page on another site).
 */

import { AccountDisabled, Forbidden, InvalidCredentials, Unauthorized } from "./errors.js";

export const EXPIRY_BUFFER_SECONDS = 60;

/** The 401s already told to an application (an error passes through the exchange and the request). */
const reported = new WeakSet<Unauthorized>();

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
  /** Called once for every 401 answer the client gives up on (a request's, a refresh's or an
   * exchange's; not login's or logout's), with its error. */
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

  /** A 401 reached the caller: tell the application (once per error, however many calls it passes). */
  unauthorized(error: Unauthorized): void {
    if (reported.has(error)) return;
    reported.add(error);
    this.options.onUnauthorized?.(error);
  }

  /** A renewal call (refresh, exchange): its grant kept; its 401 told to the application. */
  async #renew(path: string, body: unknown): Promise<TokenGrant> {
    try {
      const { data } = await this.calls().post(path, body);
      this.accept(data as TokenGrant);
      return data as TokenGrant;
    } catch (error) {
      if (error instanceof Unauthorized) this.unauthorized(error);
      throw error;
    }
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
    return this.#renew("/auth/refresh", body);
  }

  /** An identity provider's session token (e.g. Clerk's) exchanged for the service's access token. */
  async exchangeToken(token: string): Promise<TokenGrant> {
    return this.#renew("/auth/exchange", { token });
  }

  /** E-mail a one-time reset link to the address's account, if it has one: the answer is the same either way. */
  async forgotPassword(email: string): Promise<{ email: string; expiresIn: number }> {
    const { data } = await this.calls().post("/auth/password/forgot", { email });
    return data as { email: string; expiresIn: number };
  }

  /** Set the new password with the e-mailed link's token, once. Every session of the account ends, so the
   * tokens held here are forgotten; sign in next with the address the answer names. NotFound: the link names
   * nothing (or a newer one was sent); Conflict: used or expired (details.reason). */
  async resetPassword(token: string, password: string): Promise<{ email: string; sessionsEnded: number }> {
    const { data } = await this.calls().post("/auth/password/reset", { token, password });
    this.clear();
    return data as { email: string; sessionsEnded: number };
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
