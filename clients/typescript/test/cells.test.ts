/** Cells and retries, against real HTTP servers on loopback: 421 WRONG_REGION followed a bounded number of
 * times per call, a cell out of reach ending the call with CellUnreachable, 429 and 503 retried within the
 * call's retry time, and the session's refresh going to the account's cell while the tenant's calls stay
 * in the tenant's. Each test counts the requests its servers were sent.
 *
 * fetch itself (the Fetch standard, so Node's and the browsers') sends a request answered 421 once more,
 * on a new connection, before the client sees the answer: a server answering 421 sees each of the
 * client's sends twice. The client's bound is on its own sends, counted by a recording fetch. */

import type { ServerResponse } from "node:http";

import { afterEach, describe, expect, it } from "vitest";

import {
  CellUnreachable, Client, ConnectionError, DEFAULT_MAX_CELL_FOLLOWS, DEFAULT_MAX_RETRIES, DEFAULT_MAX_RETRY_TIME_SECONDS,
  ServiceUnavailable,
  Session, type TokenGrant,
} from "../src/index.js";
import { error, json, type Seen, serve, type TestServer } from "./server.js";

const servers: TestServer[] = [];
afterEach(async () => { await Promise.all(servers.splice(0).map((s) => s.close())); });

async function cell(handler: (request: Seen, response: ServerResponse) => void): Promise<TestServer> {
  const made = await serve(handler);
  servers.push(made);
  return made;
}

async function closedUrl(): Promise<string> {
  const gone = await serve(() => undefined);
  await gone.close();
  return gone.url;
}

const wrongRegion = (response: ServerResponse, baseUrl: string, region = "eu-central-1") =>
  error(response, 421, "WRONG_REGION", { region, baseUrl, tenantId: "ten_1" });
const page = (response: ServerResponse) => json(response, 200, { items: [], nextCursor: null });
const pathOf = (request: Seen) => `${request.method} ${new URL(request.url, "http://x").pathname}`;
/** A fetch that records the URLs the client sends (each send once, whatever fetch does below). */
function recording() {
  const sent: string[] = [];
  const fetcher: typeof fetch = (input, init) => {
    sent.push(String(input instanceof Request ? input.url : input));
    return fetch(input, init);
  };
  return { fetch: fetcher, sent };
}

