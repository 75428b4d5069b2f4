/** Loading, empty and error states, the same on every page. */
import { ApiError } from "@svc/client";
import type { ComponentChildren } from "preact";

import type { Loaded } from "../load";

export function Loading({ what }: { what: string }) {
  return <p class="loading" role="status" aria-live="polite">Loading {what}…</p>;
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
