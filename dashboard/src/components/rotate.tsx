/**
 * A rotation asked in its dialog (a key's value, an endpoint's signing secret): how long the current
 * one keeps working (none after a leak), then the new one, shown there once with Copy.
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";

import { useAction } from "../action";
import { CopyValue } from "./copy";
import { ErrorNotice } from "./status";

export interface Overlap { seconds: number; label: string }

/** The question: `rotate` gets the overlap chosen (in seconds); its refusal is shown in the form. */
export function OverlapForm({ explain, question, options, submit, rotate, close }: {
  explain: ComponentChildren; question: string; options: Overlap[]; submit: string;
  rotate: (overlapSeconds: number) => Promise<void>; close: () => void }) {
  const action = useAction();
  const [overlap, setOverlap] = useState(86400);
  return (
    <form onSubmit={(event) => {
      event.preventDefault();
      void action.run(() => rotate(overlap));
    }}>
      <p>{explain}</p>
      <label>{question}
        <select value={overlap} onChange={(e) => setOverlap(Number(e.currentTarget.value))}>
          {options.map((o) => <option key={o.seconds} value={o.seconds}>{o.label}</option>)}
        </select></label>
      <div class="actions">
        <button type="button" onClick={close}>Cancel</button>
        <button type="submit" class="primary" disabled={action.busy}>{action.busy ? "Rotating…" : submit}</button>
      </div>
      {action.error !== null && <ErrorNotice error={action.error} />}
    </form>
  );
}

/** The new value, once: what it means (`children`), Copy, and Done. */
export function NewValue({ value, label, close, children }: { value: string; label: string; close: () => void;
                                                              children: ComponentChildren }) {
  return (
    <div class="reveal">
      <p>{children}</p>
      <CopyValue value={value} label={label} />
      <div class="actions"><button type="button" class="primary" onClick={close}>Done</button></div>
    </div>
  );
}
