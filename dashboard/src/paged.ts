/**
 * A list read a page at a time ("Load more" follows nextCursor): the first page loads as useLoad
 * does; `more` appends the next one; `reload` reads the first again (the rows stay until it comes).
 * A change of `deps` (a filter) shows the loading state until its first page comes.
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
  const [round, setRound] = useState(0);
  const filter = JSON.stringify(deps);
  const read = `${round}|${filter}`;
  const [extra, setExtra] = useState<{ items: T[]; cursor: string | null; read: string }>({ items: [], cursor: null, read: "" });
  const [loadingMore, setLoadingMore] = useState(false);
  const [moreError, setMoreError] = useState<unknown>(null);
  const loaded = useLoad(async () => {
    const page = await readPage(null);
    setExtra({ items: [], cursor: page.nextCursor, read });
    setMoreError(null);
    return { ...page, filter };
  }, [read]);
  const first: Loaded<{ items: T[] }> = loaded.state === "ready" && loaded.data.filter !== filter
    ? { state: "loading", reload: loaded.reload } : loaded;
  const current = extra.read === read;
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
        (page) => setExtra((now) => ({ items: [...now.items, ...page.items], cursor: page.nextCursor, read: now.read })),
        setMoreError,
      ).finally(() => setLoadingMore(false));
    },
    reload: () => setRound((n) => n + 1),
  };
}
