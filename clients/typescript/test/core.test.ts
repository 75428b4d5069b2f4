/** The transport and the streams, against real HTTP servers on loopback. */

import { readFileSync } from "node:fs";

import { afterEach, describe, expect, it } from "vitest";

import {
  Client, ConnectionError, Conflict, NotFound, OPERATIONS, RateLimited, TimeoutError, ValidationError,
} from "../src/index.js";
import { error, json, serve, type TestServer } from "./server.js";

let server: TestServer | undefined;
afterEach(async () => { await server?.close(); server = undefined; });

describe("every operation of the document", () => {
  it("is in the client's table with its method, path and success status", () => {
    const document = JSON.parse(readFileSync(new URL("../../../functions/meta/openapi.json", import.meta.url), "utf8")) as {
      paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>;
    };
    const expected: Record<string, { method: string; path: string; status: number }> = {};
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
        const status = Math.min(...Object.keys(operation.responses).filter((c) => c.startsWith("2")).map(Number));
        expected[operation.operationId] = { method: method.toUpperCase(), path, status };
      }
    }
    const table = Object.fromEntries(Object.entries(OPERATIONS).map(([id, o]) => [id, { method: o.method, path: o.path, status: o.status }]));
    expect(Object.keys(expected).length).toBeGreaterThan(100);
    expect(table).toEqual(expected);
  });

  it("is called with its path filled, its query and body, and answers the envelope's data", async () => {
    server = await serve((request, response) => json(response, 200, { seen: request.url, body: request.body }));
    const client = new Client({ baseUrl: server.url, apiKey: "svc_sdk_x" });
    const answer = await client.call("update_project", { path: { id: "proj/../x" }, body: { name: "N" } }) as unknown;
    expect(answer).toEqual({ seen: "/api/v1/projects/proj%2F..%2Fx", body: '{"name":"N"}' });
    expect(server.seen[0]?.headers.authorization).toBe("Bearer svc_sdk_x");
    expect(server.seen[0]?.method).toBe("PATCH");
  });
});

describe("errors", () => {
  it("carry the code, status, request id and details of the envelope, by class", async () => {
    server = await serve((request, response) => (request.url.includes("proj_missing")
      ? error(response, 404, "RESOURCE_NOT_FOUND", { id: "proj_missing" })
      : request.method === "POST" ? error(response, 409, "CONFLICT", { resource: "project" })
        : error(response, 400, "VALIDATION_ERROR", { fields: [{ field: "limit" }] })));
    const client = new Client({ baseUrl: server.url, apiKey: "k" });
    const missing = await client.projects.get("proj_missing").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFound);
    expect(missing).toMatchObject({ status: 404, code: "RESOURCE_NOT_FOUND", requestId: "req-err", details: { id: "proj_missing" } });
    await expect(client.projects.create({ name: "x" })).rejects.toBeInstanceOf(Conflict);
    await expect(client.projects.list({ limit: 0 })).rejects.toBeInstanceOf(ValidationError);
  });
});

