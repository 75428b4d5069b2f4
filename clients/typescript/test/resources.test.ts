/** Each resource method sends the operation it names: its method and filled path, on a recording server. */

import { afterEach, describe, expect, it } from "vitest";

import { Client } from "../src/index.js";
import { json, serve, type TestServer } from "./server.js";

let server: TestServer | undefined;
afterEach(async () => { await server?.close(); server = undefined; });

const drain = async (pages: AsyncGenerator<unknown>) => { for await (const _ of pages) { /* every page */ } };

describe("the resources", () => {
  it("reach their operations", async () => {
    server = await serve((_request, response) => json(response, 200, { items: [], nextCursor: null }));
    const svc = new Client({ baseUrl: server.url, apiKey: "k" });
    const calls: [() => Promise<unknown>, string][] = [
      [() => svc.webhooks.create({ url: "https://example.com/hook", events: ["project.created"] }), "POST /api/v1/webhooks"],
      [() => svc.webhooks.update("wh_1", { enabled: false }), "PATCH /api/v1/webhooks/wh_1"],
      [() => drain(svc.webhooks.iterateDeliveries("wh_1")), "GET /api/v1/webhooks/wh_1/deliveries"],
      [() => svc.webhooks.test("wh_1"), "POST /api/v1/webhooks/wh_1/test"],
      [() => svc.webhooks.rotateSecret("wh_1"), "POST /api/v1/webhooks/wh_1/rotate-secret"],
      [() => svc.secrets.create({ name: "TOKEN", value: "v" }), "POST /api/v1/secrets"],
      [() => svc.secrets.delete("sec_1"), "DELETE /api/v1/secrets/sec_1"],
      [() => drain(svc.secrets.iterate()), "GET /api/v1/secrets"],
      [() => svc.tenants.updateSettings("ten_1", {}), "PATCH /api/v1/tenants/ten_1/settings"],
      [() => drain(svc.members.iterate()), "GET /api/v1/members"],
      [() => svc.members.remove("usr_1"), "DELETE /api/v1/members/usr_1"],
      [() => svc.members.leave(), "POST /api/v1/members/leave"],
      [() => svc.invitations.resend("inv_1"), "POST /api/v1/invitations/inv_1/resend"],
      [() => svc.billing.summary(), "GET /api/v1/billing/summary"],
      [() => svc.billing.usage(), "GET /api/v1/billing/usage"],
      [() => svc.billing.usage({ from: "2026-11-01", to: "2026-11-30" }), "GET /api/v1/billing/usage?from=2026-11-01&to=2026-11-30"],
      [() => drain(svc.billing.iterateLedger()), "GET /api/v1/billing/ledger"],
      [() => svc.agents.getRun("agt_1", "run_1"), "GET /api/v1/agents/agt_1/runs/run_1"],
      [() => svc.chat.streamToken("chs_1"), "POST /api/v1/chat/sessions/chs_1/stream-token"],
      [() => svc.apiKeys.revoke("key_1"), "DELETE /api/v1/api-keys/key_1"],
      [() => svc.account.changePassword("old", "a new long password"), "POST /api/v1/auth/password"],
      [() => svc.account.sessions({ limit: 5 }), "GET /api/v1/auth/sessions?limit=5"],
      [() => drain(svc.account.iterateSessions()), "GET /api/v1/auth/sessions"],
      [() => svc.account.endSession("ses_1"), "DELETE /api/v1/auth/sessions/ses_1"],
      [() => svc.account.endOtherSessions(), "DELETE /api/v1/auth/sessions"],
      [() => svc.account.updateProfile({ name: "Ada King" }), "PATCH /api/v1/auth/me"],
    ];
    for (const [call, expected] of calls) {
      await call();
      const seen = server.seen.at(-1);
      expect(`${seen?.method} ${seen?.url}`).toBe(expected);
    }
  });
});
