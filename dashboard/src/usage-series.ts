/**
 * The usage chart's data: the answer of GET /billing/usage (one entry per UTC day and model that had
 * calls) turned into one stacked bar per day of the range, days without calls at zero, and a value
 * scale with round ticks.
 */
import type { components } from "@svc/client";

/** GET /billing/usage's data (get_usage_series) and one of its days. */
export type UsageSeries = components["schemas"]["BillingUsageSeries"];
export type UsageDay = components["schemas"]["BillingUsageDay"];

export type Measure = "credits" | "tokens";

export interface Segment {
  model: string;
  value: number;
  /** Where the segment starts and ends on the value axis (the sum of the models below it). */
  start: number;
  end: number;
}

export interface Bar {
  date: string;
  total: number;
  /** One per model of the series, in the series' order (a model without calls that day: 0). */
  segments: Segment[];
}

export interface Scale {
  max: number;
  step: number;
  ticks: number[];
}

const DAY_MS = 86_400_000;

/** Every UTC date from `from` to `to`, both included (YYYY-MM-DD). */
export function datesBetween(from: string, to: string): string[] {
  const first = Date.parse(`${from}T00:00:00Z`);
  const last = Date.parse(`${to}T00:00:00Z`);
  if (Number.isNaN(first) || Number.isNaN(last)) return [];
  const dates: string[] = [];
  for (let at = first; at <= last; at += DAY_MS) dates.push(new Date(at).toISOString().slice(0, 10));
  return dates;
}

/** A day's value in the chart's unit: credits (from micro-credits) or tokens (input and output). */
export function valueOf(day: UsageDay, measure: Measure): number {
  return measure === "credits" ? day.microCredits / 1_000_000 : day.inputTokens + day.outputTokens;
}

/** One bar per date of the range, each stacked in the order of `series.models`. */
export function stackDays(series: UsageSeries, measure: Measure): Bar[] {
  const byKey = new Map<string, UsageDay>();
  for (const day of series.days) byKey.set(`${day.date} ${day.model}`, day);
  return datesBetween(series.from, series.to).map((date) => {
    let total = 0;
    const segments = series.models.map((model) => {
      const day = byKey.get(`${date} ${model}`);
      const value = day ? valueOf(day, measure) : 0;
      const segment = { model, value, start: total, end: total + value };
      total += value;
      return segment;
    });
    return { date, total, segments };
  });
}

/** Drops the binary fraction's noise (0.1 * 3 = 0.30000000000000004). */
function tidy(value: number): number {
  return Number(value.toPrecision(12));
}

/**
 * A value axis from 0 that holds `max`, with about `count` steps of 1, 2 or 5 times a power of ten;
 * an empty chart (max 0) still has an axis of 0 to 1.
 */
export function niceScale(max: number, count = 4): Scale {
  if (!(max > 0)) return { max: 1, step: 0.25, ticks: [0, 0.25, 0.5, 0.75, 1] };
  const rough = max / count;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = tidy(([1, 2, 5, 10].find((m) => m * power >= rough) ?? 10) * power);
  const steps = Math.ceil(tidy(max / step));
  const ticks = Array.from({ length: steps + 1 }, (_, i) => tidy(i * step));
  return { max: ticks[ticks.length - 1]!, step, ticks };
}

/** A tick's label: whole numbers with separators, fractions as written (0.005), large ones short (12k). */
export function tickLabel(value: number): string {
  if (value >= 1_000_000) return `${tidy(value / 1_000_000)}M`;
  if (value >= 10_000) return `${tidy(value / 1000)}k`;
  return value.toLocaleString("en-US", { maximumFractionDigits: 6 });
}

/** The dates that get a label under the axis: at most `most`, evenly spaced, the last one always. */
export function labelledDates(dates: string[], most = 6): Set<string> {
  if (dates.length <= most) return new Set(dates);
  const every = Math.ceil(dates.length / most);
  return new Set(dates.filter((_, i) => (dates.length - 1 - i) % every === 0));
}

/** What the chart shows, in a sentence (the image's accessible name). */
export function summarise(series: UsageSeries, bars: Bar[], measure: Measure): string {
  const unit = measure === "credits" ? "credits" : "tokens";
  const total = tidy(bars.reduce((sum, bar) => sum + bar.total, 0));
  const range = `from ${series.from} to ${series.to}`;
  if (total === 0) return `Usage by day ${range}: none.`;
  const top = bars.reduce((best, bar) => (bar.total > best.total ? bar : best));
  const models = series.models.length === 1 ? "1 model" : `${series.models.length} models`;
  return `Usage by day ${range} in ${unit}, stacked by model (${models}: ${series.models.join(", ")}): `
    + `${tickLabel(total)} ${unit} in all; the most on ${top.date}, ${tickLabel(tidy(top.total))} ${unit}.`;
}
