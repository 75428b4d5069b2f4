/** Four days and two models, as GET /billing/usage answers them (the second and fourth day without calls). */
import type { UsageSeries } from "../src/usage-series";

export const series: UsageSeries = {
  from: "2026-11-01", to: "2026-11-04", models: ["claude-haiku", "offline"],
  days: [
    { date: "2026-11-01", model: "offline", calls: 2, inputTokens: 100, outputTokens: 20, microCredits: 1_500_000 },
    { date: "2026-11-03", model: "claude-haiku", calls: 1, inputTokens: 1000, outputTokens: 300, microCredits: 250_000 },
    { date: "2026-11-03", model: "offline", calls: 4, inputTokens: 40, outputTokens: 4, microCredits: 2_000_000 },
  ],
};