describe("a 421 WRONG_REGION", () => {
  it("is followed at most 3 times by default", () => {
    expect(DEFAULT_MAX_CELL_FOLLOWS).toBe(3);
  });

  it("between two cells naming each other ends with CellUnreachable after 1 + maxCellFollows requests", async () => {
    let eu = "";
    const us = await cell((_request, response) => wrongRegion(response, eu));
    const euServer = await cell((_request, response) => wrongRegion(response, us.url, "us-east-1"));
    eu = euServer.url;
    const wire = recording();
    const client = new Client({ baseUrl: us.url, apiKey: "k", fetch: wire.fetch });
    const started = Date.now();
    const failure = await client.projects.list().catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(failure).toBeInstanceOf(CellUnreachable);
    expect(failure).toBeInstanceOf(ConnectionError);
    expect(failure).toMatchObject({ reason: "follow_limit", baseUrl: us.url, region: "us-east-1",
                                    visited: [us.url, eu, us.url, eu] });
    expect(String((failure as Error).message)).toContain("maxCellFollows");
    expect(wire.sent).toHaveLength(1 + DEFAULT_MAX_CELL_FOLLOWS);
    expect(us.seen.length + euServer.seen.length).toBe(2 * (1 + DEFAULT_MAX_CELL_FOLLOWS));   // fetch's second try of each 421
    expect(client.transport.baseUrl).toBe(us.url);   // no cell served: the kept one is unchanged

    const once = recording();
    await expect(new Client({ baseUrl: us.url, apiKey: "k", maxCellFollows: 1, fetch: once.fetch }).projects.list())
      .rejects.toBeInstanceOf(CellUnreachable);
    expect(once.sent).toEqual([`${us.url}/api/v1/projects`, `${eu}/api/v1/projects`]);
  });

  it("to a cell that cannot be reached throws CellUnreachable naming it; the entry is asked once", async () => {
    const home = await closedUrl();
    const entry = await cell((_request, response) => wrongRegion(response, home));
    const wire = recording();
    const client = new Client({ baseUrl: entry.url, apiKey: "k", fetch: wire.fetch });
    const failure = await client.projects.list().catch((e: unknown) => e) as CellUnreachable;
    expect(failure).toBeInstanceOf(CellUnreachable);
    expect(failure).toMatchObject({ reason: "unreachable", baseUrl: home, region: "eu-central-1" });
    expect(failure.message).toContain(home);
    expect(failure.message).toContain(entry.url);
    await expect(client.projects.create({ name: "Apollo" })).rejects.toBeInstanceOf(CellUnreachable);
    expect(wire.sent).toEqual([`${entry.url}/api/v1/projects`, `${home}/api/v1/projects`,
                               `${entry.url}/api/v1/projects`, `${home}/api/v1/projects`]);
  });

  it("is followed along a chain to the cell that serves, which later calls use (onMoved once)", async () => {
    let newHome = "";
    let oldHome = "";
    const entry = await cell((_request, response) => wrongRegion(response, oldHome));
    const old = await cell((_request, response) => wrongRegion(response, newHome, "ap-northeast-1"));
    const served = await cell((_request, response) => page(response));
    [oldHome, newHome] = [old.url, served.url];
    const moved: string[] = [];
    const wire = recording();
    const client = new Client({ baseUrl: entry.url, apiKey: "k", onMoved: (url) => moved.push(url), fetch: wire.fetch });
    await client.projects.list();
    await client.projects.list();
    expect(wire.sent.map((url) => new URL(url).origin)).toEqual([entry.url, old.url, served.url, served.url]);
    expect(moved).toEqual([served.url]);
    expect(served.seen[0]?.headers.authorization).toBe("Bearer k");
  });

  it("to a kept cell that is lost goes back to the entry once: a new home is reached, the lost one named again ends the call", async () => {
    let home = "";
    const lost = await cell((_request, response) => page(response));
    const failedOver = await cell((request, response) => (request.method === "POST"
      ? json(response, 201, { id: "proj_1" }) : page(response)));
    const entry = await cell((_request, response) => wrongRegion(response, home));
    home = lost.url;
    const moved: string[] = [];
    const wire = recording();
    const client = new Client({ baseUrl: entry.url, apiKey: "k", onMoved: (url) => moved.push(url), fetch: wire.fetch });
    await client.projects.list();
    await lost.close();
    await expect(client.projects.list()).rejects.toMatchObject({ name: "CellUnreachable", baseUrl: lost.url });
    home = failedOver.url;   // the tenant failed over
    expect(await client.projects.create({ name: "Apollo" })).toEqual({ id: "proj_1" });   // nothing reached the lost cell
    expect(moved).toEqual([lost.url, failedOver.url]);
    expect(wire.sent.map((url) => new URL(url).origin)).toEqual([
      entry.url, lost.url,               // followed to the home, which served
      lost.url, entry.url,               // the home lost: the entry names it again, the call ends
      lost.url, entry.url, failedOver.url,   // after the failover the entry names the new home
    ]);
  });

  it("with maxCellFollows 0 is not followed: CellUnreachable at once", async () => {
    const entry = await cell((_request, response) => wrongRegion(response, "http://127.0.0.1:9"));
    const wire = recording();
    const client = new Client({ baseUrl: entry.url, apiKey: "k", maxCellFollows: 0, fetch: wire.fetch });
    await expect(client.projects.list()).rejects.toMatchObject({ reason: "follow_limit", baseUrl: "http://127.0.0.1:9" });
    expect(wire.sent).toHaveLength(1);
  });
});

