/**
 * A person's own account, as pure functions: what a password reset link's refusal means (dead, used,
 * expired, a disabled account), a password change's refusal in words, the new password typed twice,
 * and the sessions list in the order the page shows it.
 */
import { ApiError } from "@svc/client";

import { passwordProgress } from "./sign-up";

/** Why a reset link did not set the password (the API: 404 a dead link, 409 used or expired, 403 a
 * disabled account), or null for another refusal (shown with its request id). */
export type ResetProblem = "dead" | "used" | "expired" | "disabled";

export function resetProblem(error: unknown): ResetProblem | null {
  if (!(error instanceof ApiError)) return null;
  if (error.status === 404) return "dead";
  if (error.status === 409) return error.details["reason"] === "expired" ? "expired" : "used";
  if (error.status === 403) return "disabled";
  return null;
}

export const RESET_PROBLEMS: Record<ResetProblem, string> = {
  dead: "This link no longer works: a newer one was sent, or the password was changed since.",
  used: "This link was already used: it sets a password once.",
  expired: "This link has expired: it works for 30 minutes.",
  disabled: "The account of this link is disabled: its password cannot be reset.",
};

/** A password change's refusal in words, or null for another (shown with its request id). */
export function passwordChangeProblem(error: unknown): string | null {
  if (!(error instanceof ApiError)) return null;
  const reason = error.details["reason"];
  if (error.status === 403 && reason === "current_password_wrong") {
    return "The current password is not right. After five wrong ones, changing the password and signing in wait a while.";
  }
  if (error.status === 429) {
    const minutes = error.retryAfterSeconds ? Math.ceil(error.retryAfterSeconds / 60) : null;
    return `Too many wrong passwords: try again ${minutes ? `in ${minutes} ${minutes === 1 ? "minute" : "minutes"}` : "later"}.`;
  }
  if (error.status === 409 && reason === "account_in_another_region") {
    const region = typeof error.details["region"] === "string" ? ` (${error.details["region"]})` : "";
    return `Your account lives in another region${region}: sign in to a workspace there to change its password, ` +
      "or reset it by e-mail.";
  }
  return null;
}

/** A new password typed twice: whether it can be sent, and what to say under the second field. */
export function newPasswordState(password: string, again: string): { ready: boolean; mismatch: string } {
  const mismatch = again !== "" && again !== password ? "The two passwords are not the same." : "";
  return { ready: passwordProgress(password).met && again === password, mismatch };
}

/** The reset link's token from the page's address (#/reset-password?token=…), or null. */
export function resetToken(query: URLSearchParams): string | null {
  const token = query.get("token")?.trim();
  return token ? token : null;
}

export interface SessionRow {
  id: string;
  current: boolean;
  created_at: string;
  last_refreshed_at: string;
}

/** This session first, then the others newest first (as the API lists them). */
export function sessionsInOrder<T extends SessionRow>(sessions: T[]): T[] {
  return [...sessions.filter((s) => s.current), ...sessions.filter((s) => !s.current)];
}

/** How many other sessions a password change or "Sign out everywhere else" ended, as a sentence. */
export function sessionsEnded(count: number): string {
  return count === 0 ? "No other session was open." : count === 1 ? "One other session was signed out."
    : `${count} other sessions were signed out.`;
}
