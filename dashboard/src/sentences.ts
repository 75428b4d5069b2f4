/**
 * Every entry of the logs as a sentence in plain words, with the page of its object: an event
 * ("Project Apollo was created") and an audit entry ("Ada Lovelace invited grace@example.com as a
 * member"). One function per event type and per audit action, keyed by the lists the API documents
 * (the generated types): a new type or action fails the type check, and test/sentences.test.ts
 * (which reads the served document), until it has words. The Overview's recent activity, the event
 * log and the audit log all read them here.
 */
import type { components, operations } from "@svc/client";

import { shortId } from "./format";
import { PLACES } from "./places";

type Schemas = components["schemas"];
export type LoggedEvent = Schemas["LoggedEvent"];
export type AuditEntry = Schemas["AuditEntry"];
export type EventType = NonNullable<NonNullable<operations["list_events"]["parameters"]["query"]>["type"]>;
export type AuditAction = NonNullable<NonNullable<operations["list_audit_log"]["parameters"]["query"]>["action"]>;

/** An entry as a sentence, and where its object is (a `#/…` link), if it has a page and still exists. */
export interface Said {
  text: string;
  href?: string;
}

/** What the page knows of the tenant now, to name people and objects and to tell the deleted ones. */
export interface Known {
  /** The members: user id → name (empty when the caller may not read them). */
  people: ReadonlyMap<string, string>;
  /** The objects that exist now, id → name (a webhook's URL, an invitation's address), of the kinds read. */
  objects?: ReadonlyMap<string, string>;
  /** The id prefixes (`proj`, `agt`, `whk`, `key`, `inv`) whose every object was read: an id of
   * one of them that is not in `objects` was deleted since. Of any other kind nothing is known. */
  kinds?: ReadonlySet<string>;
}

type Data = Record<string, unknown>;

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() ? value.trim() : undefined;
}

function prefixOf(id: string): string {
  return id.includes("_") ? id.slice(0, id.indexOf("_")) : "";
}

/** Whether the object still exists: false only when its kind was read and it is not among them.
 * A person exists while they are a member (whose page, Members, the caller may read). */
function exists(known: Known, id: string): boolean {
  if (id.startsWith("usr_")) return known.people.has(id);
  return !known.kinds?.has(prefixOf(id)) || (known.objects?.has(id) ?? false);
}

/** The link to the object's page while it exists; a deleted one is named, not linked. */
function linked(known: Known, id: string | undefined, href: string): { href?: string } {
  return id && exists(known, id) ? { href } : {};
}

const place = (name: keyof typeof PLACES) => `#${PLACES[name].path}`;

/** "Project Apollo", or "A project" when the data has no name. */
function named(kind: string, name: string | undefined): string {
  return name ? `${kind} ${name}` : `A ${kind.toLowerCase()}`;
}

/** "a member", "an admin", "an owner". */
function aRole(role: string | undefined): string {
  if (!role) return "another role";
  return `${/^[aeiou]/i.test(role) ? "an" : "a"} ${role}`;
}

/** A sentence that starts with "the service" or "the API key …" starts with a capital; one that
 * starts with a name or an id keeps it as it is. */
function capitalized(words: string): string {
  return words.startsWith("the ") ? `T${words.slice(1)}` : words;
}

// ---- events ------------------------------------------------------------------------------------

type EventWords = (data: Data, known: Known) => Said;

/** A member by name, else the address the data gives, else "A member". */
function member(known: Known, id: unknown, email?: unknown): string {
  return (typeof id === "string" ? known.people.get(id) : undefined) ?? text(email) ?? "A member";
}

function project(data: Data, known: Known, done: string): Said {
  const id = text(data["id"]);
  const name = text(data["name"]) ?? (id ? known.objects?.get(id) : undefined);
  return { text: `${named("Project", name)} ${done}`, ...linked(known, id, place("projects")) };
}

/** A run's event: the agent by name while it exists, linked to the run's page. */
function run(data: Data, known: Known, done: string): Said {
  const agentId = text(data["agentId"]);
  const runId = text(data["runId"]);
  const agent = agentId ? known.objects?.get(agentId) : undefined;
  return { text: agent ? `A run of agent ${agent} ${done}` : `An agent run ${done}`,
           ...(runId ? linked(known, agentId, `#/agents/${agentId}/runs/${runId}`) : {}) };
}

