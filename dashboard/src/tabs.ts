/**
 * Tabs with addresses, as functions: the keyboard of a tab list (the WAI-ARIA tabs pattern, horizontal,
 * the selection following the focus) and the tab a page's address names (`?tab=invoices`; the first
 * tab has the page's own address), so a link, a reload and Back each open the tab they name.
 */

/** The tab a key moves to from `current` of `count`: Right and Left the next and previous (wrapping
 * at the ends), Home and End the first and last; null: the key is not the tab list's. */
export function tabKey(key: string, current: number, count: number): number | null {
  if (count === 0) return null;
  switch (key) {
    case "ArrowRight": return (current + 1) % count;
    case "ArrowLeft": return (current - 1 + count) % count;
    case "Home": return 0;
    case "End": return count - 1;
    default: return null;
  }
}

/** The query parameter that names a page's tab. */
export const TAB_PARAMETER = "tab";

/** The tab the address's query names; the first tab when it names none, or one the page lacks. */
export function tabOf<Id extends string>(query: URLSearchParams, ids: readonly [Id, ...Id[]]): Id {
  const named = query.get(TAB_PARAMETER);
  return ids.find((id) => id === named) ?? ids[0];
}

/** The address of a page's tab: the page's own path for the first tab, else with `?tab=`. */
export function tabAddress<Id extends string>(path: string, ids: readonly [Id, ...Id[]], id: Id): string {
  return id === ids[0] ? path : `${path}?${new URLSearchParams({ [TAB_PARAMETER]: id })}`;
}
