/**
 * Values as format.ts writes them, each with its exact form in a `title`: credits, money, a time
 * relative to now, a shortened id with Copy, and a person by name.
 */
import { useEffect, useState } from "preact/hooks";

import { creditsText, credits as creditsShown, exactCredits, money, personName, relative, shortId, utc } from "../format";
import { useNames } from "../people";

/** "3,576 credits" (`bare`: "3,576", `signed`: "+3,576"), the exact amount on hover. */
export function Credits({ micro, bare = false, signed = false, testId }: {
  micro: number; bare?: boolean; signed?: boolean; testId?: string }) {
  const exact = `${signed && micro > 0 ? "+" : ""}${exactCredits(micro)} credits`;
  return <span class="amount" title={exact} data-testid={testId}>{bare ? creditsShown(micro, signed) : creditsText(micro, signed)}</span>;
}

/** "$1,000.00". */
export function Money({ cents, currency }: { cents: number; currency?: string }) {
  return <span class="amount">{money(cents, currency)}</span>;
}

/** Every shown time's reader, told each half minute to read the clock again (one timer for all). */
const readers = new Set<(now: number) => void>();
let ticking: number | undefined;
export const TICK_MS = 30_000;

function useNow(): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    readers.add(setNow);
    ticking ??= window.setInterval(() => { const now = Date.now(); readers.forEach((read) => read(now)); }, TICK_MS);
    return () => {
      readers.delete(setNow);
      if (readers.size === 0) { window.clearInterval(ticking); ticking = undefined; }
    };
  }, []);
  return now;
}

/** "3 minutes ago" in a <time> (kept current while shown) with the exact UTC time on hover; `never`
 * when there is none. */
export function Time({ iso, never = "never" }: { iso: string | null | undefined; never?: string }) {
  if (!iso) return <>{never}</>;
  return <RelativeTime iso={iso} />;
}

function RelativeTime({ iso }: { iso: string }) {
  const now = useNow();
  return <time dateTime={iso} title={utc(iso)}>{relative(iso, now)}</time>;
}

/** "key_01HX…9Z2" with the whole id on hover and a Copy button; it never wraps over lines. */
export function ShortId({ id, label }: { id: string; label?: string }) {
  const [copied, setCopied] = useState<"no" | "yes" | "failed">("no");
  const said = copied === "yes" ? "Copied" : copied === "failed" ? "Copy failed" : "Copy";
  return (
    <span class="short-id">
      <code title={id}>{shortId(id)}</code>
      {/* its name starts with what it shows ("Copy", then "Copied"), then says what it copies */}
      <button type="button" class="copy-id" aria-label={`${said} ${label ?? id}`} onClick={() => {
        navigator.clipboard.writeText(id).then(() => setCopied("yes"), () => setCopied("failed"));
      }}>{said}</button>
    </span>
  );
}

/** A member by name with the user id on hover; someone not (or no longer) a member by the shortened id. */
export function Person({ id }: { id: string }) {
  const names = useNames();
  if (!/^[a-z]+_/.test(id)) return <span class="person">{id}</span>;   // "service", "operator:ops"
  const name = names.get(id);
  return name ? <span class="person" title={id}>{personName(id, names)}</span> : <ShortId id={id} />;
}
