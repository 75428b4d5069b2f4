/**
 * The dashboard's places: each page's path, title and group in the navigation, without the pages
 * themselves. routes.ts gives each its page; a page that links to others (the overview's blocks) reads
 * this list, so imports point one way: routes → pages → places.
 */

export interface Place {
  path: string;
  title: string;
  /** The navigation's group; none: reached from another page only. */
  section?: "Build" | "Observe" | "Settings";
}

export const PLACES = {
  home: { path: "/", title: "Overview" },
  projects: { path: "/projects", title: "Projects", section: "Build" },
  agents: { path: "/agents", title: "Agents", section: "Build" },
  agent: { path: "/agents/:id", title: "Agent" },
  run: { path: "/agents/:id/runs/:runId", title: "Run" },
  chat: { path: "/chat", title: "Chat", section: "Build" },
  chatSession: { path: "/chat/:id", title: "Chat session" },
  webhooks: { path: "/webhooks", title: "Webhooks", section: "Build" },
  webhook: { path: "/webhooks/:id", title: "Webhook endpoint" },
  events: { path: "/events", title: "Event log", section: "Observe" },
  event: { path: "/events/:id", title: "Event" },
  auditLog: { path: "/audit-log", title: "Audit log", section: "Observe" },
  apiKeys: { path: "/settings/api-keys", title: "API keys", section: "Settings" },
  network: { path: "/settings/network", title: "Network security", section: "Settings" },
  usage: { path: "/usage", title: "Usage", section: "Observe" },
  billing: { path: "/settings/billing", title: "Billing", section: "Settings" },
  regions: { path: "/settings/regions", title: "Regions and storage", section: "Settings" },
  members: { path: "/settings/members", title: "Members", section: "Settings" },
  acceptInvitation: { path: "/invitations/accept", title: "Invitation" },
  device: { path: "/device", title: "Command-line login" },
  profile: { path: "/settings/profile", title: "Profile", section: "Settings" },
} as const satisfies Record<string, Place>;

export type PlaceName = keyof typeof PLACES;

/** The pages shown before anyone is signed in (app.tsx draws them without the shell). Any other
 * address shows the sign-in page, and the page it names once signed in. */
export const SIGNED_OUT = {
  signIn: { path: "/", title: "Sign in" },
  signUp: { path: "/sign-up", title: "Create an account" },
  forgotPassword: { path: "/forgot-password", title: "Forgot password" },
  /** Where the e-mailed link leads (the API names it: DashboardUrl/#/reset-password?token=…); shown
   * signed in too, since the reset ends every session. */
  resetPassword: { path: "/reset-password", title: "Set a new password" },
} as const satisfies Record<string, Place>;

/** The password reset's page, where "Forgot password?" leads: the sign-in page and the sign-up page's
 * "this address may have an account" message link to it (components/forgot-password.tsx). */
export const FORGOT_PASSWORD_PATH: string | null = SIGNED_OUT.forgotPassword.path;
