/// <reference types="node" />
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

import {
  AUDIT_ACTIONS, AUDIT_SENTENCES, type AuditAction, type AuditEntry, describeAuditEntry, describeEvent, EVENT_SENTENCES,
  EVENT_TYPES_LOGGED, type EventType, type Known,
} from "../src/sentences";

/** The served document (functions/meta/openapi.json): the lists of event types and audit actions it
 * documents, so a type added to the API fails here until it has words and a case below. */
const DOCUMENT = JSON.parse(readFileSync(resolve(dirname(fileURLToPath(import.meta.url)),
                                                 "../../functions/meta/openapi.json"), "utf8")) as {
  paths: Record<string, { get: { parameters: { name: string; schema: { anyOf?: { enum?: string[] }[] } }[] } }> };

function documented(path: string, parameter: string): string[] {
  const found = DOCUMENT.paths[path]!.get.parameters.find((p) => p.name === parameter);
  const values = found?.schema.anyOf?.find((s) => s.enum)?.enum;
  if (!values) throw new Error(`${path} has no enum of ${parameter}`);
  return values;
}

const FORMER = "usr_01JD2Q7ZB6V8S3K4X9W2M5N7PA";   // no longer a member: shown shortened
const known: Known = {
  people: new Map([["usr_ada", "Ada Lovelace"], ["usr_grace", "Grace Hopper"]]),
  objects: new Map([["proj_live", "Apollo"], ["agt_live", "Helper"], ["whk_live", "https://hooks.example.com/svc"],
                    ["key_live", "deploy"], ["inv_live", "grace@example.com"]]),
  kinds: new Set(["proj", "agt", "whk", "key", "inv"]),
};

type Case<T> = [T, string, string?];   // the input, its sentence, its link (none: not linked)

const EVENT_CASES: Record<EventType, Case<Record<string, unknown>>[]> = {
  "project.created": [[{ id: "proj_live", name: "Apollo" }, "Project Apollo was created", "#/projects"],
                      [{ id: "proj_gone", name: "Old" }, "Project Old was created"],   // deleted since: named, not linked
                      [{}, "A project was created"]],
  "project.updated": [[{ id: "proj_live", name: "Apollo", changes: { name: "Apollo" } }, "Project Apollo was changed", "#/projects"]],
  "project.deleted": [[{ id: "proj_gone", name: "Apollo" }, "Project Apollo was deleted"]],
  "agent.started": [[{ runId: "run_9", agentId: "agt_live", status: "running" }, "A run of agent Helper started",
                     "#/agents/agt_live/runs/run_9"],
                    [{ runId: "run_8", agentId: "agt_gone", status: "running" }, "An agent run started"]],
  "agent.completed": [[{ runId: "run_9", agentId: "agt_live", status: "completed" }, "A run of agent Helper completed",
                       "#/agents/agt_live/runs/run_9"]],
  "agent.failed": [[{ runId: "run_9", agentId: "agt_live", status: "failed" }, "A run of agent Helper failed",
                    "#/agents/agt_live/runs/run_9"],
                   [{ runId: "run_9", agentId: "agt_live", status: "cancelled" }, "A run of agent Helper was cancelled",
                    "#/agents/agt_live/runs/run_9"]],
  "tenant.created": [[{ id: "ten_1", name: "Acme" }, "Tenant Acme was created"]],
  "user.created": [[{ id: "usr_ada", name: "Ada Lovelace", email: "ada@example.com" }, "Ada Lovelace signed up", "#/settings/members"],
                   [{ id: "usr_cy", email: "cy@example.com" }, "cy@example.com signed up"]],
  "member.added": [[{ userId: "usr_ada", role: "admin", email: "ada@example.com" }, "Ada Lovelace joined as an admin",
                    "#/settings/members"],
                   [{ userId: "usr_bob", role: "member", email: "bob@example.com" }, "bob@example.com joined as a member"]],
  "member.removed": [[{ userId: "usr_ada", role: "member", reason: "left" }, "Ada Lovelace left", "#/settings/members"],
                     [{ userId: "usr_zed", role: "member", reason: "removed" }, "A member was removed"]],
  "member.role_changed": [[{ userId: "usr_ada", role: "owner", previousRole: "admin" }, "Ada Lovelace became an owner (was an admin)",
                           "#/settings/members"]],
};

