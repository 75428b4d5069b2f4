import { describe, expect, it } from "vitest";

import { CLOSED, menuKey } from "../src/menu";

describe("menuKey", () => {
  it("opens from the button on the first item with Enter, Space or Down, on the last with Up", () => {
    for (const key of ["Enter", " ", "ArrowDown"]) {
      expect(menuKey(CLOSED, key, 3, "button")).toEqual({ state: { open: true, active: 0 }, handled: true, focusButton: false });
    }
    expect(menuKey(CLOSED, "ArrowUp", 3, "button").state).toEqual({ open: true, active: 2 });
  });

  it("leaves other keys on the button, and a menu with no items closed", () => {
    expect(menuKey(CLOSED, "a", 3, "button")).toEqual({ state: CLOSED, handled: false, focusButton: false });
    expect(menuKey(CLOSED, "Enter", 0, "button").state).toEqual(CLOSED);
  });

  it("moves with Down and Up, wrapping at the ends, and jumps with Home and End", () => {
    const open = (active: number) => ({ open: true, active });
    expect(menuKey(open(0), "ArrowDown", 3, "menu").state).toEqual(open(1));
    expect(menuKey(open(2), "ArrowDown", 3, "menu").state).toEqual(open(0));
    expect(menuKey(open(0), "ArrowUp", 3, "menu").state).toEqual(open(2));
    expect(menuKey(open(1), "Home", 3, "menu").state).toEqual(open(0));
    expect(menuKey(open(0), "End", 3, "menu").state).toEqual(open(2));
  });

  it("closes with Escape and gives the button its focus back; Tab closes and lets the focus move on", () => {
    expect(menuKey({ open: true, active: 1 }, "Escape", 3, "menu")).toEqual({ state: CLOSED, handled: true, focusButton: true });
    expect(menuKey({ open: true, active: 1 }, "Tab", 3, "menu")).toEqual({ state: CLOSED, handled: false, focusButton: false });
  });

  it("leaves a letter in the menu to the browser", () => {
    expect(menuKey({ open: true, active: 1 }, "x", 3, "menu")).toEqual({ state: { open: true, active: 1 }, handled: false, focusButton: false });
  });
});
