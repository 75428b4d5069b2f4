/**
 * Observe → Usage: the tenant's metered model calls per UTC day, stacked by model, in credits or
 * tokens, over the last 7, 30 or 90 days (GET /billing/usage).
 */
import { useState } from "preact/hooks";

import { useClient } from "../api";
import { Show } from "../components/status";
import { UsageChart } from "../components/usage-chart";
import { useLoad } from "../load";
import type { Measure } from "../usage-series";

const RANGES = [7, 30, 90];

/** The last `days` UTC days to today, both included. */
export function lastDays(days: number, today = new Date()): { from: string; to: string } {
  const to = today.toISOString().slice(0, 10);
  const from = new Date(Date.parse(`${to}T00:00:00Z`) - (days - 1) * 86_400_000).toISOString().slice(0, 10);
  return { from, to };
}

export function UsagePage() {
  const client = useClient();
  const [days, setDays] = useState(30);
  const [measure, setMeasure] = useState<Measure>("credits");
  const series = useLoad(() => client.billing.usage(lastDays(days)), [days]);
  return (
    <>
      <h1>Usage</h1>
      <p class="lead">Model calls of agent runs and chat per day (UTC), one colour per model. Credits are what the
        calls cost; tokens are the input and output tokens together. <a href="#/settings/billing">Billing</a> shows
        the balance and this period's totals.</p>
      <div class="chart-controls">
        <label>Period<select value={days} onChange={(e) => setDays(Number(e.currentTarget.value))}>
          {RANGES.map((n) => <option key={n} value={n}>Last {n} days</option>)}</select></label>
        <fieldset class="measure">
          <legend>Show</legend>
          {(["credits", "tokens"] as const).map((m) => (
            <label key={m} class="check"><input type="radio" name="measure" value={m} checked={measure === m}
                                               onChange={() => setMeasure(m)} />{m === "credits" ? "Credits" : "Tokens"}</label>
          ))}
        </fieldset>
      </div>
      <Show loaded={series} what="the usage">
        {(data) => (
          <section class="card chart-card" aria-labelledby="usage-title">
            <h2 id="usage-title">Usage from {data.from} to {data.to}</h2>
            {data.days.length === 0 && <p class="muted">No model calls in this period yet.</p>}
            <UsageChart series={data} measure={measure} />
          </section>
        )}
      </Show>
    </>
  );
}