const entry = (action: string, changes: Record<string, unknown>, target: [string, string],
               actor: [string, string] = ["user", "usr_ada"]): AuditEntry => ({
  id: "aud_1", tenantId: "ten_1", action, actor: { type: actor[0], id: actor[1] }, target: { type: target[0], id: target[1] },
  changes, sourceIp: "127.0.0.1", requestId: "req_1", created_at: "2026-11-29T04:16:08Z",
});
const made = (fields: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, { old: null, new: v }]));
const hook: [string, string] = ["webhook", "whk_live"];

const AUDIT_CASES: Record<AuditAction, Case<AuditEntry>[]> = {
  "api_key.created": [[entry("api_key.created", made({ name: "deploy", type: "sdk" }), ["api_key", "key_live"]),
                       "Ada Lovelace created the API key deploy", "#/settings/api-keys"]],
  "api_key.rotated": [[entry("api_key.rotated", { generation: { old: 1, new: 2 } }, ["api_key", "key_live"]),
                       "Ada Lovelace rotated the API key deploy", "#/settings/api-keys"]],
  "api_key.revoked": [[entry("api_key.revoked", { status: { old: "active", new: "revoked" } }, ["api_key", "key_gone"],
                             ["api_key", "key_live"]), "The API key deploy revoked the API key key_gone"]],
  "invitation.created": [[entry("invitation.created", made({ email: "grace@example.com", role: "member" }), ["invitation", "inv_live"]),
                          "Ada Lovelace invited grace@example.com as a member", "#/settings/members"]],
  "invitation.resent": [[entry("invitation.resent", { status: { old: "expired", new: "pending" } }, ["invitation", "inv_live"]),
                         "Ada Lovelace sent the invitation to grace@example.com again", "#/settings/members"]],
  "invitation.revoked": [[entry("invitation.revoked", { status: { old: "pending", new: "revoked" } }, ["invitation", "inv_gone"]),
                          "Ada Lovelace revoked an invitation"]],
  "invitation.accepted": [[entry("invitation.accepted", { status: { old: "pending", new: "accepted" } }, ["invitation", "inv_live"],
                                 ["user", "usr_grace"]), "Grace Hopper accepted the invitation to grace@example.com", "#/settings/members"]],
  "member.added": [[entry("member.added", made({ email: "grace@example.com", role: "member" }), ["user", "usr_grace"],
                          ["user", "usr_grace"]), "Grace Hopper joined as a member", "#/settings/members"],
                   [entry("member.added", made({ role: "admin" }), ["user", "usr_grace"]),
                    "Ada Lovelace added Grace Hopper as an admin", "#/settings/members"]],
  "member.role_changed": [[entry("member.role_changed", { role: { old: "member", new: "admin" } }, ["user", "usr_grace"]),
                           "Ada Lovelace made Grace Hopper an admin (was a member)", "#/settings/members"]],
  "member.removed": [[entry("member.removed", { role: "member" }, ["user", FORMER]),
                      "Ada Lovelace removed usr_01JD…7PA (a member)"]],
  "member.left": [[entry("member.left", { role: "member" }, ["user", FORMER], ["user", FORMER]), "usr_01JD…7PA left the tenant"]],
  "ownership.transferred": [[entry("ownership.transferred", { previousOwner: "usr_ada", newOwner: "usr_grace" }, ["user", "usr_grace"]),
                             "Ada Lovelace handed the ownership to Grace Hopper", "#/settings/members"]],
  "tenant.created": [[entry("tenant.created", made({ name: "Acme", plan: "free" }), ["tenant", "ten_1"]),
                      "Ada Lovelace created the tenant Acme"]],
  "tenant.settings_changed": [[entry("tenant.settings_changed", { ipAllowlist: { old: [], new: ["10.0.0.0/8"] } }, ["tenant", "ten_1"]),
                               "Ada Lovelace changed the tenant's settings (ipAllowlist)", "#/settings/network"]],
  "tenant.region_preferences_changed": [[entry("tenant.region_preferences_changed",
                                               { primaryRegion: { old: "us-east-1", new: "eu-west-1" } }, ["tenant", "ten_1"]),
                                         "Ada Lovelace changed the regional preferences (primaryRegion)", "#/settings/regions"]],
  "tenant.move_started": [[entry("tenant.move_started", { homeRegion: { from: "us-east-1", to: "eu-west-1" } }, ["tenant", "ten_1"]),
                           "Ada Lovelace started moving the tenant from us-east-1 to eu-west-1", "#/settings/regions"]],
  "tenant.failed_over": [[entry("tenant.failed_over", { homeRegion: { old: "us-east-1", new: "eu-west-1" } }, ["tenant", "ten_1"],
                                ["service", "service"]), "The service failed the tenant over to eu-west-1 (from us-east-1)",
                          "#/settings/regions"]],
  "tenant.storage_changed": [[entry("tenant.storage_changed", { provider: { old: "platform", new: "s3" } }, ["tenant", "ten_1"]),
                              "Ada Lovelace changed the tenant's storage (provider)", "#/settings/regions"]],
  "webhook.created": [[entry("webhook.created", made({ url: "https://hooks.example.com/svc", events: ["*"] }), hook),
                       "Ada Lovelace registered the webhook endpoint https://hooks.example.com/svc", "#/webhooks/whk_live"],
                      [entry("webhook.created", made({ url: "https://old.example.com/svc" }), ["webhook", "whk_gone"]),
                       "Ada Lovelace registered the webhook endpoint https://old.example.com/svc"]],
  "webhook.updated": [[entry("webhook.updated", { enabled: { old: true, new: false } }, hook),
                       "Ada Lovelace turned off the webhook endpoint https://hooks.example.com/svc", "#/webhooks/whk_live"],
                      [entry("webhook.updated", { events: { old: ["*"], new: ["project.created"] } }, hook),
                       "Ada Lovelace changed the webhook endpoint https://hooks.example.com/svc (events)", "#/webhooks/whk_live"]],
  "webhook.deleted": [[entry("webhook.deleted", { url: { old: "https://old.example.com/svc", new: null } }, ["webhook", "whk_gone"]),
                       "Ada Lovelace deleted the webhook endpoint https://old.example.com/svc"]],
  "webhook.secret_rotated": [[entry("webhook.secret_rotated", { signingSecrets: { old: 1, new: 2 } }, hook),
                              "Ada Lovelace rotated the signing secret of the webhook endpoint https://hooks.example.com/svc",
                              "#/webhooks/whk_live"]],
  "secret.created": [[entry("secret.created", made({ name: "STRIPE_KEY", version: 1 }), ["secret", "sec_1"]),
                      "Ada Lovelace created the secret STRIPE_KEY"]],
  "secret.updated": [[entry("secret.updated", { version: { old: 1, new: 2 } }, ["secret", "sec_01JD2Q7ZB6V8S3K4X9W2M5N7PA"]),
                      "Ada Lovelace gave the secret sec_01JD…7PA a new value"],
                     [entry("secret.updated", { description: { old: null, new: "live" } }, ["secret", "sec_1"]),
                      "Ada Lovelace changed the secret sec_1 (description)"]],
  "secret.deleted": [[entry("secret.deleted", { name: { old: "STRIPE_KEY", new: null } }, ["secret", "sec_1"]),
                      "Ada Lovelace deleted the secret STRIPE_KEY"]],
  "billing.credits_purchased": [[entry("billing.credits_purchased", made({ credits: 1000, amount: 1000 }), ["purchase", "pur_1"]),
                                 "Ada Lovelace bought 1,000 credits", "#/settings/billing"]],
  "billing.gift_card_redeemed": [[entry("billing.gift_card_redeemed", made({ credits: 500 }), ["gift_card", "gft_1"]),
                                  "Ada Lovelace redeemed a gift card of 500 credits", "#/settings/billing"]],
  "billing.plan_changed": [[entry("billing.plan_changed", { plan: { old: "free", new: "starter" } }, ["tenant", "ten_1"],
                                  ["service", "service"]), "The service changed the plan from free to starter", "#/settings/billing"]],
  "user.signed_in": [[entry("user.signed_in", made({ method: "device_login", role: "owner" }), ["user", "usr_ada"]),
                      "Ada Lovelace signed in from the command line"],
                     [entry("user.signed_in", made({ method: "password", role: "owner" }), ["user", "usr_ada"]),
                      "Ada Lovelace signed in with a password"]],
  "user.password_reset": [[entry("user.password_reset", made({ method: "email_link" }), ["user", "usr_ada"]),
                           "Ada Lovelace reset their password with an e-mailed link"]],
  "user.password_changed": [[entry("user.password_changed", {}, ["user", "usr_ada"]),
                             "Ada Lovelace changed their password"]],
  "user.sessions_ended": [[entry("user.sessions_ended", made({ sessionIds: ["ses_1", "ses_2"] }), ["user", "usr_ada"]),
                           "Ada Lovelace signed out 2 other sessions"],
                          [entry("user.sessions_ended", made({ sessionIds: ["ses_1"] }), ["user", "usr_ada"]),
                           "Ada Lovelace signed out 1 other session"]],
};

