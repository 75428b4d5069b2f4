/**
 * The logs' filters as the page's address (`#/events?type=project.created&since=…`), so a filtered
 * view can be linked, reloaded and gone Back to: each filter's query name is the API's own, and a
 * value the API would refuse is left out rather than sent. Also what a pasted id finds on the event
 * log, and the filters in words for an empty filtered list.
 */
import { shortId, when } from "./format";
import { localInputToIso, toLocalInput } from "./observe";
import { actorName, AUDIT_ACTIONS, type AuditAction, EVENT_TYPES_LOGGED, type EventType, type Known } from "./sentences";

/** ISO 8601 with its offset, as the API's `since` and `until` take it. */
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d{1,6})?)?(?:Z|[+-]\d\d:\d\d)$/;
/** A real date too (the API refuses Feb 30, which Date.parse rolls over into March). */
function isTime(v: string): boolean {
  if (!TIME.test(v)) return false;
  const [year, month, day] = v.slice(0, 10).split("-").map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day && !Number.isNaN(Date.parse(v));
}
const OBJECT_ID = /^[A-Za-z0-9_-]{1,64}$/;
const ACTOR = /^(?:usr|key)_[0-7][0-9A-HJKMNP-TV-Z]{25}$|^service$/;
export const EVENT_ID = /^evt_[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/** Each filter of a log, in the address's order, with the values the API takes. */
const EVENT_FIELDS = {
  type: (v: string) => (EVENT_TYPES_LOGGED as string[]).includes(v),
  objectId: (v: string) => OBJECT_ID.test(v),
  since: isTime,
  until: isTime,
};
const AUDIT_FIELDS = {
  action: (v: string) => (AUDIT_ACTIONS as string[]).includes(v),
  actor: (v: string) => ACTOR.test(v),
  target: (v: string) => OBJECT_ID.test(v),
  since: isTime,
  until: isTime,
};

export interface EventFilters { type?: EventType; objectId?: string; since?: string; until?: string }
export interface AuditFilters { action?: AuditAction; actor?: string; target?: string; since?: string; until?: string }

function read<T>(query: URLSearchParams, fields: Record<string, (v: string) => boolean>): T {
  const found: Record<string, string> = {};
  for (const [name, valid] of Object.entries(fields)) {
    const got = query.get(name)?.trim();
    if (got && valid(got)) found[name] = got;
  }
  return found as T;
}

function write(path: string, filters: object, fields: Record<string, unknown>): string {
  const query = new URLSearchParams();
  for (const name of Object.keys(fields)) {
    const v = (filters as Record<string, string | undefined>)[name];
    if (v) query.set(name, v);
  }
  const said = query.toString();
  return said ? `${path}?${said}` : path;
}

export const eventFiltersOf = (query: URLSearchParams): EventFilters => read(query, EVENT_FIELDS);
export const auditFiltersOf = (query: URLSearchParams): AuditFilters => read(query, AUDIT_FIELDS);
/** The address of the event log with these filters ("/events" with none). */
export const eventsAddress = (filters: EventFilters): string => write("/events", filters, EVENT_FIELDS);
export const auditAddress = (filters: AuditFilters): string => write("/audit-log", filters, AUDIT_FIELDS);

/** Whether any filter is set. */
export function filtered(filters: object): boolean {
  return Object.values(filters).some(Boolean);
}

/** A datetime-local input's value (the reader's zone, to the second) as the `since` it means. */
export function sinceOfInput(value: string): string | undefined {
  return localInputToIso(value) ?? undefined;
}

/** A datetime-local input's value as the `until` it means, its second included: "until 10:05:30"
 * keeps what happened at 10:05:30.400 (the field has seconds, and leaves out ":00"). */
export function untilOfInput(value: string): string | undefined {
  const start = localInputToIso(value);
  return start ? new Date(Date.parse(start) + 999).toISOString() : undefined;
}

/** A `since` or `until` of the address as the input's value, in the reader's zone to the second
 * ("" for none). */
export function inputOfTime(iso: string | undefined): string {
  if (!iso) return "";
  const date = new Date(iso);
  return `${toLocalInput(date)}:${String(date.getSeconds()).padStart(2, "0")}`;
}

/** The filters in words, for a list they leave empty: "of type project.created, about proj_01HX…9Z2,
 * since 25 Nov 2026, 10:00", the actor by name ("by Ada Lovelace", "by the API key deploy"). */
export function filterWords(filters: EventFilters & AuditFilters, known: Known = { people: new Map() }): string {
  const words: string[] = [];
  if (filters.type) words.push(`of type ${filters.type}`);
  if (filters.action) words.push(`of action ${filters.action}`);
  if (filters.actor) {
    const type = filters.actor.startsWith("usr_") ? "user" : filters.actor.startsWith("key_") ? "api_key" : "service";
    words.push(`by ${actorName({ type, id: filters.actor }, known)}`);
  }
  if (filters.objectId) words.push(`about ${shortId(filters.objectId)}`);
  if (filters.target) words.push(`about ${shortId(filters.target)}`);
  if (filters.since) words.push(`since ${when(filters.since)}`);
  if (filters.until) words.push(`until ${when(filters.until)}`);
  return words.join(", ");
}

/** What a pasted id finds: an event id opens the event, another object's id filters by it. */
export type Found = { open: "event"; id: string } | { filter: "objectId"; id: string } | { problem: string };

export function findById(pasted: string): Found {
  const id = pasted.trim();
  if (!id) return { problem: "Paste an event's id (evt_…) or an object's id (proj_…, run_…, usr_…)." };
  if (EVENT_ID.test(id)) return { open: "event", id };
  if (id.startsWith("evt_")) return { problem: `${id} is not an event id: an event id is evt_ and 26 letters and digits.` };
  if (/^[a-z]+_[A-Za-z0-9]{4,60}$/.test(id)) return { filter: "objectId", id };
  return { problem: `${id} is not an id: an id starts with its kind, such as evt_, proj_, run_ or usr_.` };
}
