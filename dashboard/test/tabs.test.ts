import { describe, expect, it } from "vitest";

import { tabAddress, tabKey, tabOf } from "../src/tabs";

const IDS = ["overview", "invoices", "ledger", "plan"] as const;

describe("the keyboard of a tab list", () => {
  it("moves right and left, wrapping at the ends", () => {
    expect(tabKey("ArrowRight", 0, 4)).toBe(1);
    expect(tabKey("ArrowRight", 3, 4)).toBe(0);
    expect(tabKey("ArrowLeft", 0, 4)).toBe(3);
    expect(tabKey("ArrowLeft", 2, 4)).toBe(1);
  });

  it("goes to the first and last with Home and End", () => {
    expect(tabKey("Home", 2, 4)).toBe(0);
    expect(tabKey("End", 1, 4)).toBe(3);
  });

  it("leaves every other key (Up and Down, Tab, letters) to the browser", () => {
    for (const key of ["ArrowUp", "ArrowDown", "Tab", "Enter", "a"]) expect(tabKey(key, 1, 4)).toBeNull();
    expect(tabKey("ArrowRight", 0, 0)).toBeNull();
  });
});

describe("a tab's address", () => {
  it("reads the tab the query names, the first for none or one the page lacks", () => {
    expect(tabOf(new URLSearchParams("tab=ledger"), IDS)).toBe("ledger");
    expect(tabOf(new URLSearchParams(""), IDS)).toBe("overview");
    expect(tabOf(new URLSearchParams("tab=secrets"), IDS)).toBe("overview");
  });

  it("gives the first tab the page's own address and each other one a query", () => {
    expect(tabAddress("/settings/billing", IDS, "overview")).toBe("/settings/billing");
    expect(tabAddress("/settings/billing", IDS, "plan")).toBe("/settings/billing?tab=plan");
    for (const id of IDS) {
      const [, query = ""] = tabAddress("/settings/billing", IDS, id).split("?");
      expect(tabOf(new URLSearchParams(query), IDS)).toBe(id);
    }
  });
});
