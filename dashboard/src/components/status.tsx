/** Loading, empty and error states, the same on every page. */
import { ApiError } from "@svc/client";
import type { ComponentChildren } from "preact";

import type { Loaded } from "../load";

/** What stands for content while it loads: grey lines, hidden from assistive technology, and
 * "Loading …" said once to a screen reader. The element that will hold the content is aria-busy
 * (the Overview's blocks; Loading around it elsewhere). */
export function Skeleton({ what, lines = 3 }: { what: string; lines?: number }) {
  return (
    <>
      <span class="visually-hidden" role="status">Loading {what}…</span>
      <div class="skeleton" aria-hidden="true">{Array.from({ length: lines }, (_, i) => <span key={i} />)}</div>
    </>
  );
}

/** A page's part that is still loading: busy, with its skeleton. */
export function Loading({ what, lines }: { what: string; lines?: number }) {
  return <div class="loading" aria-busy="true"><Skeleton what={what} lines={lines} /></div>;
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>;
}

/** What an error says to a person: the service's message and code, and the request id to quote. */
export function describeError(error: unknown): { message: string; code?: string; requestId?: string } {
  if (error instanceof ApiError) {
    const fields = Array.isArray(error.details["fields"])
      ? (error.details["fields"] as { field?: string; message?: string; reason?: string }[])
        .map((f) => `${f.field ?? ""}: ${f.message ?? f.reason ?? ""}`).join("; ")
      : "";
    return { message: fields ? `${error.message} (${fields})` : error.message, code: error.code,
             ...(error.requestId ? { requestId: error.requestId } : {}) };
  }
  if (error instanceof Error) return { message: error.message || error.name };
  return { message: String(error) };
}

export function ErrorNotice({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const { message, code, requestId } = describeError(error);
  return (
    <div class="error" role="alert">
      <p><strong>{code ? `${code}: ` : ""}</strong>{message}</p>
      {requestId && <p class="request-id">Request id: <code>{requestId}</code></p>}
      {onRetry && <button type="button" onClick={onRetry}>Try again</button>}
    </div>
  );
}

/** A page's data: its loading state, its error, or the children made from it. */
export function Show<T>({ loaded, what, children }: { loaded: Loaded<T>; what: string;
                                                      children: (data: T) => ComponentChildren }) {
  if (loaded.state === "loading") return <Loading what={what} />;
  if (loaded.state === "failed") return <ErrorNotice error={loaded.error} onRetry={loaded.reload} />;
  return <>{children(loaded.data)}</>;
}
