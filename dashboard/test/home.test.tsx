import { ApiError, type Client, type Me } from "@svc/client";
import { cleanup, render, waitFor } from "@testing-library/preact";
import { afterEach, describe, expect, it } from "vitest";

import { type Signed, SignedContext } from "../src/api";
import { Home } from "../src/pages/home";
import { forgetNames } from "../src/people";

afterEach(() => { cleanup(); forgetNames(); });

const OWNER = ["projects:read", "projects:write", "agents:read", "agents:write", "billing:read", "billing:write",
               "webhooks:read", "webhooks:write", "events:read", "keys:read", "keys:write", "members:read",
               "members:write", "audit:read"];

async function* items<T>(list: T[]) { yield* list; }

const SUMMARY = {
  plan: "free", testMode: true, balance: { microCredits: 12_500_000 },
  usage: { periodStart: "2026-11-01T00:00:00Z", periodEnd: "2026-12-01T00:00:00Z", totalMicroCredits: 0 },
};

/** A client answering every read the Overview makes; `failing` names one that fails (with a request id),
 * `pending` one that never answers; `calls` counts each read. */
function fakeClient({ failing, pending }: { failing?: string; pending?: string } = {}) {
  const calls: string[] = [];
  const answer = <T,>(name: string, value: T): Promise<T> => {
    calls.push(name);
    if (name === pending) return new Promise<T>(() => {});
    if (name === failing) {
      return Promise.reject(new ApiError(500, { code: "INTERNAL_ERROR", message: "Something broke." }, "req-overview-1"));
    }
    return Promise.resolve(value);
  };
  const client = {
    transport: { entryUrl: "http://api.test" },
    billing: {
      summary: () => answer("summary", SUMMARY),
      usage: () => answer("usage", { from: "2026-11-01", to: "2026-11-29", models: [], days: [] }),
    },
    agents: { iterate: () => items([{ id: "agt_1", name: "Notes writer" }]) },
    webhooks: { iterate: () => items([]) },
    members: { iterate: () => items([{ userId: "usr_1", name: "Ada", email: "ada@example.com", role: "owner" }]) },
    invitations: { iterate: () => items([{ id: "ivt_1", status: "pending" }, { id: "ivt_2", status: "accepted" }]) },
    apiKeys: { iterate: () => items([]) },
    projects: { list: () => answer("projects", { items: [], nextCursor: null }) },
    call: (operation: string) => {
      if (operation === "list_runs") {
        return answer("runs", { items: [{ id: "run_1", agentId: "agt_1", goal: "Write notes.md", status: "awaiting_approval",
                                          created_at: "2026-11-29T04:00:00Z", steps: [] }], nextCursor: null });
      }
      if (operation === "list_events") {
        return answer("events", { items: [{ id: "evt_1", type: "project.created", timestamp: "2026-11-29T04:00:00Z",
                                            tenantId: "ten_1", data: { name: "Apollo" } }], nextCursor: null });
      }
      return answer(operation, { items: [], nextCursor: null });
    },
  } as unknown as Client;
  return { client, calls };
}

function show(client: Client, scopes = OWNER) {
  const signed: Signed = { client, me: { user: { email: "ada@example.com" }, tenant: { id: "ten_1", name: "Acme", role: "owner",
                                                                                          plan: "free" }, scopes } as unknown as Me,
                           reload: async () => {}, switchTenant: async () => {}, signOut: async () => {} };
  return render(<SignedContext.Provider value={signed}><Home /></SignedContext.Provider>);
}

const region = (container: Element, id: string) => container.querySelector<HTMLElement>(`[data-testid="${id}"]`);

describe("the Overview", () => {
  it("shows each block busy with a skeleton until its own read answers", async () => {
    const { container } = show(fakeClient({ pending: "events" }).client);
    await waitFor(() => expect(region(container, "members")!.getAttribute("aria-busy")).toBe("false"));
    const activity = region(container, "activity")!;
    expect(activity.getAttribute("aria-busy")).toBe("true");
    expect(activity.querySelector(".skeleton")).not.toBeNull();
    expect(activity.querySelector("[role=status]")!.textContent).toBe("Loading the recent events…");
    expect(region(container, "members")!.textContent).toContain("1 member, 1 open invitation.");
    expect(region(container, "members")!.querySelector(".skeleton")).toBeNull();
  });

  it("keeps the balance's block busy while its chart loads, the balance already shown", async () => {
    const { container } = show(fakeClient({ pending: "usage" }).client);
    await waitFor(() => expect(region(container, "balance")!.textContent).toContain("12.5 credits"));
    expect(region(container, "balance")!.getAttribute("aria-busy")).toBe("true");
    expect(region(container, "balance")!.querySelector(".skeleton")).not.toBeNull();
  });

  it("shows a failed read in its own block with the request id, and the other blocks still", async () => {
    const { container } = show(fakeClient({ failing: "summary" }).client);
    await waitFor(() => expect(region(container, "balance")!.querySelector("[role=alert]")).not.toBeNull());
    expect(region(container, "balance")!.textContent).toContain("Request id: req-overview-1");
    await waitFor(() => expect(region(container, "activity")!.textContent).toContain("Project Apollo was created"));
    await waitFor(() => expect(region(container, "approvals")!.textContent).toContain("Notes writer: Write notes.md"));
    expect(region(container, "approvals")!.querySelector("a")!.getAttribute("href")).toBe("#/agents/agt_1/runs/run_1");
    expect(container.querySelectorAll("[role=alert]")).toHaveLength(1);
  });

  it("reads nothing the caller's scopes cannot read, and shows no block for it", async () => {
    const { client, calls } = fakeClient();
    const member = ["projects:read", "agents:read", "webhooks:read", "members:read"];
    const { container } = show(client, member);
    await waitFor(() => expect(region(container, "balance")!.getAttribute("aria-busy")).toBe("false"));
    expect(region(container, "balance")!.textContent).toContain("12.5 credits");
    for (const id of ["activity", "first-steps"]) expect(region(container, id)).toBeNull();
    expect(calls).not.toContain("usage");
    expect(calls).not.toContain("events");
    expect(container.querySelector("svg[role=img]")).toBeNull();
    expect(container.querySelectorAll("[role=alert]")).toHaveLength(0);
  });

  it("shows an empty tenant its first steps, the curl line with the key's placeholder", async () => {
    const { container } = show(fakeClient().client);
    await waitFor(() => expect(region(container, "first-steps")!.getAttribute("aria-busy")).toBe("false"));
    const steps = region(container, "first-steps")!;
    expect([...steps.querySelectorAll("h3")].map((h) => h.textContent)).toEqual([
      "Create an API key To do", "Call the API with it To do", "Create a project To do", "Register a webhook To do"]);
    expect(steps.querySelector("code[aria-label='The first call']")!.textContent)
      .toBe('curl -H "Authorization: Bearer <your key>" http://api.test/api/v1/projects');
  });
});
