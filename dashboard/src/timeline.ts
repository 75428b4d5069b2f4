/**
 * A run's steps as a timeline a person reads: what the model said and asked for, each tool call
 * with its input, result and status, the time each step took, and which call waits for a decision.
 */
import type { Run } from "@svc/client";

export type RunStatus = Run["status"];

export interface StepUsage { inputTokens: number; outputTokens: number }

export interface TimelineEntry {
  /** The step's index in run.steps (stable key). */
  index: number;
  kind: "model" | "tool";
  /** "The model answered", "write_file", ... */
  title: string;
  /** model: its stop reason; tool: success, error, proposed, awaiting_approval, approved, rejected. */
  status: string;
  at: string | null;
  /** Milliseconds since the step before (or the run's start), when both times are known. */
  tookMs: number | null;
  text: string | null;
  /** model: the tools it asked for. */
  asked: { name: string; input: unknown }[];
  input: unknown;
  result: unknown;
  usage: StepUsage | null;
  approval: { decision: string; by: string; at: string; reason: string | null } | null;
  /** The tool call the run waits on (approve or reject it). */
  waiting: boolean;
}

const FINAL: readonly RunStatus[] = ["completed", "failed", "cancelled"];

/** Whether the run still moves by itself (poll it): queued or running. */
export function isMoving(status: RunStatus): boolean {
  return status === "queued" || status === "running";
}

export function isFinal(status: RunStatus): boolean {
  return FINAL.includes(status);
}

function text(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

function millis(iso: string | null): number | null {
  if (!iso) return null;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : t;
}

function usageOf(value: unknown): StepUsage | null {
  if (!value || typeof value !== "object") return null;
  const u = value as Record<string, unknown>;
  return typeof u["inputTokens"] === "number" && typeof u["outputTokens"] === "number"
    ? { inputTokens: u["inputTokens"], outputTokens: u["outputTokens"] } : null;
}

/** The run's steps in order as timeline entries; the waiting call marked when the run waits. */
export function timeline(run: Pick<Run, "steps" | "status" | "created_at">): TimelineEntry[] {
  let previous = millis(run.created_at);
  return run.steps.map((step, index) => {
    const at = text(step["at"]);
    const now = millis(at);
    const tookMs = now !== null && previous !== null ? Math.max(0, now - previous) : null;
    if (now !== null) previous = now;
    if (step["type"] === "model") {
      const uses = Array.isArray(step["toolUses"]) ? step["toolUses"] as Record<string, unknown>[] : [];
      return {
        index, kind: "model", title: uses.length ? "The model asked for tools" : "The model answered",
        status: text(step["stopReason"]) ?? "", at, tookMs, text: text(step["text"]),
        asked: uses.map((u) => ({ name: text(u["name"]) ?? "?", input: u["input"] })),
        input: null, result: null, usage: usageOf(step["usage"]), approval: null, waiting: false,
      };
    }
    const status = text(step["status"]) ?? "";
    const approval = step["approval"] as TimelineEntry["approval"] | undefined;
    return {
      index, kind: "tool", title: text(step["name"]) ?? "tool", status, at, tookMs, text: null, asked: [],
      input: step["input"] ?? null, result: step["result"] ?? null, usage: null, approval: approval ?? null,
      waiting: run.status === "awaiting_approval" && status === "awaiting_approval",
    };
  });
}

/** The tool call the run waits on, or null. */
export function waitingCall(entries: TimelineEntry[]): TimelineEntry | null {
  return entries.find((entry) => entry.waiting) ?? null;
}

/** A duration for a person: "320 ms", "4.2 s", "3 min 5 s". */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** A tool's input or result as readable text (strings as they are, the rest as indented JSON). */
export function shown(value: unknown): string {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}
