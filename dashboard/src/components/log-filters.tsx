/**
 * The logs' filter form: its fields, Apply filters (Enter in a field too) and Clear filters, and
 * the date range in the reader's own zone, to the second (the address keeps the UTC times the API takes, shown
 * under each field). A choice from a list applies at once; a typed id or date applies with Apply or Enter.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";

import { utc } from "../format";
import { inputOfTime, sinceOfInput, untilOfInput } from "../log-filters";

export function FilterForm({ label, active, onApply, onClear, children }: {
  label: string; active: boolean; onApply: () => void; onClear: () => void; children: ComponentChildren }) {
  return (
    <form class="card filters" aria-label={label} onSubmit={(event) => { event.preventDefault(); onApply(); }}>
      <div class="fields">{children}</div>
      <div class="actions">
        {active && <button type="button" onClick={onClear}>Clear filters</button>}
        <button type="submit">Apply filters</button>
      </div>
    </form>
  );
}

/** A typed value kept while it is edited, and set anew when the address changes it. */
export function useDraft(value: string): [string, (next: string) => void] {
  const [draft, setDraft] = useState(value);
  useEffect(() => setDraft(value), [value]);
  return [draft, setDraft];
}

/** The date range being edited: each field's value as typed, applied with the form (a typed date
 * is not sent, nor put in the history, at each of its keystrokes). */
export interface RangeDraft {
  since: string;
  until: string;
  setSince(value: string): void;
  setUntil(value: string): void;
  /** The range as the address takes it (an emptied or unfinished field: no bound). */
  range(): { since: string | undefined; until: string | undefined };
}

export function useRangeDraft(since: string | undefined, until: string | undefined): RangeDraft {
  const [from, setSince] = useDraft(inputOfTime(since));
  const [to, setUntil] = useDraft(inputOfTime(until));
  return { since: from, until: to, setSince, setUntil,
           range: () => ({ since: sinceOfInput(from), until: untilOfInput(to) }) };
}

/** From and To as datetime-local fields to the second, each with the UTC bound it applies now. */
export function DateRange({ draft, since, until }: { draft: RangeDraft; since: string | undefined; until: string | undefined }) {
  return (
    <>
      <div>
        <label>From (your time)<input type="datetime-local" step={1} value={draft.since} aria-describedby="since-utc"
          onInput={(e) => draft.setSince(e.currentTarget.value)} /></label>
        <span id="since-utc" class="muted">{since ? utc(since) : "from the oldest kept"}</span>
      </div>
      <div>
        <label>To (your time)<input type="datetime-local" step={1} value={draft.until} aria-describedby="until-utc"
          onInput={(e) => draft.setUntil(e.currentTarget.value)} /></label>
        <span id="until-utc" class="muted">{until ? utc(until) : "until now"}</span>
      </div>
    </>
  );
}
