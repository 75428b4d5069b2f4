import { describe, expect, it } from "vitest";

import {
  auditAddress, auditFiltersOf, eventFiltersOf, eventsAddress, filtered, filterWords, findById, inputOfTime, sinceOfInput,
  untilOfInput,
} from "../src/log-filters";
import { parseHash } from "../src/router";

const EVENT = "evt_01JD2Q7ZB6V8S3K4X9W2M5N7PA";
const USER = "usr_01JD2Q7ZB6V8S3K4X9W2M5N7PA";

describe("the event log's filters in the address", () => {
  it("are read from the page's query and written back in the same order, under the API's names", () => {
    const address = "/events?type=project.created&objectId=proj_01J9&since=2026-11-25T10%3A00%3A00Z&until=2026-11-26T10%3A00%3A59.999Z";
    const filters = eventFiltersOf(parseHash(`#${address}`).query);
    expect(filters).toEqual({ type: "project.created", objectId: "proj_01J9", since: "2026-11-25T10:00:00Z",
                              until: "2026-11-26T10:00:59.999Z" });
    expect(eventsAddress(filters)).toBe(address);
    // any order in, the one order out; nothing set: the bare path
    expect(eventsAddress(eventFiltersOf(new URLSearchParams("since=2026-11-25T10:00:00Z&type=agent.failed"))))
      .toBe("/events?type=agent.failed&since=2026-11-25T10%3A00%3A00Z");
    expect(eventsAddress({})).toBe("/events");
  });

  it("leave out what the API would refuse: an unknown type, a time without its offset, an id too long", () => {
    const query = new URLSearchParams({ type: "project.exploded", since: "2026-11-25T10:00", until: "yesterday",
                                        objectId: "x".repeat(65) });
    expect(eventFiltersOf(query)).toEqual({});
    expect(eventFiltersOf(new URLSearchParams({ since: "2026-02-30T10:00:00Z" }))).toEqual({});
    expect(eventFiltersOf(new URLSearchParams({ since: "2026-11-25T10:00:00+01:00", cursor: "abc" })))
      .toEqual({ since: "2026-11-25T10:00:00+01:00" });
  });

  it("say whether any is set, and Clear filters is the bare address", () => {
    expect(filtered({})).toBe(false);
    expect(filtered({ type: undefined, objectId: "" })).toBe(false);
    expect(filtered({ objectId: "proj_1" })).toBe(true);
    expect(eventsAddress({ type: undefined, objectId: undefined })).toBe("/events");
  });
});

describe("the audit log's filters in the address", () => {
  it("take an action, an actor (a user, an API key or the service), a target and the range", () => {
    const filters = auditFiltersOf(new URLSearchParams({ action: "webhook.created", actor: USER, target: "whk_01J",
                                                         since: "2026-11-25T10:00:00Z" }));
    expect(filters).toEqual({ action: "webhook.created", actor: USER, target: "whk_01J", since: "2026-11-25T10:00:00Z" });
    expect(auditAddress(filters)).toBe(`/audit-log?action=webhook.created&actor=${USER}&target=whk_01J&since=2026-11-25T10%3A00%3A00Z`);
    expect(auditFiltersOf(new URLSearchParams({ actor: "service" }))).toEqual({ actor: "service" });
    expect(auditFiltersOf(new URLSearchParams({ actor: "usr_ada", action: "project.created" }))).toEqual({});
    expect(auditAddress({})).toBe("/audit-log");
  });
});

describe("the date range in the reader's zone", () => {
  it("since is its second's start and until its second's end, in UTC; the field shows the second back", () => {
    const since = sinceOfInput("2026-11-25T10:00:05");
    const until = untilOfInput("2026-11-25T10:05:30");
    expect(since).toBe(new Date(2026, 10, 25, 10, 0, 5).toISOString().replace(".000Z", "Z"));
    expect(Date.parse(until!) - new Date(2026, 10, 25, 10, 5, 30).getTime()).toBe(999);
    expect(inputOfTime(since)).toBe("2026-11-25T10:00:05");
    expect(inputOfTime(until)).toBe("2026-11-25T10:05:30");
    expect(inputOfTime(undefined)).toBe("");
    expect(sinceOfInput("")).toBeUndefined();
    expect(untilOfInput("2026-02-30T10:00")).toBeUndefined();
    // what the field gives is what the address takes
    expect(eventFiltersOf(new URLSearchParams({ since: since!, until: until! }))).toEqual({ since, until });
  });

  it("a value whose seconds are 0 (the field leaves them out) is that second", () => {
    expect(Date.parse(untilOfInput("2026-11-25T10:05")!) - new Date(2026, 10, 25, 10, 5).getTime()).toBe(999);
    expect(sinceOfInput("2026-11-25T10:05")).toBe(new Date(2026, 10, 25, 10, 5).toISOString().replace(".000Z", "Z"));
  });
});

describe("the filters in words, for a list they leave empty", () => {
  it("name the type or action, the person by name, the object shortened and the range", () => {
    expect(filterWords({ type: "project.created", objectId: "proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA" }))
      .toBe("of type project.created, about proj_01JD…7PA");
    expect(filterWords({ action: "member.removed", actor: USER }, { people: new Map([[USER, "Ada Lovelace"]]) }))
      .toBe("of action member.removed, by Ada Lovelace");
    expect(filterWords({ actor: "service" })).toBe("by the service");
    expect(filterWords({ actor: USER })).toBe("by usr_01JD…7PA");   // no longer a member
    const key = "key_01JD2Q7ZB6V8S3K4X9W2M5N7PA";
    expect(filterWords({ actor: key }, { people: new Map(), objects: new Map([[key, "deploy"]]) })).toBe("by the API key deploy");
    expect(filterWords({ since: "2026-11-25T10:00:00Z" })).toMatch(/^since \S.*2026/);
  });
});

describe("an id pasted in Find", () => {
  it("opens an event by its id", () => {
    expect(findById(`  ${EVENT} `)).toEqual({ open: "event", id: EVENT });
  });

  it("filters by any other object's id", () => {
    expect(findById("proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA")).toEqual({ filter: "objectId", id: "proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA" });
    expect(findById(USER)).toEqual({ filter: "objectId", id: USER });
  });

  it("says what is wrong with anything else", () => {
    expect(findById("")).toEqual({ problem: expect.stringContaining("Paste an event's id") });
    expect(findById("evt_123")).toEqual({ problem: expect.stringContaining("is not an event id") });
    expect(findById("Apollo")).toEqual({ problem: expect.stringContaining("Apollo is not an id") });
    expect(findById("proj_01JD 2Q7Z")).toEqual({ problem: expect.stringContaining("is not an id") });
  });
});
