import { cleanup, fireEvent, render } from "@testing-library/preact";
import { useState } from "preact/hooks";
import { afterEach, describe, expect, it } from "vitest";

import { Tabs } from "../src/components/tabs";

afterEach(() => cleanup());

const TABS = [{ id: "overview", title: "Overview" }, { id: "invoices", title: "Invoices" }, { id: "plan", title: "Plan" }] as const;
type Id = (typeof TABS)[number]["id"];

function Page({ reads }: { reads: string[] }) {
  const [tab, setTab] = useState<Id>("overview");
  return (
    <Tabs label="Billing" idPrefix="t" tabs={TABS} selected={tab} onSelect={setTab}>
      <Panel key={tab} id={tab} reads={reads} />
    </Tabs>
  );
}

function Panel({ id, reads }: { id: string; reads: string[] }) {
  useState(() => reads.push(id));   // a panel's read, once when it is drawn
  return <p>The {id} panel</p>;
}

const tabs = (container: HTMLElement) => [...container.querySelectorAll<HTMLButtonElement>("[role=tab]")];

describe("tabs", () => {
  it("are one tab stop: the selected tab, which names the one panel", () => {
    const { container } = render(<Page reads={[]} />);
    const list = container.querySelector("[role=tablist]")!;
    expect(list.getAttribute("aria-label")).toBe("Billing");
    expect(tabs(container).map((t) => [t.textContent, t.getAttribute("aria-selected"), t.tabIndex])).toEqual([
      ["Overview", "true", 0], ["Invoices", "false", -1], ["Plan", "false", -1]]);
    const panel = container.querySelector("[role=tabpanel]")!;
    expect(panel.getAttribute("aria-labelledby")).toBe(tabs(container)[0]!.id);
    expect(tabs(container)[0]!.getAttribute("aria-controls")).toBe(panel.id);
    expect(panel.textContent).toBe("The overview panel");
  });

  it("select with the arrow keys, Home and End, the focus following, and draw a tab's panel only when it is shown", () => {
    const reads: string[] = [];
    const { container } = render(<Page reads={reads} />);
    tabs(container)[0]!.focus();
    fireEvent.keyDown(tabs(container)[0]!, { key: "ArrowRight" });
    expect(document.activeElement).toBe(tabs(container)[1]);
    expect(tabs(container)[1]!.getAttribute("aria-selected")).toBe("true");
    expect(container.querySelector("[role=tabpanel]")!.textContent).toBe("The invoices panel");
    fireEvent.keyDown(tabs(container)[1]!, { key: "End" });
    expect(document.activeElement).toBe(tabs(container)[2]);
    fireEvent.keyDown(tabs(container)[2]!, { key: "ArrowRight" });   // wraps to the first
    expect(document.activeElement).toBe(tabs(container)[0]);
    fireEvent.keyDown(tabs(container)[0]!, { key: "ArrowLeft" });
    fireEvent.keyDown(tabs(container)[2]!, { key: "Home" });
    expect(tabs(container).map((t) => t.tabIndex)).toEqual([0, -1, -1]);
    expect(reads).toEqual(["overview", "invoices", "plan", "overview", "plan", "overview"]);
  });

  it("select with a click, and leave other keys alone", () => {
    const { container } = render(<Page reads={[]} />);
    fireEvent.click(tabs(container)[2]!);
    expect(container.querySelector("[role=tabpanel]")!.textContent).toBe("The plan panel");
    const down = fireEvent.keyDown(tabs(container)[2]!, { key: "ArrowDown" });
    expect(down).toBe(true);   // not prevented: the page scrolls as it would
    expect(tabs(container)[2]!.getAttribute("aria-selected")).toBe("true");
  });
});
