import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { Toaster } from "../src/toast";

beforeEach(() => { vi.useFakeTimers(); });
afterEach(() => { vi.useRealTimers(); });

const texts = (toaster: Toaster) => toaster.toasts.map((t) => t.text);

describe("the toaster", () => {
  it("shows a toast until its time is up, then lets it go by itself", () => {
    const toaster = new Toaster(5000);
    toaster.show("Project Apollo created.");
    vi.advanceTimersByTime(4999);
    expect(texts(toaster)).toEqual(["Project Apollo created."]);
    vi.advanceTimersByTime(1);
    expect(texts(toaster)).toEqual([]);
  });

  it("keeps every toast while held (the pointer or the focus on it), and gives each its whole time again after", () => {
    const toaster = new Toaster(5000);
    toaster.show("Key CI revoked.");
    vi.advanceTimersByTime(4000);
    toaster.hold();
    toaster.show("Project Apollo deleted.");
    vi.advanceTimersByTime(60_000);
    expect(texts(toaster)).toEqual(["Key CI revoked.", "Project Apollo deleted."]);
    toaster.release();
    vi.advanceTimersByTime(4999);
    expect(texts(toaster)).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(texts(toaster)).toEqual([]);
  });

  it("is dismissed at once, and a dismissed toast's timer tells nothing later", () => {
    const toaster = new Toaster(5000);
    const told: string[][] = [];
    toaster.subscribe((toasts) => told.push(toasts.map((t) => t.text)));
    const id = toaster.show("Saved.");
    toaster.dismiss(id);
    vi.advanceTimersByTime(10_000);
    expect(told).toEqual([["Saved."], []]);
  });

  it("shows at most the newest few, a newer one pushing out the oldest", () => {
    const toaster = new Toaster(5000, 2);
    toaster.show("one");
    toaster.show("two");
    toaster.show("three");
    expect(texts(toaster)).toEqual(["two", "three"]);
    vi.advanceTimersByTime(5000);
    expect(texts(toaster)).toEqual([]);
  });

  it("stops telling a listener that unsubscribed, and clears everything", () => {
    const toaster = new Toaster(5000);
    const listener = vi.fn();
    const stop = toaster.subscribe(listener);
    toaster.show("a");
    stop();
    toaster.show("b");
    expect(listener).toHaveBeenCalledTimes(1);
    toaster.hold();
    toaster.clear();
    expect(texts(toaster)).toEqual([]);
    toaster.show("c");
    vi.advanceTimersByTime(5000);
    expect(texts(toaster)).toEqual([]);   // clear let go of the hold too
  });
});
