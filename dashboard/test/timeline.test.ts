import { describe, expect, it } from "vitest";

import { duration, isFinal, isMoving, shown, timeline, waitingCall } from "../src/timeline";

const started = "2026-11-27T07:00:00.000Z";
const modelStep = {
  type: "model", text: "[offline model] I will use the tool write_file.", stopReason: "tool_use",
  toolUses: [{ toolUseId: "t1", name: "write_file", input: { path: "notes.md", content: "x" } }],
  usage: { inputTokens: 120, outputTokens: 30 }, at: "2026-11-27T07:00:01.500Z",
};
const heldCall = {
  type: "tool", toolUseId: "t1", name: "write_file", input: { path: "notes.md", content: "x" },
  status: "awaiting_approval", result: null, at: "2026-11-27T07:00:01.700Z",
};

describe("a run's steps as a timeline", () => {
  it("gives each model call its text, the tools asked for, its usage and the time since the step before", () => {
    const [model, tool] = timeline({ steps: [modelStep, heldCall], status: "awaiting_approval", created_at: started });
    expect(model).toMatchObject({ kind: "model", title: "The model asked for tools", status: "tool_use",
                                  text: modelStep.text, usage: { inputTokens: 120, outputTokens: 30 }, tookMs: 1500 });
    expect(model?.asked).toEqual([{ name: "write_file", input: { path: "notes.md", content: "x" } }]);
    expect(tool).toMatchObject({ kind: "tool", title: "write_file", status: "awaiting_approval", tookMs: 200,
                                 input: { path: "notes.md", content: "x" }, waiting: true });
  });

  it("marks the held call waiting only while the run waits", () => {
    const waiting = timeline({ steps: [modelStep, heldCall], status: "awaiting_approval", created_at: started });
    expect(waitingCall(waiting)?.index).toBe(1);
    const cancelled = timeline({ steps: [modelStep, heldCall], status: "cancelled", created_at: started });
    expect(waitingCall(cancelled)).toBeNull();
  });

  it("keeps a decided call's approval and a plain answer's title; unknown times give no duration", () => {
    const decided = { ...heldCall, status: "rejected", result: "rejected by the user: not now",
                      approval: { decision: "rejected", by: "usr_1", at: "2026-11-27T07:00:05Z", reason: "not now" } };
    const answer = { type: "model", text: "[offline model] Done.", stopReason: "end_turn", toolUses: [], at: "bad" };
    const entries = timeline({ steps: [modelStep, decided, answer], status: "completed", created_at: started });
    expect(entries[1]?.approval?.reason).toBe("not now");
    expect(entries[1]?.waiting).toBe(false);
    expect(entries[2]).toMatchObject({ title: "The model answered", status: "end_turn", tookMs: null, usage: null });
  });

  it("says which statuses still move, end, and how long a step took", () => {
    expect(["queued", "running"].every((s) => isMoving(s as never))).toBe(true);
    expect(isMoving("awaiting_approval")).toBe(false);
    expect(isFinal("awaiting_approval")).toBe(false);
    expect(isFinal("cancelled")).toBe(true);
    expect(duration(320)).toBe("320 ms");
    expect(duration(4200)).toBe("4.2 s");
    expect(duration(185_000)).toBe("3 min 5 s");
    expect(shown({ a: 1 })).toBe('{\n  "a": 1\n}');
    expect(shown("text")).toBe("text");
    expect(shown(null)).toBe("");
  });
});
