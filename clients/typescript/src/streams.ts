/**
 * Server-Sent Events as async iterators of typed events, resumed after a dropped connection.
 *
 * The stream is read with fetch (an API key can be sent, which EventSource cannot) and parsed by
 * eventsource-parser. Each event's id is kept; when the connection drops before the stream's end,
 * the request is sent again with `Last-Event-ID` (at most `maxReconnects` times in a row without an
 * event between), so no event is lost or repeated. A browser page that prefers EventSource asks for
 * a stream token (chat.streamToken) and opens its `streamUrl`.
 */

import { createParser, type EventSourceMessage } from "eventsource-parser";

import { CellUnreachable, ConnectionError } from "./errors.js";
import type { Transport } from "./core.js";

/** One event of a stream: its name, its id (when it has one) and its data, parsed. */
export interface StreamEvent<Name extends string = string, Data = Record<string, unknown>> {
  event: Name;
  id: string | undefined;
  data: Data;
}

export interface StreamOptions {
  /** Resume after this event id (what a previous read saw last). */
  lastEventId?: string;
  /** Reconnections in a row without a new event before giving up (default 5). */
  maxReconnects?: number;
  signal?: AbortSignal;
  /** Query parameters of the stream's URL. */
  query?: Record<string, unknown>;
}

/** The chat answer's events (docs/chat-and-streaming.md). */
export type ChatEvent =
  | StreamEvent<"message_start", { messageId: string; role: "assistant"; model: string; userMessageId?: string; offline?: boolean }>
  | StreamEvent<"content_delta", { messageId: string; text: string }>
  | StreamEvent<"tool_use", { messageId: string; toolUseId: string; name: string; input: unknown }>
  | StreamEvent<"tool_result", { messageId: string; toolUseId: string; name: string; status: string; result: unknown }>
  | StreamEvent<"usage", { messageId: string; inputTokens: number; outputTokens: number; microCredits: number; estimated: boolean }>
  | StreamEvent<"message_stop", { messageId: string; stopReason: string }>
  | StreamEvent<"error", { messageId?: string; code: string; message: string }>
  | StreamEvent<"done", { messageId: string; status: "completed" | "failed" }>;

async function* events(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<EventSourceMessage> {
  const queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => { queue.push(message); } });
  const reader = body.pipeThrough(new TextDecoderStream() as ReadableWritablePair<string, Uint8Array>).getReader();
  const cancel = () => { void reader.cancel(signal?.reason); };
  signal?.addEventListener("abort", cancel, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.feed(value);
      while (queue.length) yield queue.shift() as EventSourceMessage;
    }
  } finally {
    signal?.removeEventListener("abort", cancel);
    reader.releaseLock();
  }
}

/**
 * The events of a stream endpoint, reconnecting with Last-Event-ID when the connection drops before
 * `isLast` says the stream has ended. A 204 (nothing to stream) ends the iteration at once.
 */
export async function* streamEvents<E extends StreamEvent>(
  transport: Transport, path: string, options: StreamOptions, isLast: (event: StreamEvent) => boolean,
): AsyncGenerator<E> {
  let lastEventId = options.lastEventId;
  let failures = 0;
  for (;;) {
    const headers: Record<string, string> = lastEventId ? { "last-event-id": lastEventId } : {};
    let ended = false;
    try {
      const { response } = await transport.send("GET", path, {
        headers, query: options.query, signal: options.signal, accept: "text/event-stream",
      });
      if (response.status === 204 || response.body === null) return;
      for await (const message of events(response.body, options.signal)) {
        const event = { event: message.event ?? "message", id: message.id, data: JSON.parse(message.data) } as E;
        if (message.id) lastEventId = message.id;
        failures = 0;
        yield event;
        if (isLast(event)) { ended = true; break; }
      }
      if (ended) return;
    } catch (error) {
      if (options.signal?.aborted || !(error instanceof ConnectionError || error instanceof TypeError)) throw error;
      if (error instanceof CellUnreachable) throw error;   // the tenant's cell is out of reach: not a dropped stream
    }
    // The connection ended before the stream's last event: resume after the last id seen.
    failures += 1;
    if (failures > (options.maxReconnects ?? 5)) throw new ConnectionError(`the stream ${path} kept dropping`);
    await new Promise((resolve) => setTimeout(resolve, Math.min(250 * 2 ** (failures - 1), 4000)));
  }
}
