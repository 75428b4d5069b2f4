import type { ChatEvent } from "@svc/client";
import { describe, expect, it } from "vitest";

import { applyEvent, EMPTY_ANSWER } from "../src/chat-answer";

const events = (list: [string, Record<string, unknown>][]): ChatEvent[] =>
  list.map(([event, data], i) => ({ event, id: String(i + 1), data: { messageId: "msg_1", ...data } }) as ChatEvent);

describe("the streamed answer", () => {
  it("grows with each text chunk, keeps tools with their results, the usage and how it ended", () => {
    const seen: string[] = [];
    let answer = EMPTY_ANSWER;
    for (const event of events([
      ["message_start", { role: "assistant", model: "offline" }],
      ["content_delta", { text: "[offline model] " }], ["content_delta", { text: "Hello" }],
      ["tool_use", { toolUseId: "t1", name: "list_files", input: { prefix: "." } }],
      ["tool_result", { toolUseId: "t1", name: "list_files", status: "success", result: { files: [] } }],
      ["usage", { inputTokens: 10, outputTokens: 4, cacheReadTokens: 0, cacheWriteTokens: 0, microCredits: 3, estimated: true }],
      ["message_stop", { stopReason: "end_turn" }], ["done", { status: "completed" }],
    ])) {
      answer = applyEvent(answer, event);
      seen.push(answer.text);
    }
    expect(seen.slice(0, 3)).toEqual(["", "[offline model] ", "[offline model] Hello"]);
    expect(answer).toMatchObject({ messageId: "msg_1", model: "offline", text: "[offline model] Hello",
                                   stopReason: "end_turn", done: "completed", error: null,
                                   usage: { inputTokens: 10, outputTokens: 4, microCredits: 3, estimated: true } });
    expect(answer.tools).toEqual([{ toolUseId: "t1", name: "list_files", input: { prefix: "." },
                                    status: "success", result: { files: [] } }]);
    expect(EMPTY_ANSWER.text).toBe("");   // the start is never changed
  });

  it("keeps a failed turn's error", () => {
    let answer = EMPTY_ANSWER;
    for (const event of events([["error", { code: "MODEL_UNAVAILABLE", message: "the model failed" }],
                                ["done", { status: "failed" }]])) answer = applyEvent(answer, event);
    expect(answer.error).toEqual({ code: "MODEL_UNAVAILABLE", message: "the model failed" });
    expect(answer.done).toBe("failed");
  });
});
