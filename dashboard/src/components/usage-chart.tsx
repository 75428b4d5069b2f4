/**
 * Usage per day as stacked bars, one colour per model, drawn as SVG (no chart library: the app's
 * JavaScript budget). The image is named by a sentence summarising it; "Show as table" gives the
 * same numbers as a table.
 */
import { useEffect, useRef, useState } from "preact/hooks";

import { Credits } from "./readable";
import {
  type Measure, type UsageSeries, labelledDates, niceScale, stackDays, summarise, tickLabel,
} from "../usage-series";
import { TableWrap } from "./table-wrap";

/** Colours at least 3:1 against white, told apart by people with the common colour blindnesses. */
export const PALETTE = ["#0b5cad", "#c2410c", "#1a7f37", "#8250df", "#b3261e", "#0e7490", "#9a6700", "#57606a"];

/** The drawing's width when the page cannot measure it (tests); else the chart's own width in pixels,
 * so that its text keeps its size on a phone instead of shrinking with the picture. */
const WIDTH = 720;
const HEIGHT = 280;
const LEFT = 64;
const RIGHT = 24;
const TOP = 12;
const BOTTOM = 44;

export function colourOf(models: string[], model: string): string {
  return PALETTE[Math.max(0, models.indexOf(model)) % PALETTE.length]!;
}

/** `height`: the drawing's height in pixels (the Overview draws a small one). */
export function UsageChart({ series, measure, height = HEIGHT }: { series: UsageSeries; measure: Measure; height?: number }) {
  const [asTable, setAsTable] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  const [measured, setMeasured] = useState(0);
  useEffect(() => {
    const element = box.current;
    if (!element || typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(() => setMeasured(Math.round(element.clientWidth)));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  const width = measured > 0 ? Math.max(280, measured) : WIDTH;
  const bars = stackDays(series, measure);
  const scale = niceScale(Math.max(0, ...bars.map((bar) => bar.total)));
  const plotWidth = width - LEFT - RIGHT;
  const plotHeight = height - TOP - BOTTOM;
  const slot = plotWidth / Math.max(1, bars.length);
  const barWidth = Math.max(1, slot * 0.7);
  const y = (value: number) => TOP + plotHeight - (value / scale.max) * plotHeight;
  const labelled = labelledDates(bars.map((bar) => bar.date), Math.max(2, Math.floor(plotWidth / 70)));
  const unit = measure === "credits" ? "Credits" : "Tokens";
  return (
    <div class="usage-chart">
      <div ref={box}>
        <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={summarise(series, bars, measure)}
             preserveAspectRatio="xMidYMid meet">
          <g class="axis" aria-hidden="true">
            {scale.ticks.map((tick) => (
              <g key={tick}>
                <line x1={LEFT} x2={width - RIGHT} y1={y(tick)} y2={y(tick)} class="grid" />
                <text x={LEFT - 6} y={y(tick)} dy="0.32em" text-anchor="end">{tickLabel(tick)}</text>
              </g>
            ))}
            <text x={14} y={TOP + plotHeight / 2} text-anchor="middle"
                  transform={`rotate(-90 14 ${TOP + plotHeight / 2})`}>{unit}</text>
            {bars.map((bar, i) => labelled.has(bar.date) && (
              <text key={bar.date} x={LEFT + slot * i + slot / 2} y={height - BOTTOM + 16} text-anchor="middle">
                {bar.date.slice(5)}</text>
            ))}
            <text x={LEFT + plotWidth / 2} y={height - 6} text-anchor="middle">Day (UTC)</text>
          </g>
          {bars.map((bar, i) => (
            <g key={bar.date} data-date={bar.date}>
              {bar.segments.filter((s) => s.value > 0).map((s) => (
                <rect key={s.model} data-model={s.model} x={LEFT + slot * i + (slot - barWidth) / 2}
                      y={y(s.end)} width={barWidth} height={Math.max(0.5, y(s.start) - y(s.end))}
                      fill={colourOf(series.models, s.model)}>
                  <title>{`${bar.date} ${s.model}: ${tickLabel(s.value)} ${unit.toLowerCase()}`}</title>
                </rect>
              ))}
            </g>
          ))}
          <line x1={LEFT} x2={width - RIGHT} y1={TOP + plotHeight} y2={TOP + plotHeight} class="baseline" />
        </svg>
      </div>
      {series.models.length > 0 && (
        <ul class="legend" aria-label="Models">
          {series.models.map((model) => (
            <li key={model}><span class="swatch" style={{ background: colourOf(series.models, model) }} aria-hidden="true" />
              {model}</li>
          ))}
        </ul>
      )}
      <button type="button" aria-expanded={asTable} onClick={() => setAsTable(!asTable)}>
        {asTable ? "Hide the table" : "Show as table"}</button>
      {asTable && <UsageTable series={series} />}
    </div>
  );
}

/** The chart's numbers: one row per day and model with calls (days without calls are left out). */
export function UsageTable({ series }: { series: UsageSeries }) {
  if (series.days.length === 0) return <p class="empty">No model calls from {series.from} to {series.to}.</p>;
  return (
    <TableWrap label={"Usage by day and model"}>
      <table class="stack usage-table">
        <caption>Usage per day and model, {series.from} to {series.to} (days without calls left out)</caption>
        <thead><tr><th scope="col">Date</th><th scope="col">Model</th><th scope="col">Calls</th>
          <th scope="col">Input tokens</th><th scope="col">Output tokens</th><th scope="col">Credits</th></tr></thead>
        <tbody>
          {series.days.map((day) => (
            <tr key={`${day.date} ${day.model}`}>
              <th scope="row">{day.date}</th>
              <td data-label="Model">{day.model}</td>
              <td data-label="Calls">{day.calls.toLocaleString("en-US")}</td>
              <td data-label="Input tokens">{day.inputTokens.toLocaleString("en-US")}</td>
              <td data-label="Output tokens">{day.outputTokens.toLocaleString("en-US")}</td>
              <td data-label="Credits"><Credits micro={day.microCredits} bare /></td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
