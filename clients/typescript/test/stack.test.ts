/**
 * The client against the local stack, in Node (driven by tests/e2e/test_typescript_client.py, which
 * starts the stack and gives SVC_BASE_URL, SVC_API_KEY, SVC_EMAIL, SVC_PASSWORD; without them these
 * tests are skipped, and that driver fails on any skip).
 */

import { describe, expect, it, vi } from "vitest";

import {
  Client, codeChallenge, Conflict, deviceLogin, InvalidCredentials, NotFound, Session, Unauthorized,
} from "../src/index.js";

const env = process.env;
const baseUrl = env.SVC_BASE_URL ?? "";
const onStack = describe.skipIf(!baseUrl);

onStack("with an API key", () => {
  const client = new Client({ baseUrl, apiKey: env.SVC_API_KEY ?? "" });

  it("creates, reads, lists page by page and deletes projects, typed", async () => {
    const made = [];
    for (const name of ["ts one", "ts two", "ts three"]) made.push(await client.projects.create({ name, language: "typescript" }));
    expect(made.map((p) => p.name)).toEqual(["ts one", "ts two", "ts three"]);
    const read = await client.projects.get(made[0]!.id);
    expect(read.id).toBe(made[0]!.id);
    const listed: string[] = [];
    for await (const project of client.projects.iterate({ limit: 1 })) listed.push(project.id);
    expect(listed).toEqual(expect.arrayContaining(made.map((p) => p.id)));
    for (const project of made) await client.projects.delete(project.id);
    await expect(client.projects.get(made[0]!.id)).rejects.toBeInstanceOf(NotFound);
  });

  it("says what the service says, with its request id", async () => {
    const error = await client.call("create_chat_session", { body: { projectId: "proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA" } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Conflict);
    expect(error).toMatchObject({ status: 409, code: "CONFLICT", details: { resource: "project" } });
    expect((error as Conflict).requestId).toMatch(/\S/);
  });

  it("streams a chat answer as typed events until its end", async () => {
    const session = await client.chat.createSession({ title: "from TypeScript" });
    await client.chat.send(session.id, "Say hello.");
    let text = "";
    const names: string[] = [];
    for await (const event of client.chat.stream(session.id)) {
      names.push(event.event);
      if (event.event === "content_delta") text += event.data.text;
    }
    expect(names[0]).toBe("message_start");
    expect(names.at(-1)).toBe("done");
    expect(text).toContain("[offline model]");
    // EventSource's path: a stream token, then the stream's URL with no header at all
    const { streamUrl } = await client.chat.streamToken(session.id) as { streamUrl: string };
    const opened = await fetch(new URL(streamUrl, baseUrl), { headers: { "last-event-id": "0" } });
    expect(opened.status).toBe(200);
    expect(opened.headers.get("content-type")).toContain("text/event-stream");
    expect(await opened.text()).toContain("event: done");
  });

  it("logs a command-line tool in with the device login, approved by the signed-in user", async () => {
    expect(await codeChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"))   // RFC 7636, appendix B
      .toBe("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    const user = new Session();
    const browser = new Client({ baseUrl, session: user });
    await user.login(env.SVC_EMAIL ?? "", env.SVC_PASSWORD ?? "");
    const anonymous = new Client({ baseUrl });
    const token = await deviceLogin(anonymous, {
      intervalSeconds: 0.2,
      onPrompt: ({ authUrl }) => {
        const url = new URL(authUrl);
        const state = new URLSearchParams(url.hash.slice(1)).get("state") ?? "";
        void browser.call("cli_complete", { body: { loginId: url.searchParams.get("loginId") ?? "", state } });
      },
    }) as { token: string };
    expect(token.token).toMatch(/^svc_cli_/);
    const cli = new Client({ baseUrl, apiKey: token.token });
    expect((await cli.me()).credential).toBe("api_key");
  });
});

onStack("with a session (Node: the refresh token in the body)", () => {
  it("signs in, refreshes before expiry, logs out, and a 401 after calls onUnauthorized", async () => {
    let skew = 0;
    const onUnauthorized = vi.fn();
    const session = new Session({
      now: () => Date.now() + skew, onUnauthorized,
      exchange: async (s) => s.refreshToken ? await s.refresh() : null,
    });
    const client = new Client({ baseUrl, session });
    await expect(session.login(env.SVC_EMAIL ?? "", "not the password")).rejects.toBeInstanceOf(InvalidCredentials);
    const first = await session.login(env.SVC_EMAIL ?? "", env.SVC_PASSWORD ?? "");
    expect((await client.me()).user?.email).toBe(env.SVC_EMAIL);
    skew = (first.expiresIn - 59) * 1000;          // 59 s before the token's end: within the buffer
    const refreshedBefore = session.refreshToken;
    expect((await client.me()).credential).toBe("user");
    expect(session.refreshToken).not.toBe(refreshedBefore);   // the exchange refreshed: a new refresh token
    await session.logout();
    await expect(client.me()).rejects.toBeInstanceOf(Unauthorized);
    expect(onUnauthorized).toHaveBeenCalledTimes(1);
  });
});
