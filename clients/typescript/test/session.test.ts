/** The browser rules of the service's interface, each a test that fails when the rule is broken. */

import { afterEach, describe, expect, it, vi } from "vitest";

import { AccountDisabled, Client, InvalidCredentials, Session, type TokenGrant, Unauthorized } from "../src/index.js";
import { error, json, serve, type TestServer } from "./server.js";

let server: TestServer | undefined;
afterEach(async () => { await server?.close(); server = undefined; });

const grant = (accessToken: string, expiresIn = 900): TokenGrant => ({ accessToken, expiresIn, refreshToken: `r-${accessToken}` });

/** A server whose /auth/login grants "t1" and every other route answers who called. */
async function serviceWith(extra: Partial<Record<string, (status?: number) => void>> = {}) {
  server = await serve((request, response) => {
    const path = new URL(request.url, "http://x").pathname;
    extra[path]?.();
    if (path === "/api/v1/auth/login") {
      const { password } = JSON.parse(request.body) as { password: string };
      if (password === "wrong") return error(response, 401, "UNAUTHORIZED");
      if (password === "disabled") return error(response, 403, "FORBIDDEN");
      return json(response, 200, grant("t1"));
    }
    if (path === "/api/v1/auth/logout") return json(response, 200, { loggedOut: true });
    if (path === "/api/v1/auth/refresh") return json(response, 200, grant("t2"));
    if (path === "/api/v1/projects" && request.headers.authorization === "Bearer expired") {
      return error(response, 401, "UNAUTHORIZED");
    }
    return json(response, 200, { items: [], nextCursor: null });
  });
  return server;
}

describe("the access token is kept in memory only", () => {
  it("never reaches localStorage, sessionStorage or a readable cookie, nor the session's enumerable state", async () => {
    const storage = { setItem: vi.fn(), getItem: vi.fn(), removeItem: vi.fn(), clear: vi.fn() };
    vi.stubGlobal("localStorage", storage);
    vi.stubGlobal("sessionStorage", storage);
    const cookie = vi.fn();
    vi.stubGlobal("document", { set cookie(value: string) { cookie(value); }, get cookie() { return ""; } });
    try {
      const service = await serviceWith();
      const session = new Session();
      const client = new Client({ baseUrl: service.url, session });
      await session.login("a@example.com", "right");
      await client.projects.list();
      expect(service.seen.at(-1)?.headers.authorization).toBe("Bearer t1");
      expect(storage.setItem).not.toHaveBeenCalled();
      expect(cookie).not.toHaveBeenCalled();
      expect(JSON.stringify(session)).not.toContain("t1");
      expect(Object.values(session).map(String).join(" ")).not.toContain("t1");
    } finally {
      vi.unstubAllGlobals();
    }
  });
});

describe("requests are sent with credentials (cookie mode)", () => {
  it("sends credentials: include on every request of a session, its own calls included", async () => {
    const service = await serviceWith();
    const modes: (RequestCredentials | undefined)[] = [];
    const recording: typeof fetch = (input, init) => { modes.push(init?.credentials); return fetch(input, init); };
    const session = new Session();
    const client = new Client({ baseUrl: service.url, session, fetch: recording });
    await session.login("a@example.com", "right");
    await client.projects.list();
    await session.logout();
    expect(modes).toEqual(["include", "include", "include"]);
  });
});

describe("a token is treated as expired 60 s before expiresIn ends", () => {
  it("uses the token until 60 s before its end, then runs the exchange callback first", async () => {
    const service = await serviceWith();
    let now = 1_000_000;
    const exchange = vi.fn(async () => grant("t2"));
    const session = new Session({ exchange, now: () => now });
    const client = new Client({ baseUrl: service.url, session });
    await session.login("a@example.com", "right");           // expiresIn 900 s
    now += (900 - 60) * 1000 - 1;                             // 1 ms inside the buffer's edge
    await client.projects.list();
    expect(exchange).not.toHaveBeenCalled();
    expect(service.seen.at(-1)?.headers.authorization).toBe("Bearer t1");
    now += 2;                                                 // now within 60 s of the end
    await Promise.all([client.projects.list(), client.projects.list()]);
    expect(exchange).toHaveBeenCalledTimes(1);                // one exchange for the requests waiting on it
    expect(service.seen.slice(-2).map((s) => s.headers.authorization)).toEqual(["Bearer t2", "Bearer t2"]);
  });
});