describe("a 503", () => {
  const moving = (response: ServerResponse) => error(response, 503, "SERVICE_UNAVAILABLE",
    { reason: "tenant_moving", retryAfterSeconds: 1 }, { "retry-after": "1" });
  const stalled = (response: ServerResponse) => error(response, 503, "SERVICE_UNAVAILABLE",
    { retryAfterSeconds: 1 }, { "retry-after": "1" });

  it("with Retry-After 1 twice then 200 succeeds in 3 requests", async () => {
    let calls = 0;
    const server = await cell((_request, response) => (++calls < 3 ? moving(response) : json(response, 200, { id: "proj_1" })));
    const client = new Client({ baseUrl: server.url, apiKey: "k" });
    const started = Date.now();
    expect(await client.projects.update("proj_1", { name: "x" })).toEqual({ id: "proj_1" });   // a write while the tenant moves
    expect(server.seen).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);   // waited as told (a lower bound: never too early)
  });

  it("while a tenant's move pauses its writes for 10 s (Retry-After 2) is ridden out with the defaults", async () => {
    expect(DEFAULT_MAX_RETRIES).toBe(10);
    let calls = 0;
    const server = await cell((_request, response) => (++calls <= 5
      ? error(response, 503, "SERVICE_UNAVAILABLE", { reason: "tenant_moving" }, { "retry-after": "0.2" })
      : json(response, 200, { id: "proj_1" })));
    // Retry-After 0.2 stands for the service's 2 s here: the count of refusals is what matters
    expect(await new Client({ baseUrl: server.url, apiKey: "k" }).projects.update("proj_1", { name: "x" }))
      .toEqual({ id: "proj_1" });
    expect(server.seen).toHaveLength(6);
  });

  it("forever ends once the call's retry time is spent", async () => {
    expect(DEFAULT_MAX_RETRY_TIME_SECONDS).toBe(30);
    const server = await cell((_request, response) => moving(response));
    // attempts at 0, 1 and 2 s; a third wait would end at 3 s, past 2.5 s (maxRetries, 100, is not what stops it)
    const client = new Client({ baseUrl: server.url, apiKey: "k", maxRetries: 100, maxRetryTimeSeconds: 2.5 });
    const started = Date.now();
    await expect(client.projects.update("proj_1", { name: "x" })).rejects.toBeInstanceOf(ServiceUnavailable);
    expect(server.seen).toHaveLength(3);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it("of a stalled datastore is sent again for a GET and a create that takes an Idempotency-Key, not for one that does not", async () => {
    const counts: Record<string, number> = {};
    const server = await cell((request, response) => {
      const key = pathOf(request);
      counts[key] = (counts[key] ?? 0) + 1;
      if (counts[key] === 1) return stalled(response);
      return json(response, request.method === "POST" ? 201 : 200, { id: "x", items: [], nextCursor: null });
    });
    const client = new Client({ baseUrl: server.url, apiKey: "k" });
    await client.projects.list();
    await client.projects.create({ name: "Apollo" });
    await expect(client.apiKeys.create({ name: "ci", type: "ci", environment: "Production" }))
      .rejects.toBeInstanceOf(ServiceUnavailable);   // POST /api-keys takes no key: its change may have been made
    expect(counts).toEqual({ "GET /api/v1/projects": 2, "POST /api/v1/projects": 2, "POST /api/v1/api-keys": 1 });
    const creates = server.seen.filter((s) => pathOf(s) === "POST /api/v1/projects").map((s) => s.headers["idempotency-key"]);
    expect(new Set(creates).size).toBe(1);
    expect(server.seen.find((s) => pathOf(s) === "POST /api/v1/api-keys")?.headers["idempotency-key"]).toBeUndefined();
  });

  it("or a 429 whose Retry-After is an HTTP date is waited for", async () => {
    let calls = 0;
    const server = await cell((_request, response) => (++calls === 1
      ? error(response, 429, "RATE_LIMIT_EXCEEDED", {}, { "retry-after": new Date(Date.now() + 1000).toUTCString() })
      : page(response)));
    await new Client({ baseUrl: server.url, apiKey: "k" }).projects.list();
    expect(server.seen).toHaveLength(2);
  });
});

describe("the session's refresh", () => {
  /** The tenant's cell (which holds no session) and the account's (which holds no tenant). */
  async function twoCells() {
    let issued = 0;
    const urls = { tenant: "", account: "" };
    const grant = (): TokenGrant => ({ accessToken: `t${++issued}`, expiresIn: 900, refreshToken: `r${issued}` });
    const tenant = await cell((request, response) => (request.url.startsWith("/api/v1/auth/")
      ? wrongRegion(response, urls.account) : page(response)));
    const account = await cell((request, response) => (request.url.startsWith("/api/v1/auth/")
      ? json(response, 200, request.url === "/api/v1/auth/logout" ? { loggedOut: true } : grant())
      : wrongRegion(response, urls.tenant, "us-east-1")));
    Object.assign(urls, { tenant: tenant.url, account: account.url });
    return { tenant, account };
  }

  it("answered 421 follows to the account's cell; the tenant's calls stay in the tenant's", async () => {
    const { tenant, account } = await twoCells();
    let now = 1_000_000;
    const moved: string[] = [];
    const wire = recording();
    const session = new Session({ exchange: (s) => s.refresh(), now: () => now });
    const client = new Client({ baseUrl: tenant.url, session, onMoved: (url) => moved.push(url), fetch: wire.fetch });
    await client.projects.list();          // no token: the exchange refreshes (the cookie), at the tenant's cell first
    now += 900_000;                        // expired: refreshed again, at the account's cell directly
    await client.projects.list();
    expect(wire.sent).toEqual([`${tenant.url}/api/v1/auth/refresh`, `${account.url}/api/v1/auth/refresh`,
                               `${tenant.url}/api/v1/projects`, `${account.url}/api/v1/auth/refresh`,
                               `${tenant.url}/api/v1/projects`]);
    const lists = tenant.seen.filter((s) => pathOf(s) === "GET /api/v1/projects");
    expect(lists.map((s) => s.headers.authorization)).toEqual(["Bearer t1", "Bearer t2"]);
    expect(JSON.parse(account.seen.at(-1)?.body ?? "{}")).toEqual({ refreshToken: "r1" });
    expect(moved).toEqual([]);
    expect(client.transport.baseUrl).toBe(tenant.url);
  });

  it("after a login answered 421 goes to the account's cell; the tenant's calls learn theirs from a 421", async () => {
    const { tenant, account } = await twoCells();
    let now = 1_000_000;
    const wire = recording();
    const session = new Session({ exchange: (s) => s.refresh(), now: () => now });
    const client = new Client({ baseUrl: tenant.url, session, fetch: wire.fetch });
    await session.login("a@example.com", "right");
    await client.projects.list();          // tried in the account's cell first (the workspace is mostly there)
    now += 900_000;
    await client.projects.list();
    await session.logout();
    expect(wire.sent).toEqual([
      `${tenant.url}/api/v1/auth/login`, `${account.url}/api/v1/auth/login`,
      `${account.url}/api/v1/projects`, `${tenant.url}/api/v1/projects`,
      `${account.url}/api/v1/auth/refresh`, `${tenant.url}/api/v1/projects`,
      `${account.url}/api/v1/auth/logout`,
    ]);
  });

  it("out of reach is the session's failure: the tenant's call is not sent elsewhere for it", async () => {
    const urls = { tenant: "", one: "", two: "" };
    let granted = false;
    const entry = await cell((request, response) => wrongRegion(response, request.url.startsWith("/api/v1/auth/")
      ? urls.one : urls.tenant));
    const tenant = await cell((_request, response) => page(response));
    const one = await cell((_request, response) => {
      if (granted) return wrongRegion(response, urls.two);   // the account's cells disagree from now on
      granted = true;
      return json(response, 200, { accessToken: "t1", expiresIn: 900, refreshToken: "r1" });
    });
    const two = await cell((_request, response) => wrongRegion(response, urls.one));
    Object.assign(urls, { tenant: tenant.url, one: one.url, two: two.url });
    let now = 1_000_000;
    const wire = recording();
    const session = new Session({ exchange: (s) => s.refresh(), now: () => now });
    const client = new Client({ baseUrl: entry.url, session, fetch: wire.fetch });
    await client.projects.list();
    const before = wire.sent.length;
    now += 900_000;
    await expect(client.projects.list()).rejects.toMatchObject({ name: "CellUnreachable", reason: "follow_limit" });
    expect(wire.sent.slice(before).map((url) => new URL(url).origin)).toEqual([one.url, two.url, one.url, two.url]);
    expect(client.transport.baseUrl).toBe(tenant.url);
  });

  it("sent round in circles ends with CellUnreachable, not a 401", async () => {
    let other = "";
    const one = await cell((_request, response) => wrongRegion(response, other));
    const two = await cell((_request, response) => wrongRegion(response, one.url));
    other = two.url;
    const unauthorized: unknown[] = [];
    const wire = recording();
    const session = new Session({ onUnauthorized: (e) => unauthorized.push(e) });
    new Client({ baseUrl: one.url, session, fetch: wire.fetch });
    await expect(session.refresh()).rejects.toBeInstanceOf(CellUnreachable);
    expect(wire.sent).toHaveLength(1 + DEFAULT_MAX_CELL_FOLLOWS);
    expect(unauthorized).toEqual([]);
  });
});
