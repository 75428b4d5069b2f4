/**
 * The pages, each at its place (places.ts: its path, title and place in the navigation). A page is a
 * component of its route's parameters; it reads and writes through the signed-in client (api.ts).
 * Pages never import this module: a page that links to others reads places.ts.
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
import { ProfilePage } from "./pages/profile";
import { ProjectsPage } from "./pages/projects";
import { RegionsStoragePage } from "./pages/regions-storage";
import { RunPage } from "./pages/run";
import { UsagePage } from "./pages/usage";
import { WebhookPage } from "./pages/webhook";
import { WebhooksPage } from "./pages/webhooks";
import { type Place, type PlaceName, PLACES } from "./places";

export interface Route extends Place {
  page: FunctionComponent<{ params: Record<string, string>; query: URLSearchParams }>;
}

const PAGES: Record<PlaceName, Route["page"]> = {
  home: Home,
  projects: ProjectsPage,
  agents: AgentsPage,
  agent: AgentPage,
  run: RunPage,
  chat: ChatSessionsPage,
  chatSession: ChatSessionPage,
  webhooks: WebhooksPage,
  webhook: WebhookPage,
  events: EventsPage,
  event: EventPage,
  auditLog: AuditLogPage,
  apiKeys: ApiKeysPage,
  network: NetworkSecurityPage,
  usage: UsagePage,
  billing: BillingPage,
  regions: RegionsStoragePage,
  members: MembersPage,
  acceptInvitation: AcceptInvitationPage,
  device: DeviceLoginPage,
  profile: ProfilePage,
};

/** Every place with its page, in the navigation's order (places.ts). */
export const ROUTES: Route[] = (Object.keys(PLACES) as PlaceName[]).map((name) => ({ ...PLACES[name], page: PAGES[name] }));
