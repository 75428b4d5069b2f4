/** Data a page reads: loading, failed (with the error to show) or ready, and `reload`. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

export type Loaded<T> =
  | { state: "loading"; reload: () => void }
  | { state: "failed"; error: unknown; reload: () => void }
  | { state: "ready"; data: T; reload: () => void };

export function useLoad<T>(read: (signal: AbortSignal) => Promise<T>, deps: unknown[] = []): Loaded<T> {
  const [result, setResult] = useState<{ state: "loading" } | { state: "failed"; error: unknown }
    | { state: "ready"; data: T }>({ state: "loading" });
  const [round, setRound] = useState(0);
  const reading = useRef(read);
  reading.current = read;
  useEffect(() => {
    const abort = new AbortController();
    reading.current(abort.signal).then(
      (data) => { if (!abort.signal.aborted) setResult({ state: "ready", data }); },
      (error: unknown) => { if (!abort.signal.aborted) setResult({ state: "failed", error }); },
    );
    return () => abort.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [round, ...deps]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { ...result, reload } as Loaded<T>;
}

/** Every item of an async iterator (the client's `iterate` pages), at most `limit`. */
export async function collect<T>(items: AsyncIterable<T>, limit = 500): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) {
    all.push(item);
    if (all.length >= limit) break;
  }
  return all;
}