function toMembers(known: Known, userId: unknown): { href?: string } {
  return linked(known, text(userId), place("members"));
}

export const EVENT_SENTENCES: Record<EventType, EventWords> = {
  "project.created": (d, k) => project(d, k, "was created"),
  "project.updated": (d, k) => project(d, k, "was changed"),
  "project.deleted": (d, k) => ({ text: project(d, k, "was deleted").text }),
  "agent.started": (d, k) => run(d, k, "started"),
  "agent.completed": (d, k) => run(d, k, "completed"),
  "agent.failed": (d, k) => run(d, k, d["status"] === "cancelled" ? "was cancelled" : "failed"),
  "tenant.created": (d) => ({ text: `${named("Tenant", text(d["name"]))} was created` }),
  "user.created": (d, k) => ({ text: `${text(d["name"]) ?? text(d["email"]) ?? "A user"} signed up`,
                               ...toMembers(k, d["id"]) }),
  "member.added": (d, k) => ({ text: `${member(k, d["userId"], d["email"])} joined as ${aRole(text(d["role"]))}`,
                               ...toMembers(k, d["userId"]) }),
  "member.removed": (d, k) => ({ text: `${member(k, d["userId"])} ${d["reason"] === "left" ? "left" : "was removed"}`,
                                 ...toMembers(k, d["userId"]) }),
  "member.role_changed": (d, k) => ({
    text: `${member(k, d["userId"])} became ${aRole(text(d["role"]))}`
      + (text(d["previousRole"]) ? ` (was ${aRole(text(d["previousRole"]))})` : ""),
    ...toMembers(k, d["userId"]) }),
};

/** The event types the API documents, in its order. */
export const EVENT_TYPES_LOGGED = Object.keys(EVENT_SENTENCES) as EventType[];

/**
 * An event of the log as a sentence from its data, people by name (else their e-mail, else "A
 * member"), with the page of its object while it exists. A type this build does not know yet reads
 * as its name, linking to the event itself.
 */
export function describeEvent(event: Pick<LoggedEvent, "type" | "data" | "id">, known: Known = { people: new Map() }): Said {
  const words = (EVENT_SENTENCES as Partial<Record<string, EventWords>>)[event.type];
  return words ? words(event.data as Data, known) : { text: `${event.type} happened`, href: `#/events/${event.id}` };
}

// ---- audit entries -----------------------------------------------------------------------------

type AuditWords = (entry: AuditEntry, known: Known, who: string) => Said;

/** Who acted: a member by name (someone no longer one by the shortened id), an API key by its name,
 * the service. */
export function actorName(actor: AuditEntry["actor"], known: Known): string {
  if (actor.type === "user") return known.people.get(actor.id) ?? shortId(actor.id);
  if (actor.type === "api_key") return `the API key ${known.objects?.get(actor.id) ?? shortId(actor.id)}`;
  return actor.id === "service" || actor.type === "service" ? "the service" : actor.id;
}

/** A changed field's value after (`new`) or before (`old`) the change; a field recorded as it is
 * (not {old, new}) counts as after. */
function value(entry: AuditEntry, field: string, side: "new" | "old" = "new"): unknown {
  const change = entry.changes[field];
  if (change && typeof change === "object" && !Array.isArray(change) && ("old" in change || "new" in change)) {
    return (change as Record<string, unknown>)[side];
  }
  return side === "new" ? change : undefined;
}

const after = (entry: AuditEntry, field: string) => text(value(entry, field));
const before = (entry: AuditEntry, field: string) => text(value(entry, field, "old"));

/** The changed fields, "(url, events)"; nothing when none is named. */
function fields(entry: AuditEntry, leave: string[] = []): string {
  const names = Object.keys(entry.changes).filter((f) => !leave.includes(f));
  return names.length ? ` (${names.join(", ")})` : "";
}

function person(known: Known, id: string | undefined): string {
  return id ? known.people.get(id) ?? shortId(id) : "a member";
}

