import { describe, expect, it } from "vitest";

import { curlLine, firstSteps, heldCall, KEY_PLACEHOLDER, readableBlocks, waitingRuns, webhookTrouble } from "../src/overview";

describe("the first steps", () => {
  const key = (over: Partial<{ createdBy: string; status: "active" | "revoked" | "expired"; last_used_at: string | null }> = {}) =>
    ({ createdBy: "usr_ada", status: "active" as const, last_used_at: null, ...over });

  it("are all to do for an empty tenant, whose service key is not a step taken", () => {
    const start = firstSteps({ keys: [key({ createdBy: "system" })], projects: 0, webhooks: 0 });
    expect(start.steps.map((s) => [s.name, s.done])).toEqual(
      [["key", false], ["call", false], ["project", false], ["webhook", false]]);
    expect(start).toMatchObject({ shown: true, empty: true });
  });

  it("mark a key, its use, a project and a webhook done, each on its own", () => {
    const made = firstSteps({ keys: [key()], projects: 1, webhooks: 0 });
    expect(made.steps.filter((s) => s.done).map((s) => s.name)).toEqual(["key", "project"]);
    expect(made).toMatchObject({ shown: true, empty: false });
    const used = firstSteps({ keys: [key({ last_used_at: "2026-11-29T04:00:00Z" })], projects: 1, webhooks: 1 });
    expect(used.steps.every((s) => s.done)).toBe(true);
    expect(used.shown).toBe(false);
  });

  it("do not count a revoked key", () => {
    expect(firstSteps({ keys: [key({ status: "revoked" })], projects: 0, webhooks: 0 }).steps[0]!.done).toBe(false);
  });

  it("give the curl line with the key's placeholder until one is made", () => {
    expect(curlLine("http://127.0.0.1:3000/", null))
      .toBe(`curl -H "Authorization: Bearer ${KEY_PLACEHOLDER}" http://127.0.0.1:3000/api/v1/projects`);
    expect(curlLine("https://api.example.com", "sk_test_123"))
      .toBe('curl -H "Authorization: Bearer sk_test_123" https://api.example.com/api/v1/projects');
  });
});

describe("what needs attention", () => {
  it("is a webhook failing now or disabled by its deliveries, not one turned off through the API", () => {
    const ok = { enabled: true, disabledReason: null, first_failure_at: null };
    expect(webhookTrouble(ok)).toBeNull();
    expect(webhookTrouble({ ...ok, first_failure_at: "2026-11-28T10:00:00Z" }))
      .toEqual({ state: "failing", since: "2026-11-28T10:00:00Z", reason: null });
    expect(webhookTrouble({ enabled: false, disabledReason: "Deliveries failed for 5 days in a row", first_failure_at: null }))
      .toEqual({ state: "disabled", since: null, reason: "Deliveries failed for 5 days in a row" });
    expect(webhookTrouble({ enabled: false, disabledReason: "disabled through the API", first_failure_at: null })).toBeNull();
  });

  it("is each run awaiting approval, the longest waiting first, with the call it holds", () => {
    const runs = [
      { id: "b", status: "awaiting_approval" as const, created_at: "2026-11-29T02:00:00Z" },
      { id: "c", status: "completed" as const, created_at: "2026-11-29T01:00:00Z" },
      { id: "a", status: "awaiting_approval" as const, created_at: "2026-11-29T01:30:00Z" },
    ];
    expect(waitingRuns(runs).map((r) => r.id)).toEqual(["a", "b"]);
    expect(heldCall({ steps: [{ type: "model" }, { type: "tool", name: "write_file", status: "awaiting_approval",
                                                   input: { path: "notes.md", content: "…" } }] })).toBe("write_file notes.md");
    expect(heldCall({ steps: [{ type: "tool", name: "write_file", status: "success", input: {} }] })).toBeNull();
  });
});

describe("the blocks a caller sees", () => {
  it("leave out what the scopes cannot read", () => {
    const member = ["projects:read", "projects:write", "agents:read", "agents:write", "billing:read", "secrets:read",
                    "tenants:read", "webhooks:read", "events:read", "chat:read", "chat:write", "members:read"];
    expect([...readableBlocks(member)]).toEqual(["balance", "usage", "approvals", "webhooks", "activity", "members"]);
    expect(readableBlocks(member.filter((s) => s !== "billing:read")).has("usage")).toBe(false);
    expect([...readableBlocks([])]).toEqual(["balance"]);
  });
});
