/**
 * The pages, each with its path and its place in the navigation. A page is a component of its
 * route's parameters; it reads and writes through the signed-in client (api.ts).
 */
import type { FunctionComponent } from "preact";

import { ApiKeysPage } from "./pages/api-keys";
import { BillingPage } from "./pages/billing";
import { Home } from "./pages/home";
import { NetworkSecurityPage } from "./pages/network-security";
import { RegionsStoragePage } from "./pages/regions-storage";
import { UsagePage } from "./pages/usage";

export interface Route {
  path: string;
  title: string;
  /** The navigation's group; none: reached from another page only. */
  section?: "Build" | "Observe" | "Settings";
  page: FunctionComponent<{ params: Record<string, string>; query: URLSearchParams }>;
}

export const ROUTES: Route[] = [
  { path: "/", title: "Overview", page: Home },
  { path: "/settings/api-keys", title: "API keys", section: "Settings", page: ApiKeysPage },
  { path: "/settings/network", title: "Network security", section: "Settings", page: NetworkSecurityPage },
  { path: "/usage", title: "Usage", section: "Observe", page: UsagePage },
  { path: "/settings/billing", title: "Billing", section: "Settings", page: BillingPage },
  { path: "/settings/regions", title: "Regions and storage", section: "Settings", page: RegionsStoragePage },
];
