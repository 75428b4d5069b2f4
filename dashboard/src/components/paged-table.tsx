/** A list read a page at a time (paged.ts) as a stacking table: loading, error, empty, and "Load more".
 * `empty`: a sentence (shown as the Empty state), or an empty state of its own (components/empty-state.tsx). */
import type { ComponentChildren } from "preact";

import type { Paged } from "../paged";
import { Empty, ErrorNotice, Show } from "./status";
import { TableWrap } from "./table-wrap";

export function PagedTable<T>({ paged, what, empty, columns, row }: {
  paged: Paged<T>; what: string; empty: ComponentChildren; columns: string[]; row: (item: T) => ComponentChildren;
}) {
  return (
    <Show loaded={paged.first} what={what}>
      {() => paged.items.length === 0 ? (typeof empty === "string" ? <Empty>{empty}</Empty> : empty) : <>
        <TableWrap label={what}>
          <table class="stack">
            <thead><tr>{columns.map((c) => <th key={c} scope="col">{c}</th>)}</tr></thead>
            <tbody>{paged.items.map(row)}</tbody>
          </table>
        </TableWrap>
        {paged.hasMore && <button type="button" disabled={paged.loadingMore} onClick={paged.more}>
          {paged.loadingMore ? "Loading…" : "Load more"}</button>}
        {paged.moreError !== null && <ErrorNotice error={paged.moreError} onRetry={paged.more} />}
      </>}
    </Show>
  );
}
