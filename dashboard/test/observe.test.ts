import { ApiError } from "@svc/client";
import { afterEach, describe, expect, it } from "vitest";

import { type DeliveryAttempt, deliveryRow, describeChanges, localInputToIso, planNeeded, type Replay, replayDone,
         replayProgress, toLocalInput } from "../src/observe";

const attempt = (fields: Partial<DeliveryAttempt>): DeliveryAttempt => ({
  eventId: "evt_1", eventType: "project.created", attempt: 1, outcome: "delivered", statusCode: 200, latencyMs: 42.4,
  error: null, next_retry_at: null, attempted_at: "2026-11-25T10:00:00.000Z", resentBy: null, ...fields,
});

describe("a delivery attempt as a row", () => {
  it("shows the status, the latency in ms and who sent it", () => {
    const row = deliveryRow(attempt({ latencyMs: 1234.6 }));
    expect(row).toMatchObject({ outcome: "delivered", status: "200", latency: "1,235 ms", attempt: "1",
                                sentBy: "its own delivery", sentById: null, error: "", canRedeliver: true });
  });

  it("says why there is no status: no answer, or nothing sent", () => {
    const retrying = deliveryRow(attempt({ outcome: "retrying", statusCode: null, latencyMs: null, attempt: 3,
                                           error: "connection refused", next_retry_at: "2026-11-25T10:05:00Z" }));
    expect(retrying).toMatchObject({ status: "no answer", latency: "—", attempt: "3", error: "connection refused",
                                     nextRetryAt: "2026-11-25T10:05:00Z" });
    expect(deliveryRow(attempt({ outcome: "skipped", statusCode: null })).status).toBe("not sent");
  });

  it("names the redelivery or replay that sent an event again, and keeps their rows apart", () => {
    const first = deliveryRow(attempt({}));
    const resent = deliveryRow(attempt({ resentBy: "rdl_9" }));
    expect([resent.sentBy, resent.sentById]).toEqual(["redelivery", "rdl_9"]);
    const replayed = deliveryRow(attempt({ resentBy: "rpl_3" }));
    expect([replayed.sentBy, replayed.sentById]).toEqual(["replay", "rpl_3"]);
    expect(deliveryRow(attempt({ resentBy: "xyz_1" })).sentBy).toBe("");
    expect(resent.key).not.toBe(first.key);
  });

  it("offers no redelivery of a test event (the event log does not keep it)", () => {
    expect(deliveryRow(attempt({ eventType: "webhook.test" })).canRedeliver).toBe(false);
  });
});

describe("a datetime-local value as the API's UTC time", () => {
  const zone = process.env["TZ"];
  afterEach(() => { process.env["TZ"] = zone; });

  it("reads the value in the reader's zone", () => {
    process.env["TZ"] = "America/Sao_Paulo";   // UTC-3, no summer time
    expect(localInputToIso("2026-11-25T10:00")).toBe("2026-11-25T13:00:00Z");
    process.env["TZ"] = "Asia/Kolkata";        // UTC+5:30: the day before in UTC
    expect(localInputToIso("2026-11-25T02:15")).toBe("2026-11-24T20:45:00Z");
    expect(localInputToIso("2026-11-25T02:15:30.5")).toBe("2026-11-24T20:45:30.500Z");
  });

  it("refuses what the input never makes", () => {
    for (const bad of ["", "2026-11-25", "2026-11-25 10:00", "2026-02-30T10:00", "2026-13-01T10:00", "yesterday"]) {
      expect(localInputToIso(bad), bad).toBeNull();
    }
  });

  it("round-trips with toLocalInput to the minute", () => {
    process.env["TZ"] = "Europe/Berlin";
    const date = new Date("2026-07-01T08:09:59Z");
    expect(toLocalInput(date)).toBe("2026-07-01T10:09");
    expect(localInputToIso(toLocalInput(date))).toBe("2026-07-01T08:09:00Z");
  });
});

describe("a replay's progress", () => {
  const replay = (fields: Partial<Replay>): Replay => ({
    id: "rpl_1", webhookId: "whk_1", status: "running", since: "", until: "", onlyFailed: false, matched: 3,
    queued: 3, skipped: 0, delivered: 1, failed: 0, created_at: "", completed_at: null, ...fields,
  });

  it("is done once completed and every queued event delivered or failed", () => {
    expect(replayDone(replay({}))).toBe(false);
    expect(replayDone(replay({ status: "completed" }))).toBe(false);
    expect(replayProgress(replay({ status: "completed" }))).toMatch(/^Every event is queued; delivering/);
    expect(replayDone(replay({ status: "completed", delivered: 2, failed: 1 }))).toBe(true);
    expect(replayProgress(replay({ status: "completed", delivered: 2, failed: 1 })))
      .toBe("Completed: 3 matched, 3 queued, 0 skipped, 2 delivered, 1 failed.");
    expect(replayDone(replay({ status: "completed", matched: 0, queued: 0, delivered: 0 }))).toBe(true);
  });
});

describe("an audit entry's changes", () => {
  it("reads a creation, a change and a removal", () => {
    expect(describeChanges({
      url: { old: null, new: "https://hooks.example.com/x" },
      events: { old: ["*"], new: ["project.created"] },
      description: { old: "old", new: null },
      secretSource: "generated",
    })).toEqual([
      "url: https://hooks.example.com/x",
      'events: ["*"] → ["project.created"]',
      "description: old → removed",
      "secretSource: generated",
    ]);
  });
});

describe("the plan a feature needs", () => {
  it("reads the service's 403 details, and nothing else", () => {
    const forbidden = new ApiError(403, { code: "FORBIDDEN", message: "no", details: {
      feature: "audit_log_export", requiredPlan: "enterprise", currentPlan: "free" } });
    expect(planNeeded(forbidden)).toEqual({ feature: "audit_log_export", requiredPlan: "enterprise", currentPlan: "free" });
    expect(planNeeded(new ApiError(403, { code: "FORBIDDEN", message: "missing scope" }))).toBeNull();
    expect(planNeeded(new Error("x"))).toBeNull();
  });
});
