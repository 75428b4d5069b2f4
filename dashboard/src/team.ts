/**
 * Who may do what on the Members page, as the service's rules say (docs/organizations.md): the page
 * offers only what the service would allow, and shows the service's refusal for the rest (the last
 * owner, a change that lost a race).
 */
import type { components } from "@svc/client";

export type Role = components["schemas"]["Member"]["role"];
export const ROLES: Role[] = ["owner", "admin", "member"];

export interface Viewer {
  userId: string | undefined;
  /** The viewer's role in the tenant. */
  role: string;
  scopes: string[];
}

export interface MemberActions {
  /** The roles the viewer may give this member (empty: the role cannot be changed by the viewer). */
  roles: Role[];
  remove: boolean;
  leave: boolean;
  transfer: boolean;
}

/** The roles a viewer may hand out: owners only make owners; `members:write` for any change. */
export function grantableRoles(viewer: Viewer): Role[] {
  if (!viewer.scopes.includes("members:write")) return [];
  return viewer.role === "owner" ? ROLES : ROLES.filter((role) => role !== "owner");
}

export function memberActions(viewer: Viewer, member: { userId: string; role: Role }): MemberActions {
  if (member.userId === viewer.userId) return { roles: [], remove: false, leave: true, transfer: false };
  const grantable = grantableRoles(viewer);
  // Unmaking or removing an owner needs an owner, as making one does.
  const manage = grantable.length > 0 && (member.role !== "owner" || viewer.role === "owner");
  return {
    roles: manage ? grantable : [],
    remove: manage,
    leave: false,
    transfer: viewer.role === "owner" && member.role !== "owner",
  };
}

/** Resend: a pending or expired invitation; revoke: a pending one (an accepted one is a member now). */
export function invitationActions(status: string, mayInvite: boolean): { resend: boolean; revoke: boolean } {
  return { resend: mayInvite && (status === "pending" || status === "expired"),
           revoke: mayInvite && status === "pending" };
}

/** What a device login's state means to the person at the browser; null while it waits for them. */
export function loginOutcome(status: string, reason?: string | null): string | null {
  switch (status) {
    case "pending": return null;
    case "approved": return "Approved: the terminal receives its key now.";
    case "consumed": return "Approved: the terminal is signed in.";
    case "expired":
      return reason === "denied" ? "Denied: the terminal was told so and gets no key."
        : "This login expired: run the login command again for a new code.";
    default: return `This login is ${status}.`;
  }
}
