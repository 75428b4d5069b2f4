import { describe, expect, it } from "vitest";

import {
  datesBetween, labelledDates, niceScale, stackDays, summarise, tickLabel,
} from "../src/usage-series";
import { series } from "./usage-fixture";


describe("the usage chart's days", () => {
  it("lists every UTC date of the range, both ends included, across a month's end", () => {
    expect(datesBetween("2026-10-30", "2026-11-02")).toEqual(["2026-10-30", "2026-10-31", "2026-11-01", "2026-11-02"]);
    expect(datesBetween("2026-11-02", "2026-11-02")).toEqual(["2026-11-02"]);
    expect(datesBetween("2026-11-03", "2026-11-02")).toEqual([]);
  });

  it("fills the days without calls with zero bars", () => {
    const bars = stackDays(series, "credits");
    expect(bars.map((b) => b.date)).toEqual(["2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04"]);
    expect(bars.map((b) => b.total)).toEqual([1.5, 0, 2.25, 0]);
    expect(bars[1]!.segments).toEqual([
      { model: "claude-haiku", value: 0, start: 0, end: 0 }, { model: "offline", value: 0, start: 0, end: 0 }]);
  });

  it("stacks each day's models in the series' order, each starting where the one below ends", () => {
    const [first, , third] = stackDays(series, "credits");
    expect(first!.segments).toEqual([
      { model: "claude-haiku", value: 0, start: 0, end: 0 }, { model: "offline", value: 1.5, start: 0, end: 1.5 }]);
    expect(third!.segments).toEqual([
      { model: "claude-haiku", value: 0.25, start: 0, end: 0.25 }, { model: "offline", value: 2, start: 0.25, end: 2.25 }]);
  });

  it("counts tokens as input and output together", () => {
    expect(stackDays(series, "tokens").map((b) => b.total)).toEqual([120, 0, 1344, 0]);
  });
});

describe("the value scale", () => {
  it("rounds up to steps of 1, 2 or 5 times a power of ten", () => {
    expect(niceScale(2.25)).toEqual({ max: 3, step: 1, ticks: [0, 1, 2, 3] });
    expect(niceScale(1344)).toEqual({ max: 1500, step: 500, ticks: [0, 500, 1000, 1500] });
    expect(niceScale(7)).toEqual({ max: 8, step: 2, ticks: [0, 2, 4, 6, 8] });
    expect(niceScale(100)).toEqual({ max: 100, step: 50, ticks: [0, 50, 100] });
  });

  it("keeps small fractions exact (no binary noise in the ticks)", () => {
    expect(niceScale(0.0009)).toEqual({ max: 0.001, step: 0.0005, ticks: [0, 0.0005, 0.001] });
    expect(niceScale(0.3).ticks).toEqual([0, 0.1, 0.2, 0.3]);
  });

  it("gives an empty chart an axis of 0 to 1", () => {
    expect(niceScale(0)).toEqual({ max: 1, step: 0.25, ticks: [0, 0.25, 0.5, 0.75, 1] });
  });

  it("labels ticks shortly", () => {
    expect([0, 0.0005, 1500, 20_000, 2_500_000].map(tickLabel)).toEqual(["0", "0.0005", "1,500", "20k", "2.5M"]);
  });

  it("labels at most six dates, the last always", () => {
    const dates = datesBetween("2026-10-29", "2026-11-27");
    const labelled = labelledDates(dates);
    expect(labelled.size).toBeLessThanOrEqual(6);
    expect(labelled.has("2026-11-27")).toBe(true);
    expect(labelledDates(dates.slice(0, 3))).toEqual(new Set(dates.slice(0, 3)));
  });
});

describe("the chart's summary", () => {
  it("names the range, the models, the total and the busiest day", () => {
    expect(summarise(series, stackDays(series, "credits"), "credits")).toBe(
      "Usage by day from 2026-11-01 to 2026-11-04 in credits, stacked by model (2 models: claude-haiku, offline): "
      + "3.75 credits in all; the most on 2026-11-03, 2.25 credits.");
    const none = { ...series, models: [], days: [] };
    expect(summarise(none, stackDays(none, "tokens"), "tokens")).toBe("Usage by day from 2026-11-01 to 2026-11-04: none.");
  });
});
