/**
 * What the webhook, event log and audit log pages show, as pure functions: a delivery attempt as a
 * row, a datetime-local input's value as the UTC time the API takes, an audit entry's changes as
 * lines, a replay's progress in words.
 */
import { ApiError, type components } from "@svc/client";

type Schemas = components["schemas"];
export type DeliveryAttempt = Schemas["DeliveryAttempt"];
export type Replay = Schemas["Replay"];
export type WebhookEvent = Schemas["WebhookCreate"]["events"][number];

/** The event names a webhook may subscribe to ("*" aside), as the document lists them. */
export const EVENT_TYPES: Exclude<WebhookEvent, "*">[] = [
  "project.created", "project.updated", "project.deleted", "agent.started", "agent.completed", "agent.failed",
  "tenant.created", "user.created", "member.added", "member.removed", "member.role_changed",
];

export interface DeliveryRow {
  key: string;
  eventId: string;
  eventType: string;
  outcome: string;
  /** The receiver's HTTP status, or why there is none. */
  status: string;
  latency: string;
  attempt: string;
  /** The event's own delivery, or the redelivery or replay that sent it again (its id: `sentById`). */
  sentBy: string;
  sentById: string | null;
  error: string;
  attemptedAt: string;
  nextRetryAt: string | null;
  /** The event log holds the event (a test event is not in it, so it cannot be sent again). */
  canRedeliver: boolean;
}

export function deliveryRow(attempt: DeliveryAttempt): DeliveryRow {
  const resent = attempt.resentBy;
  return {
    key: `${attempt.eventId}:${resent ?? ""}:${attempt.attempt}:${attempt.attempted_at}`,
    eventId: attempt.eventId,
    eventType: attempt.eventType,
    outcome: attempt.outcome,
    status: attempt.statusCode !== null ? String(attempt.statusCode)
      : attempt.outcome === "skipped" ? "not sent" : "no answer",
    latency: attempt.latencyMs !== null ? `${Math.round(attempt.latencyMs).toLocaleString("en-US")} ms` : "—",
    attempt: String(attempt.attempt),
    sentBy: !resent ? "its own delivery" : resent.startsWith("rdl_") ? "redelivery"
      : resent.startsWith("rpl_") ? "replay" : "",
    sentById: resent,
    error: attempt.error ?? "",
    attemptedAt: attempt.attempted_at,
    nextRetryAt: attempt.next_retry_at,
    canRedeliver: attempt.eventType !== "webhook.test",
  };
}

/**
 * A datetime-local input's value ("2026-11-25T10:00" or with seconds), a time of the reader's own
 * zone, as the ISO 8601 UTC time the API takes; null when it is not such a value.
 */
export function localInputToIso(value: string): string | null {
  const parts = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?$/.exec(value);
  if (!parts) return null;
  const [year, month, day, hour, minute, second = "0", millis = "0"] = parts.slice(1);
  const date = new Date(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second),
                        Number(millis.padEnd(3, "0")));
  // new Date() rolls an impossible date (Feb 30) over: such a value is not one the input makes
  if (date.getFullYear() !== Number(year) || date.getMonth() !== Number(month) - 1 || date.getDate() !== Number(day)) return null;
  return date.toISOString().replace(/\.000Z$/, "Z");
}

/** A time as a datetime-local input's value (the reader's zone, to the minute). */
export function toLocalInput(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** A replay is done once it has queued every matching event and each queued one was delivered or failed. */
export function replayDone(replay: Replay): boolean {
  return replay.status === "completed" && replay.delivered + replay.failed >= replay.queued;
}

export function replayProgress(replay: Replay): string {
  const counts = `${replay.matched} matched, ${replay.queued} queued, ${replay.skipped} skipped, `
    + `${replay.delivered} delivered, ${replay.failed} failed`;
  if (replayDone(replay)) return `Completed: ${counts}.`;
  if (replay.status === "completed") return `Every event is queued; delivering: ${counts}.`;
  return `Running: ${counts}.`;
}

/** An audit entry's changes, one line a field: "name: old → new" (a creation has no old). */
export function describeChanges(changes: Record<string, unknown>): string[] {
  const show = (value: unknown) => typeof value === "string" ? value : JSON.stringify(value);
  return Object.entries(changes).map(([field, change]) => {
    if (change && typeof change === "object" && !Array.isArray(change) && ("old" in change || "new" in change)) {
      const { old: before, new: after } = change as { old?: unknown; new?: unknown };
      if (before === null || before === undefined) return `${field}: ${show(after ?? null)}`;
      if (after === null || after === undefined) return `${field}: ${show(before)} → removed`;
      return `${field}: ${show(before)} → ${show(after)}`;
    }
    return `${field}: ${show(change)}`;
  });
}

/** A 403 for a feature of a higher plan, as the service details it; null for any other error. */
export function planNeeded(error: unknown): { feature: string; requiredPlan: string; currentPlan: string } | null {
  if (!(error instanceof ApiError) || error.status !== 403) return null;
  const { feature, requiredPlan, currentPlan } = error.details;
  if (typeof feature !== "string" || typeof requiredPlan !== "string") return null;
  return { feature, requiredPlan, currentPlan: typeof currentPlan === "string" ? currentPlan : "current" };
}
