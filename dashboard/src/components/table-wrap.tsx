/** A table that scrolls sideways when it is wider than the screen: a labelled region that takes the
 * keyboard's focus, so it can be scrolled without a mouse (axe: scrollable-region-focusable). */
import type { ComponentChildren } from "preact";

export function TableWrap({ label, children }: { label: string; children: ComponentChildren }) {
  return <div class="table-wrap" tabIndex={0} role="region" aria-label={label}>{children}</div>;
}