function key(entry: AuditEntry, known: Known): string {
  const id = entry.target.id;
  return `the API key ${after(entry, "name") ?? known.objects?.get(id) ?? shortId(id)}`;
}

function endpoint(entry: AuditEntry, known: Known, side: "new" | "old" = "new"): string {
  const url = text(value(entry, "url", side)) ?? known.objects?.get(entry.target.id);
  return url ? `the webhook endpoint ${url}` : "a webhook endpoint";
}

function invitee(entry: AuditEntry, known: Known): string {
  const email = after(entry, "email") ?? known.objects?.get(entry.target.id);
  return email ? `the invitation to ${email}` : "an invitation";
}

function secret(entry: AuditEntry): string {
  return `the secret ${after(entry, "name") ?? before(entry, "name") ?? shortId(entry.target.id)}`;
}

function credits(entry: AuditEntry): string {
  const amount = value(entry, "credits");
  return typeof amount === "number" ? `${amount.toLocaleString("en-US")} ${amount === 1 ? "credit" : "credits"}` : "credits";
}

const SIGN_IN_METHODS: Record<string, string> = {
  password: " with a password", device_login: " from the command line", identity_provider: " through an identity provider",
};

const keys = (e: AuditEntry, k: Known) => linked(k, e.target.id, place("apiKeys"));
const invitation = (e: AuditEntry, k: Known) => linked(k, e.target.id, place("members"));
const webhook = (e: AuditEntry, k: Known) => linked(k, e.target.id, `#/webhooks/${e.target.id}`);
const targetMember = (e: AuditEntry, k: Known) => linked(k, e.target.id, place("members"));
const billing = { href: place("billing") };
const regions = { href: place("regions") };