describe("retries", () => {
  it("send a 429 again after its Retry-After, a create with the same Idempotency-Key each time", async () => {
    let calls = 0;
    server = await serve((_request, response) => (++calls < 3
      ? error(response, 429, "RATE_LIMIT_EXCEEDED", {}, { "retry-after": "1" })
      : json(response, 201, { id: "proj_1" })));
    const client = new Client({ baseUrl: server.url, apiKey: "k" });
    const started = Date.now();
    expect(await client.projects.create({ name: "x" })).toEqual({ id: "proj_1" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);   // waited as told (a lower bound: never too early)
    const keys = server.seen.map((s) => s.headers["idempotency-key"]);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("give up when the wait does not fit, throwing the 429 with its Retry-After", async () => {
    server = await serve((_request, response) => error(response, 429, "RATE_LIMIT_EXCEEDED", {}, { "retry-after": "3600" }));
    const client = new Client({ baseUrl: server.url, apiKey: "k" });
    await expect(client.projects.list()).rejects.toMatchObject({ retryAfterSeconds: 3600 });
    await expect(client.projects.list()).rejects.toBeInstanceOf(RateLimited);
    expect(server.seen).toHaveLength(2);   // one attempt each
  });
});

describe("time", () => {
  it("a request with no answer ends at the timeout; the caller's signal ends it too", async () => {
    server = await serve(() => { /* never answers */ });
    const client = new Client({ baseUrl: server.url, apiKey: "k", timeoutMs: 200 });
    await expect(client.projects.list()).rejects.toBeInstanceOf(TimeoutError);
    const patient = new Client({ baseUrl: server.url, apiKey: "k", timeoutMs: 60_000 });
    const abort = new AbortController();
    const pending = patient.call("list_projects", { signal: abort.signal });
    abort.abort(new Error("the user left"));
    await expect(pending).rejects.toThrow("the user left");
  });

  it("no server at all is a ConnectionError", async () => {
    const closed = await serve(() => undefined);
    const url = closed.url;
    await closed.close();
    await expect(new Client({ baseUrl: url, apiKey: "k" }).projects.list()).rejects.toBeInstanceOf(ConnectionError);
  });
});

describe("pages", () => {
  it("are followed by their cursor until the last", async () => {
    server = await serve((request, response) => {
      const cursor = new URL(request.url, "http://x").searchParams.get("cursor");
      json(response, 200, cursor === null ? { items: [{ id: "a" }, { id: "b" }], nextCursor: "c2" }
        : { items: [{ id: "c" }], nextCursor: null });
    });
    const client = new Client({ baseUrl: server.url, apiKey: "k" });
    const ids: string[] = [];
    for await (const project of client.projects.iterate({ limit: 2 })) ids.push(project.id);
    expect(ids).toEqual(["a", "b", "c"]);
    expect(server.seen.map((s) => s.url)).toEqual(["/api/v1/projects?limit=2", "/api/v1/projects?limit=2&cursor=c2"]);
  });
});

describe("the chat stream", () => {
  it("resumes with Last-Event-ID after a dropped connection: every event once, in order", async () => {
    const all = [
      'id: 1\nevent: message_start\ndata: {"messageId":"m","role":"assistant","model":"offline"}\n\n',
      'id: 2\nevent: content_delta\ndata: {"messageId":"m","text":"Hel"}\n\n',
      'id: 3\nevent: content_delta\ndata: {"messageId":"m","text":"lo"}\n\n',
      'id: 4\nevent: done\ndata: {"messageId":"m","status":"completed"}\n\n',
    ];
    server = await serve((request, response) => {
      const after = Number(request.headers["last-event-id"] ?? 0);
      response.writeHead(200, { "content-type": "text/event-stream" });
      const rest = all.slice(after);
      if (after === 0) {   // the first connection drops after two events, in the middle of the third
        response.write(rest[0]); response.write(rest[1]); response.write((rest[2] ?? "").slice(0, 10));
        setTimeout(() => response.destroy(), 20);
        return;
      }
      for (const piece of rest) response.write(piece);
      response.end();
    });
    const client = new Client({ baseUrl: server.url, apiKey: "k" });
    const seen: string[] = [];
    let text = "";
    for await (const event of client.chat.stream("chs_1")) {
      seen.push(`${event.id}:${event.event}`);
      if (event.event === "content_delta") text += event.data.text;
    }
    expect(seen).toEqual(["1:message_start", "2:content_delta", "3:content_delta", "4:done"]);
    expect(text).toBe("Hello");
    expect(server.seen.map((s) => s.headers["last-event-id"])).toEqual([undefined, "2"]);
  });

  it("ends at once on 204: nothing to stream", async () => {
    server = await serve((_request, response) => { response.writeHead(204); response.end(); });
    const events = [];
    for await (const event of new Client({ baseUrl: server.url, apiKey: "k" }).chat.stream("chs_1")) events.push(event);
    expect(events).toEqual([]);
  });
});
