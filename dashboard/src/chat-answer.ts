/**
 * The answer being streamed, built event by event from the chat stream (docs/chat-and-streaming.md):
 * its text so far, the tools it used, its usage, its error and whether it is done.
 */
import type { ChatEvent } from "@svc/client";

export interface ToolUse { toolUseId: string; name: string; input: unknown; status: string | null; result: unknown }

export interface Answer {
  messageId: string | null;
  model: string | null;
  text: string;
  tools: ToolUse[];
  usage: { inputTokens: number; outputTokens: number; microCredits: number; estimated: boolean } | null;
  stopReason: string | null;
  error: { code: string; message: string } | null;
  done: "completed" | "failed" | null;
}

export const EMPTY_ANSWER: Answer = {
  messageId: null, model: null, text: "", tools: [], usage: null, stopReason: null, error: null, done: null,
};

/** The answer after one more event (a new object; the one given is not changed). */
export function applyEvent(answer: Answer, event: ChatEvent): Answer {
  switch (event.event) {
    case "message_start":
      return { ...answer, messageId: event.data.messageId, model: event.data.model };
    case "content_delta":
      return { ...answer, text: answer.text + event.data.text };
    case "tool_use":
      return { ...answer, tools: [...answer.tools, { toolUseId: event.data.toolUseId, name: event.data.name,
                                                       input: event.data.input, status: null, result: null }] };
    case "tool_result":
      return { ...answer, tools: answer.tools.map((tool) => tool.toolUseId === event.data.toolUseId
        ? { ...tool, status: event.data.status, result: event.data.result } : tool) };
    case "usage": {
      const { inputTokens, outputTokens, microCredits, estimated } = event.data;
      return { ...answer, usage: { inputTokens, outputTokens, microCredits, estimated } };
    }
    case "message_stop":
      return { ...answer, stopReason: event.data.stopReason };
    case "error":
      return { ...answer, error: { code: event.data.code, message: event.data.message } };
    case "done":
      return { ...answer, done: event.data.status };
    default:
      return answer;
  }
}
