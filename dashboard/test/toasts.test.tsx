import { act, cleanup, fireEvent, render } from "@testing-library/preact";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { Toasts } from "../src/components/toasts";
import { Toaster } from "../src/toast";

beforeEach(() => { vi.useFakeTimers(); });
afterEach(() => { cleanup(); vi.useRealTimers(); });

function shown(container: Element): string[] {
  return [...container.querySelectorAll(".toast p")].map((p) => p.textContent ?? "");
}

describe("the toast region", () => {
  it("is a named landmark holding a polite live region that is there before any toast", () => {
    const { container } = render(<Toasts toaster={new Toaster(5000)} />);
    const region = container.querySelector("section")!;
    expect(region.getAttribute("aria-label")).toBe("Notifications");
    const live = region.querySelector("[role=status]")!;
    expect(live.getAttribute("aria-live")).toBe("polite");
    expect(live.getAttribute("aria-atomic")).toBe("false");   // each toast said alone, not the whole list again
    expect(live.children).toHaveLength(0);
  });

  it("shows a toast inside the live region without taking the focus, and lets it go after its time", () => {
    const toaster = new Toaster(5000);
    const { container, getByRole } = render(<><button type="button">Save</button><Toasts toaster={toaster} /></>);
    const save = getByRole("button", { name: "Save" });
    save.focus();
    act(() => { toaster.show("The allowlist is saved."); });
    expect(container.querySelector("[role=status]")!.textContent).toContain("The allowlist is saved.");
    expect(document.activeElement).toBe(save);
    act(() => { vi.advanceTimersByTime(5000); });
    expect(shown(container)).toEqual([]);
  });

  it("stays while the pointer is on it and goes its whole time after the pointer leaves", () => {
    const toaster = new Toaster(5000);
    const { container } = render(<Toasts toaster={toaster} />);
    act(() => { toaster.show("Key CI revoked."); });
    const region = container.querySelector("section")!;
    act(() => { fireEvent.pointerEnter(region); vi.advanceTimersByTime(20_000); });
    expect(shown(container)).toEqual(["Key CI revoked."]);
    act(() => { fireEvent.pointerLeave(region); vi.advanceTimersByTime(4999); });
    expect(shown(container)).toEqual(["Key CI revoked."]);
    act(() => { vi.advanceTimersByTime(1); });
    expect(shown(container)).toEqual([]);
  });

  it("stays while the focus is on its Dismiss button, which dismisses it", () => {
    const toaster = new Toaster(5000);
    const { container, getByRole } = render(<><button type="button">Elsewhere</button><Toasts toaster={toaster} /></>);
    act(() => { toaster.show("Project Apollo deleted."); toaster.show("Project Zeus deleted."); });
    const dismiss = container.querySelectorAll<HTMLButtonElement>(".toast button")[0]!;
    expect(dismiss.getAttribute("aria-label")).toBe("Dismiss");
    act(() => { dismiss.focus(); vi.advanceTimersByTime(20_000); });
    expect(shown(container)).toHaveLength(2);
    act(() => { dismiss.click(); });
    expect(shown(container)).toEqual(["Project Zeus deleted."]);
    act(() => { getByRole("button", { name: "Elsewhere" }).focus(); vi.advanceTimersByTime(5000); });
    expect(shown(container)).toEqual([]);
  });
});