describe("onUnauthorized", () => {
  it("is called with the error on a 401, and the error is still thrown", async () => {
    const service = await serviceWith();
    const onUnauthorized = vi.fn();
    const session = new Session({ onUnauthorized });
    session.accept(grant("expired"));
    const client = new Client({ baseUrl: service.url, session });
    await expect(client.projects.list()).rejects.toBeInstanceOf(Unauthorized);
    expect(onUnauthorized).toHaveBeenCalledTimes(1);
    expect(onUnauthorized.mock.calls[0]?.[0]).toMatchObject({ status: 401, code: "UNAUTHORIZED", requestId: "req-err" });
  });
});

describe("onUnauthorized on a failed renewal", () => {
  /** A server whose refresh answers 401 (the refresh token was spent elsewhere, e.g. by another tab). */
  async function spentRefresh() {
    server = await serve((request, response) => {
      const path = new URL(request.url, "http://x").pathname;
      if (path === "/api/v1/auth/login") return json(response, 200, grant("t1"));
      if (path === "/api/v1/auth/refresh" || path === "/api/v1/auth/exchange") {
        return error(response, 401, "UNAUTHORIZED");
      }
      return json(response, 200, { user: null });
    });
    return server;
  }

  it("is called once when the exchange's refresh answers 401, and the request throws Unauthorized", async () => {
    const service = await spentRefresh();
    let now = 1_000_000;
    const onUnauthorized = vi.fn();
    const session = new Session({ now: () => now, onUnauthorized, exchange: (s) => s.refresh() });
    const client = new Client({ baseUrl: service.url, session });
    await session.login("a@example.com", "right");
    now += 900 * 1000;                                        // the access token has expired
    await expect(client.me()).rejects.toBeInstanceOf(Unauthorized);
    expect(onUnauthorized).toHaveBeenCalledTimes(1);
    await expect(client.me()).rejects.toBeInstanceOf(Unauthorized);
    expect(onUnauthorized).toHaveBeenCalledTimes(2);          // every 401 given up on, each once
    expect(service.seen.filter((s) => s.url === "/api/v1/me")).toHaveLength(0);
  });

  it("is called when the application's own refresh or exchangeToken answers 401", async () => {
    const service = await spentRefresh();
    const onUnauthorized = vi.fn();
    const session = new Session({ onUnauthorized });
    new Client({ baseUrl: service.url, session });
    await expect(session.refresh()).rejects.toBeInstanceOf(Unauthorized);
    await expect(session.exchangeToken("idp-token")).rejects.toBeInstanceOf(Unauthorized);
    expect(onUnauthorized).toHaveBeenCalledTimes(2);
  });

  it("is called for a 401 an exchange callback meets on a call of its own, once", async () => {
    const service = await spentRefresh();
    let now = 1_000_000;
    const onUnauthorized = vi.fn();
    const session = new Session({ now: () => now, onUnauthorized, exchange: (s) => s.exchangeToken("idp") });
    const client = new Client({ baseUrl: service.url, session });
    await session.login("a@example.com", "right");
    now += 900 * 1000;
    await expect(Promise.all([client.me(), client.projects.list()])).rejects.toBeInstanceOf(Unauthorized);
    expect(onUnauthorized).toHaveBeenCalledTimes(1);          // one exchange, one 401 answer, one call
  });

  it("is not called for a wrong password (InvalidCredentials)", async () => {
    const service = await serviceWith();
    const onUnauthorized = vi.fn();
    const session = new Session({ onUnauthorized });
    new Client({ baseUrl: service.url, session });
    await expect(session.login("a@example.com", "wrong")).rejects.toBeInstanceOf(InvalidCredentials);
    expect(onUnauthorized).not.toHaveBeenCalled();
  });
});

