/**
 * What the Overview shows, as pure functions: the first steps of an empty tenant and which are done,
 * the curl line of the first call, which webhooks are failing and which runs wait for approval, and
 * which blocks the caller may read. Its events in plain words are the logs' sentences (sentences.ts).
 */
import type { ApiKey, components, Run } from "@svc/client";

type Schemas = components["schemas"];
export type Webhook = Schemas["Webhook"];

/** The service's own keys (made by no member: "system", "service") are not a step the user took. */
export function madeByAMember(key: Pick<ApiKey, "createdBy">): boolean {
  return key.createdBy.startsWith("usr_");
}

export type StepName = "key" | "call" | "project" | "webhook";

export interface Step {
  name: StepName;
  title: string;
  done: boolean;
}

export interface TenantStart {
  /** The tenant's keys, projects and webhooks (what the first steps look for). */
  keys: Pick<ApiKey, "createdBy" | "status" | "last_used_at">[];
  projects: number;
  webhooks: number;
}

/**
 * The first steps and which are done: a key made by a member; a call made with one (its last use
 * is recorded); a project; a webhook. `shown`: the tenant is still starting (a step is left).
 */
export function firstSteps(start: TenantStart): { steps: Step[]; shown: boolean; empty: boolean } {
  const keys = start.keys.filter((k) => madeByAMember(k) && k.status === "active");
  const steps: Step[] = [
    { name: "key", title: "Create an API key", done: keys.length > 0 },
    { name: "call", title: "Call the API with it", done: keys.some((k) => k.last_used_at !== null) },
    { name: "project", title: "Create a project", done: start.projects > 0 },
    { name: "webhook", title: "Register a webhook", done: start.webhooks > 0 },
  ];
  return { steps, shown: steps.some((s) => !s.done),
           empty: keys.length === 0 && start.projects === 0 && start.webhooks === 0 };
}

export const KEY_PLACEHOLDER = "<your key>";

/** The first call: the tenant's projects, with the key (its placeholder until one is made). */
export function curlLine(apiBaseUrl: string, key: string | null): string {
  return `curl -H "Authorization: Bearer ${key ?? KEY_PLACEHOLDER}" ${apiBaseUrl.replace(/\/+$/, "")}/api/v1/projects`;
}

/** Why a webhook's deliveries are not arriving, or null when they are. Turned off through the API
 * (by someone's choice) is not a failure. */
export function webhookTrouble(webhook: Pick<Webhook, "enabled" | "disabledReason" | "first_failure_at">):
  { state: "disabled" | "failing"; since: string | null; reason: string | null } | null {
  if (!webhook.enabled) {
    if (!webhook.disabledReason || webhook.disabledReason === "disabled through the API") return null;
    return { state: "disabled", since: null, reason: webhook.disabledReason };
  }
  if (webhook.first_failure_at) return { state: "failing", since: webhook.first_failure_at, reason: null };
  return null;
}

/** The runs waiting for an approval, oldest wait first. */
export function waitingRuns<T extends Pick<Run, "status" | "created_at">>(runs: T[]): T[] {
  return runs.filter((r) => r.status === "awaiting_approval").sort((a, b) => a.created_at.localeCompare(b.created_at));
}

/** The call a waiting run holds: its tool and the file it would change, when it names one. */
export function heldCall(run: Pick<Run, "steps">): string | null {
  const step = [...run.steps].reverse().find((s) => s["type"] === "tool" && s["status"] === "awaiting_approval");
  if (!step) return null;
  const input = step["input"] as Record<string, unknown> | undefined;
  const path = typeof input?.["path"] === "string" ? input["path"] : null;
  return `${String(step["name"])}${path ? ` ${path}` : ""}`;
}

export type Block = "balance" | "usage" | "approvals" | "webhooks" | "activity" | "members" | "firstSteps";

/** The scopes each block reads with; a caller lacking one sees no such block. */
export const BLOCK_SCOPES: Record<Block, string[]> = {
  balance: [],                                  // GET /billing/summary: any credential
  usage: ["billing:read"],
  approvals: ["agents:read"],
  webhooks: ["webhooks:read"],
  activity: ["events:read"],
  members: ["members:read"],
  firstSteps: ["keys:read", "keys:write", "projects:read", "webhooks:read", "webhooks:write"],
};

/** The blocks the caller may read, in the page's order. */
export function readableBlocks(scopes: readonly string[]): Set<Block> {
  const held = new Set(scopes);
  return new Set((Object.keys(BLOCK_SCOPES) as Block[]).filter((b) => BLOCK_SCOPES[b].every((s) => held.has(s))));
}
