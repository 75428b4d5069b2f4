import { cleanup, fireEvent, render } from "@testing-library/preact";
import { afterEach, describe, expect, it } from "vitest";

import { PALETTE, UsageChart } from "../src/components/usage-chart";
import { series as fourDays } from "./usage-fixture";

/** The first three days of the fixture (the fourth has no calls). */
const series = { ...fourDays, to: "2026-11-03" };

afterEach(cleanup);

describe("the usage chart", () => {
  it("draws a stacked bar per day with calls, one colour per model, named by its summary", () => {
    const { container, getByRole } = render(<UsageChart series={series} measure="credits" />);
    const image = getByRole("img");
    expect(image.getAttribute("aria-label")).toContain("3.75 credits in all; the most on 2026-11-03, 2.25 credits");
    const rects = [...container.querySelectorAll("rect")];
    expect(rects.map((r) => [r.closest("g")!.getAttribute("data-date"), r.getAttribute("data-model"), r.getAttribute("fill")]))
      .toEqual([["2026-11-01", "offline", PALETTE[1]], ["2026-11-03", "claude-haiku", PALETTE[0]],
                ["2026-11-03", "offline", PALETTE[1]]]);
    // the day of 2.25 credits reaches 2.25 / 3 of the plot; its two segments meet
    const [haiku, offline] = rects.slice(1).map((r) => ({ y: Number(r.getAttribute("y")), h: Number(r.getAttribute("height")) }));
    expect(offline!.y + offline!.h).toBeCloseTo(haiku!.y);
    expect((offline!.h + haiku!.h) / 224).toBeCloseTo(2.25 / 3);
    expect([...container.querySelectorAll(".axis text")].map((t) => t.textContent))
      .toEqual(["0", "1", "2", "3", "Credits", "11-01", "11-02", "11-03", "Day (UTC)"]);
    expect([...container.querySelectorAll(".legend li")].map((li) => li.textContent)).toEqual(["claude-haiku", "offline"]);
  });

  it("shows tokens when asked, on their own scale", () => {
    const { container } = render(<UsageChart series={series} measure="tokens" />);
    expect([...container.querySelectorAll(".axis text")].slice(0, 5).map((t) => t.textContent))
      .toEqual(["0", "500", "1,000", "1,500", "Tokens"]);
  });

  it("gives the same numbers as a table behind a toggle", () => {
    const { getByRole, queryByRole } = render(<UsageChart series={series} measure="credits" />);
    expect(queryByRole("table")).toBeNull();
    fireEvent.click(getByRole("button", { name: "Show as table" }));
    const rows = [...getByRole("table").querySelectorAll("tbody tr")].map((tr) =>
      [...tr.children].map((cell) => cell.textContent));
    expect(rows).toEqual([
      ["2026-11-01", "offline", "2", "100", "20", "1.5"],
      ["2026-11-03", "claude-haiku", "1", "1,000", "300", "0.25"],
      ["2026-11-03", "offline", "4", "40", "4", "2"],
    ]);
    expect(getByRole("button", { name: "Hide the table" }).getAttribute("aria-expanded")).toBe("true");
  });
});