describe("every entry has words", () => {
  it("for each event type and audit action the served document lists, in its order", () => {
    expect(EVENT_TYPES_LOGGED).toEqual(documented("/api/v1/events", "type"));
    expect(Object.keys(EVENT_CASES).sort()).toEqual([...EVENT_TYPES_LOGGED].sort());
    expect(AUDIT_ACTIONS).toEqual(documented("/api/v1/audit-log", "action"));
    expect(Object.keys(AUDIT_CASES).sort()).toEqual([...AUDIT_ACTIONS].sort());
    expect(Object.keys(EVENT_SENTENCES)).toHaveLength(EVENT_TYPES_LOGGED.length);
    expect(Object.keys(AUDIT_SENTENCES)).toHaveLength(AUDIT_ACTIONS.length);
  });
});

describe("an event in plain words", () => {
  for (const [type, cases] of Object.entries(EVENT_CASES)) {
    it(`says ${type}, linking to the object while it exists`, () => {
      for (const [data, text, href] of cases) {
        expect(describeEvent({ id: "evt_01", type, data }, known)).toEqual(href ? { text, href } : { text });
      }
    });
  }

  it("links to the object when nothing is known of it (the Overview reads no lists)", () => {
    expect(describeEvent({ id: "evt_01", type: "project.created", data: { id: "proj_x", name: "Apollo" } }))
      .toEqual({ text: "Project Apollo was created", href: "#/projects" });
    expect(describeEvent({ id: "evt_01", type: "agent.completed", data: { runId: "run_9", agentId: "agt_3" } }))
      .toEqual({ text: "An agent run completed", href: "#/agents/agt_3/runs/run_9" });
  });

  it("says a type it does not know yet as it is, linking to the event itself", () => {
    expect(describeEvent({ id: "evt_01", type: "secret.rotated", data: {} }, known))
      .toEqual({ text: "secret.rotated happened", href: "#/events/evt_01" });
  });
});

describe("an audit entry in plain words", () => {
  for (const [action, cases] of Object.entries(AUDIT_CASES)) {
    it(`says ${action}: who, what and which object, linking to it while it exists`, () => {
      for (const [given, text, href] of cases) {
        expect(describeAuditEntry(given, known)).toEqual(href ? { text, href } : { text });
      }
    });
  }

  it("says an action it does not know yet with the actor and the object's id", () => {
    expect(describeAuditEntry(entry("project.archived", {}, ["project", "proj_live"]), known).text)
      .toBe("Ada Lovelace did project.archived on proj_live");
  });

  it("names no one it cannot: a caller who may not read the members sees shortened ids", () => {
    const none: Known = { people: new Map() };
    expect(describeAuditEntry(entry("member.role_changed", { role: { old: "member", new: "admin" } }, ["user", FORMER],
                                    ["user", FORMER]), none))
      .toEqual({ text: "usr_01JD…7PA made usr_01JD…7PA an admin (was a member)" });
  });
});
