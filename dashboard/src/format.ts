/** How values read on the page. */

/** An ISO time as the reader's local date and time; "never" for none. */
export function when(iso: string | null | undefined, never = "never"): string {
  if (!iso) return never;
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** Micro-credits as credits with up to 6 decimals (1 credit = 1,000,000 micro-credits). */
export function credits(microCredits: number): string {
  const sign = microCredits < 0 ? "-" : "";
  const whole = Math.floor(Math.abs(microCredits) / 1_000_000);
  const fraction = String(Math.abs(microCredits) % 1_000_000).padStart(6, "0").replace(/0+$/, "");
  return `${sign}${whole.toLocaleString("en-US")}${fraction ? `.${fraction}` : ""}`;
}
