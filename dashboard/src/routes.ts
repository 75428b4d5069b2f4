/**
 * The pages, each with its path and its place in the navigation. A page is a component of its
 * route's parameters; it reads and writes through the signed-in client (api.ts).
 */
import type { FunctionComponent } from "preact";

import { ApiKeysPage } from "./pages/api-keys";
import { AuditLogPage } from "./pages/audit-log";
import { EventPage, EventsPage } from "./pages/events";
import { Home } from "./pages/home";
import { NetworkSecurityPage } from "./pages/network-security";
import { WebhookPage } from "./pages/webhook";
import { WebhooksPage } from "./pages/webhooks";

export interface Route {
  path: string;
  title: string;
  /** The navigation's group; none: reached from another page only. */
  section?: "Build" | "Observe" | "Settings";
  page: FunctionComponent<{ params: Record<string, string>; query: URLSearchParams }>;
}

export const ROUTES: Route[] = [
  { path: "/", title: "Overview", page: Home },
  { path: "/webhooks", title: "Webhooks", section: "Build", page: WebhooksPage },
  { path: "/webhooks/:id", title: "Webhook endpoint", page: WebhookPage },
  { path: "/events", title: "Event log", section: "Observe", page: EventsPage },
  { path: "/events/:id", title: "Event", page: EventPage },
  { path: "/audit-log", title: "Audit log", section: "Observe", page: AuditLogPage },
  { path: "/settings/api-keys", title: "API keys", section: "Settings", page: ApiKeysPage },
  { path: "/settings/network", title: "Network security", section: "Settings", page: NetworkSecurityPage },
];