describe("refresh for another tenant", () => {
  it("sends the tenant's id beside the refresh token, and keeps the new grant", async () => {
    const session = new Session();
    const service = await serviceWith({});
    const client = new Client({ baseUrl: service.url, session });
    await session.login("a@example.com", "right");
    await session.refresh({ tenantId: "ten_other" });
    const call = service.seen.find((s) => s.url === "/api/v1/auth/refresh");
    expect(JSON.parse(call?.body ?? "{}")).toEqual({ refreshToken: "r-t1", tenantId: "ten_other" });
    expect(session.refreshToken).toBe("r-t2");
    void client;
  });
});

describe("logout", () => {
  it("clears the server's session first, with the token, then the client's tokens", async () => {
    const order: string[] = [];
    const session = new Session();
    const service = await serviceWith({
      "/api/v1/auth/logout": () => { order.push(`server saw signedIn=${session.signedIn}`); },
    });
    const client = new Client({ baseUrl: service.url, session });
    await session.login("a@example.com", "right");
    await session.logout();
    order.push(`after: signedIn=${session.signedIn}`);
    const call = service.seen.find((s) => s.url === "/api/v1/auth/logout");
    expect(call?.headers.authorization).toBe("Bearer t1");
    expect(JSON.parse(call?.body ?? "{}")).toEqual({ refreshToken: "r-t1" });
    expect(order).toEqual(["server saw signedIn=true", "after: signedIn=false"]);
    expect(session.refreshToken).toBeUndefined();
    void client;
  });

  it("clears the client's tokens even when the server's answer is an error", async () => {
    server = await serve((request, response) => (request.url.endsWith("/logout")
      ? error(response, 500, "INTERNAL_ERROR") : json(response, 200, grant("t1"))));
    const session = new Session();
    new Client({ baseUrl: server.url, session, maxRetries: 0 });
    await session.login("a@example.com", "right");
    await expect(session.logout()).rejects.toMatchObject({ status: 500 });
    expect(session.signedIn).toBe(false);
  });
});

describe("login", () => {
  it("reads 401 as invalid credentials and 403 as a disabled account", async () => {
    const service = await serviceWith();
    const session = new Session();
    new Client({ baseUrl: service.url, session });
    await expect(session.login("a@example.com", "wrong")).rejects.toBeInstanceOf(InvalidCredentials);
    await expect(session.login("a@example.com", "disabled")).rejects.toBeInstanceOf(AccountDisabled);
    expect(session.signedIn).toBe(false);
  });
});

describe("a forgotten password", () => {
  it("is asked for and reset without a bearer token or the exchange, and the reset forgets the tokens", async () => {
    server = await serve((request, response) => {
      if (request.url.endsWith("/auth/password/forgot")) return json(response, 202, { email: "a@example.com", expiresIn: 1800 });
      if (request.url.endsWith("/auth/password/reset")) {
        const { token } = JSON.parse(request.body) as { token: string };
        return token === "used" ? error(response, 409, "CONFLICT", { reason: "used" })
          : json(response, 200, { email: "a@example.com", sessionsEnded: 2 });
      }
      return json(response, 200, grant("t1"));
    });
    const exchange = vi.fn(async () => grant("t2"));
    const session = new Session({ exchange });
    new Client({ baseUrl: server.url, session });
    await session.login("a@example.com", "right");
    expect(await session.forgotPassword("a@example.com")).toEqual({ email: "a@example.com", expiresIn: 1800 });
    await expect(session.resetPassword("used", "a new long password")).rejects.toMatchObject({ status: 409 });
    expect(session.signedIn).toBe(true);                      // a refused reset changes nothing here
    expect(await session.resetPassword("prt_x.y", "a new long password")).toEqual({ email: "a@example.com", sessionsEnded: 2 });
    expect(session.signedIn).toBe(false);                     // every session of the account has ended
    expect(session.refreshToken).toBeUndefined();
    const asked = server.seen.filter((s) => s.url.includes("/auth/password/"));
    expect(asked.map((s) => s.headers.authorization)).toEqual([undefined, undefined, undefined]);
    expect(JSON.parse(asked[0]?.body ?? "{}")).toEqual({ email: "a@example.com" });
    expect(JSON.parse(asked[2]?.body ?? "{}")).toEqual({ token: "prt_x.y", password: "a new long password" });
    expect(exchange).not.toHaveBeenCalled();
  });
});
