/**
 * What a list shows with nothing in it: what the thing is, what to do first and where to read more
 * (the API reference the deployment serves, at the thing's section); and, for a filtered list, that
 * no entry matches, with Clear filters.
 */
import type { ComponentChildren } from "preact";

import { useClient } from "../api";

/** The API reference's address (Redoc, served by the API) at a tag's section. */
export function referenceUrl(apiBaseUrl: string, tag: string): string {
  return `${apiBaseUrl.replace(/\/+$/, "")}/api/v1/docs#tag/${tag.trim().replace(/\s+/g, "-")}`;
}

/** A list with nothing in it yet: its title ("No endpoints yet"), what it is and what to do first,
 * and a link to the reference's section (`tag`: the document's tag, "Webhooks"). `level`: the
 * title's heading level (3 under a section's own heading). */
export function EmptyState({ title, tag, level = 2, children }: {
  title: string; tag?: string; level?: 2 | 3; children: ComponentChildren }) {
  const client = useClient();
  const Heading = level === 2 ? "h2" : "h3";
  return (
    <div class="empty empty-state">
      <Heading>{title}</Heading>
      {children}
      {tag && <p><a href={referenceUrl(client.transport.entryUrl, tag)}>{tag} in the API reference</a></p>}
    </div>
  );
}

/** A filtered list with nothing in it: which filters left it empty, and Clear filters. */
export function NoMatch({ what, words, onClear }: { what: string; words: string; onClear: () => void }) {
  return (
    <div class="empty empty-state">
      <p role="status">No {what} {words ? `${words}` : "matches the filters"}.</p>
      <button type="button" onClick={onClear}>Clear filters</button>
    </div>
  );
}
