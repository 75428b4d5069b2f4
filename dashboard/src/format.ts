/**
 * How values read on the page: one place for money, credits, times, ids and people, so every page
 * writes them alike. The exact value goes in a `title` beside each (components/readable.tsx).
 */

const LOCALE = "en-US";

/** An ISO time as the reader's local date and time; "never" for none. */
export function when(iso: string | null | undefined, never = "never"): string {
  if (!iso) return never;
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** An ISO time as its exact UTC time, "2026-11-29 04:16:08 UTC"; an unreadable one as it is. */
export function utc(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 365 * 86_400], ["month", 30 * 86_400], ["week", 7 * 86_400], ["day", 86_400], ["hour", 3_600], ["minute", 60],
];
const RELATIVE = new Intl.RelativeTimeFormat(LOCALE, { numeric: "auto" });

/**
 * An ISO time relative to `now`: "3 minutes ago", "in 2 days", "yesterday", "now". A unit counts only
 * when reached in full (59 s is "59 seconds ago", 60 s "1 minute ago"); 30 days make a month, 365 a year.
 */
export function relative(iso: string, now: number = Date.now()): string {
  const at = new Date(iso).getTime();
  if (Number.isNaN(at)) return iso;
  const seconds = (at - now) / 1000;
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return RELATIVE.format(Math.trunc(seconds / size), unit);
  }
  return RELATIVE.format(Math.trunc(seconds), "second");
}

const CREDITS = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 2 });
const SIGNED_CREDITS = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 2, signDisplay: "exceptZero" });
const SMALL_CREDITS = new Intl.NumberFormat(LOCALE, { maximumSignificantDigits: 2 });
const SIGNED_SMALL_CREDITS = new Intl.NumberFormat(LOCALE, { maximumSignificantDigits: 2, signDisplay: "exceptZero" });

/**
 * Micro-credits (1 credit = 1,000,000) as the plan shows credits: at most two decimals, only where
 * needed ("3,576" for 3,575.999972, "12.5", "-3"); an amount under 0.01 but not zero keeps two
 * significant digits ("0.0012") rather than reading as nothing. `signed`: "+1,000" and "-3".
 */
export function credits(microCredits: number, signed = false): string {
  const value = microCredits / 1_000_000;
  if (value !== 0 && Math.abs(value) < 0.005) return (signed ? SIGNED_SMALL_CREDITS : SMALL_CREDITS).format(value);
  return (signed ? SIGNED_CREDITS : CREDITS).format(value);
}

/** Micro-credits exactly, with up to 6 decimals: "3,575.999972" (the value `credits` rounds). */
export function exactCredits(microCredits: number): string {
  const sign = microCredits < 0 ? "-" : "";
  const whole = Math.floor(Math.abs(microCredits) / 1_000_000);
  const fraction = String(Math.abs(microCredits) % 1_000_000).padStart(6, "0").replace(/0+$/, "");
  return `${sign}${whole.toLocaleString(LOCALE)}${fraction ? `.${fraction}` : ""}`;
}

/** "1 credit", "3,576 credits", "0.5 credits": `credits` with its unit. */
export function creditsText(microCredits: number, signed = false): string {
  const shown = credits(microCredits, signed);
  return `${shown} ${shown === "1" || shown === "+1" || shown === "-1" ? "credit" : "credits"}`;
}

/**
 * An amount in hundredths of its currency (cents) as money with two decimals and its currency:
 * "$1,000.00", "€12.50", "-$5.00"; a code the browser does not know as "12.50 XYZ".
 */
export function money(cents: number, currency = "usd"): string {
  const code = currency.toUpperCase();
  const value = cents / 100;
  try {
    return new Intl.NumberFormat(LOCALE, { style: "currency", currency: code, minimumFractionDigits: 2,
                                           maximumFractionDigits: 2 }).format(value);
  } catch {
    return `${new Intl.NumberFormat(LOCALE, { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(value)} ${code}`;
  }
}

/**
 * An id shortened for reading: its prefix, the first 4 and the last 3 characters of the rest,
 * "key_01HX…9Z2"; an id short enough already (at most 10 characters after its prefix) as it is.
 */
export function shortId(id: string): string {
  const cut = id.indexOf("_") + 1;
  const prefix = id.slice(0, cut);
  const rest = id.slice(cut);
  return rest.length <= 10 ? id : `${prefix}${rest.slice(0, 4)}…${rest.slice(-3)}`;
}

/** A person's name from the members' names (user id → name), else the shortened id. */
export function personName(id: string, names: ReadonlyMap<string, string>): string {
  return names.get(id) ?? shortId(id);
}