export const AUDIT_SENTENCES: Record<AuditAction, AuditWords> = {
  "api_key.created": (e, k, who) => ({ text: `${who} created ${key(e, k)}`, ...keys(e, k) }),
  "api_key.rotated": (e, k, who) => ({ text: `${who} rotated ${key(e, k)}`, ...keys(e, k) }),
  "api_key.revoked": (e, k, who) => ({ text: `${who} revoked ${key(e, k)}`, ...keys(e, k) }),
  "invitation.created": (e, k, who) => ({
    text: `${who} invited ${after(e, "email") ?? "someone"} as ${aRole(after(e, "role"))}`, ...invitation(e, k) }),
  "invitation.resent": (e, k, who) => ({ text: `${who} sent ${invitee(e, k)} again`, ...invitation(e, k) }),
  "invitation.revoked": (e, k, who) => ({ text: `${who} revoked ${invitee(e, k)}`, ...invitation(e, k) }),
  "invitation.accepted": (e, k, who) => ({ text: `${who} accepted ${invitee(e, k)}`, ...invitation(e, k) }),
  "member.added": (e, k, who) => ({
    text: e.actor.id === e.target.id ? `${who} joined as ${aRole(after(e, "role"))}`
      : `${who} added ${person(k, e.target.id)} as ${aRole(after(e, "role"))}`, ...targetMember(e, k) }),
  "member.role_changed": (e, k, who) => ({
    text: `${who} made ${person(k, e.target.id)} ${aRole(after(e, "role"))}`
      + (before(e, "role") ? ` (was ${aRole(before(e, "role"))})` : ""), ...targetMember(e, k) }),
  "member.removed": (e, k, who) => ({ text: `${who} removed ${person(k, e.target.id)}`
      + (after(e, "role") ? ` (${aRole(after(e, "role"))})` : ""), ...targetMember(e, k) }),
  "member.left": (e, k, who) => ({ text: `${who} left the tenant`, ...targetMember(e, k) }),
  "ownership.transferred": (e, k, who) => ({
    text: `${who} handed the ownership to ${person(k, after(e, "newOwner") ?? e.target.id)}`, ...targetMember(e, k) }),
  "tenant.created": (e, _k, who) => ({ text: `${who} created the tenant${after(e, "name") ? ` ${after(e, "name")}` : ""}` }),
  "tenant.settings_changed": (e, _k, who) => ({ text: `${who} changed the tenant's settings${fields(e)}`,
                                                 href: place("network") }),
  "tenant.region_preferences_changed": (e, _k, who) => ({ text: `${who} changed the regional preferences${fields(e)}`,
                                                           ...regions }),
  "tenant.move_started": (e, _k, who) => {
    const move = e.changes["homeRegion"] as { from?: unknown; to?: unknown } | undefined;
    return { text: `${who} started moving the tenant${text(move?.from) ? ` from ${text(move?.from)}` : ""}`
      + (text(move?.to) ? ` to ${text(move?.to)}` : ""), ...regions };
  },
  "tenant.failed_over": (e, _k, who) => ({
    text: `${who} failed the tenant over${after(e, "homeRegion") ? ` to ${after(e, "homeRegion")}` : ""}`
      + (before(e, "homeRegion") ? ` (from ${before(e, "homeRegion")})` : ""), ...regions }),
  "tenant.storage_changed": (e, _k, who) => ({ text: `${who} changed the tenant's storage${fields(e)}`, ...regions }),
  "webhook.created": (e, k, who) => ({ text: `${who} registered ${endpoint(e, k)}`, ...webhook(e, k) }),
  "webhook.updated": (e, k, who) => {
    const enabled = value(e, "enabled");
    const only = Object.keys(e.changes).every((f) => f === "enabled");
    const done = only && typeof enabled === "boolean" ? (enabled ? "turned on" : "turned off") : "changed";
    return { text: `${who} ${done} ${endpoint(e, k)}${only ? "" : fields(e)}`, ...webhook(e, k) };
  },
  "webhook.deleted": (e, k, who) => ({ text: `${who} deleted ${endpoint(e, k, "old")}` }),
  "webhook.secret_rotated": (e, k, who) => ({ text: `${who} rotated the signing secret of ${endpoint(e, k)}`,
                                              ...webhook(e, k) }),
  "secret.created": (e, _k, who) => ({ text: `${who} created ${secret(e)}` }),
  "secret.updated": (e, _k, who) => ({
    text: value(e, "version") !== undefined ? `${who} gave ${secret(e)} a new value` : `${who} changed ${secret(e)}${fields(e)}` }),
  "secret.deleted": (e, _k, who) => ({ text: `${who} deleted ${secret(e)}` }),
  "billing.credits_purchased": (e, _k, who) => ({ text: `${who} bought ${credits(e)}`, ...billing }),
  "billing.gift_card_redeemed": (e, _k, who) => ({ text: `${who} redeemed a gift card of ${credits(e)}`, ...billing }),
  "billing.plan_changed": (e, _k, who) => ({
    text: `${who} changed the plan${before(e, "plan") ? ` from ${before(e, "plan")}` : ""}`
      + (after(e, "plan") ? ` to ${after(e, "plan")}` : ""), ...billing }),
  "user.signed_in": (e, _k, who) => ({ text: `${who} signed in${SIGN_IN_METHODS[after(e, "method") ?? ""] ?? ""}` }),
  "user.password_reset": (_e, _k, who) => ({ text: `${who} reset their password with an e-mailed link` }),
  "user.password_changed": (_e, _k, who) => ({ text: `${who} changed their password` }),
  "user.sessions_ended": (e, _k, who) => {
    const ended = value(e, "sessionIds");
    const count = Array.isArray(ended) ? ended.length : undefined;
    return { text: count === undefined ? `${who} signed out their other sessions`
      : `${who} signed out ${count} other ${count === 1 ? "session" : "sessions"}` };
  },
};

/** The audit actions the API documents, in its order. */
export const AUDIT_ACTIONS = Object.keys(AUDIT_SENTENCES) as AuditAction[];

/**
 * An audit entry as a sentence: who (a member by name, a key by its name, the service) did what to
 * which object, with the object's page while it exists. An action this build does not know yet
 * reads as its name.
 */
export function describeAuditEntry(entry: AuditEntry, known: Known = { people: new Map() }): Said {
  const who = actorName(entry.actor, known);
  const words = (AUDIT_SENTENCES as Partial<Record<string, AuditWords>>)[entry.action];
  const said = words ? words(entry, known, who) : { text: `${who} did ${entry.action} on ${shortId(entry.target.id)}` };
  return { ...said, text: capitalized(said.text) };
}
