/** A button's work: busy while it runs, its error kept to show, a result callback when it worked. */
import { useState } from "preact/hooks";

export interface Action {
  busy: boolean;
  error: unknown;
  run(work: () => Promise<unknown>): Promise<boolean>;
  clear(): void;
}

export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  return {
    busy, error,
    async run(work) {
      setBusy(true);
      setError(null);
      try {
        await work();
        return true;
      } catch (failure) {
        setError(failure);
        return false;
      } finally {
        setBusy(false);
      }
    },
    clear: () => setError(null),
  };
}
