/**
 * The pages, each with its path and its place in the navigation. A page is a component of its
 * route's parameters; it reads and writes through the signed-in client (api.ts).
 */
import type { FunctionComponent } from "preact";

import { AcceptInvitationPage } from "./pages/accept-invitation";
import { AgentPage, AgentsPage } from "./pages/agents";
import { ApiKeysPage } from "./pages/api-keys";
import { AuditLogPage } from "./pages/audit-log";
import { BillingPage } from "./pages/billing";
import { ChatSessionPage, ChatSessionsPage } from "./pages/chat";
import { DeviceLoginPage } from "./pages/device";
import { EventPage, EventsPage } from "./pages/events";
import { Home } from "./pages/home";
import { MembersPage } from "./pages/members";
import { NetworkSecurityPage } from "./pages/network-security";
import { ProjectsPage } from "./pages/projects";
import { RegionsStoragePage } from "./pages/regions-storage";
import { RunPage } from "./pages/run";
import { UsagePage } from "./pages/usage";
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
  { path: "/projects", title: "Projects", section: "Build", page: ProjectsPage },
  { path: "/agents", title: "Agents", section: "Build", page: AgentsPage },
  { path: "/agents/:id", title: "Agent", page: AgentPage },
  { path: "/agents/:id/runs/:runId", title: "Run", page: RunPage },
  { path: "/chat", title: "Chat", section: "Build", page: ChatSessionsPage },
  { path: "/chat/:id", title: "Chat session", page: ChatSessionPage },
  { path: "/webhooks", title: "Webhooks", section: "Build", page: WebhooksPage },
  { path: "/webhooks/:id", title: "Webhook endpoint", page: WebhookPage },
  { path: "/events", title: "Event log", section: "Observe", page: EventsPage },
  { path: "/events/:id", title: "Event", page: EventPage },
  { path: "/audit-log", title: "Audit log", section: "Observe", page: AuditLogPage },
  { path: "/settings/api-keys", title: "API keys", section: "Settings", page: ApiKeysPage },
  { path: "/settings/network", title: "Network security", section: "Settings", page: NetworkSecurityPage },
  { path: "/usage", title: "Usage", section: "Observe", page: UsagePage },
  { path: "/settings/billing", title: "Billing", section: "Settings", page: BillingPage },
  { path: "/settings/regions", title: "Regions and storage", section: "Settings", page: RegionsStoragePage },
  { path: "/settings/members", title: "Members", section: "Settings", page: MembersPage },
  { path: "/invitations/accept", title: "Invitation", page: AcceptInvitationPage },
  { path: "/device", title: "Command-line login", page: DeviceLoginPage },
];
