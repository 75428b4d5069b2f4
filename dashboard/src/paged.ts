/**
 * A list read a page at a time ("Load more" follows nextCursor): the first page loads as useLoad
 * does; `more` appends the next one; `reload` starts again from the first.
 */
import type { Page } from "@svc/client";
import { useState } from "preact/hooks";

import { type Loaded, useLoad } from "./load";

export interface Paged<T> {
  first: Loaded<{ items: T[] }>;
  items: T[];
  hasMore: boolean;
  loadingMore: boolean;
  moreError: unknown;
  more(): void;
  reload(): void;
}

export function usePaged<T>(readPage: (cursor: string | null) => Promise<Page<T>>, deps: unknown[] = []): Paged<T> {
  const [extra, setExtra] = useState<{ items: T[]; cursor: string | null; round: number }>({ items: [], cursor: null, round: -1 });
  const [loadingMore, setLoadingMore] = useState(false);
  const [moreError, setMoreError] = useState<unknown>(null);
  const [round, setRound] = useState(0);
  const first = useLoad(async () => {
    const page = await readPage(null);
    setExtra({ items: [], cursor: page.nextCursor, round });
    setMoreError(null);
    return page;
  }, [round, ...deps]);
  const current = extra.round === round;
  const cursor = current ? extra.cursor : null;
  const items = first.state === "ready" ? [...first.data.items, ...(current ? extra.items : [])] : [];
  return {
    first, items, loadingMore, moreError,
    hasMore: first.state === "ready" && cursor !== null,
    more() {
      if (!cursor || loadingMore) return;
      setLoadingMore(true);
      setMoreError(null);
      readPage(cursor).then(
        (page) => setExtra((now) => ({ items: [...now.items, ...page.items], cursor: page.nextCursor, round: now.round })),
        setMoreError,
      ).finally(() => setLoadingMore(false));
    },
    reload: () => setRound((n) => n + 1),
  };
}
