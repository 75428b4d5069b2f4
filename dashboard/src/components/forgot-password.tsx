/** The link to the password reset (places.ts: FORGOT_PASSWORD_PATH), or nothing while there is none. */
import type { ComponentChildren } from "preact";

import { FORGOT_PASSWORD_PATH } from "../places";

export function ForgotPasswordLink({ path = FORGOT_PASSWORD_PATH, children = "Forgot password?" }: {
  path?: string | null; children?: ComponentChildren }) {
  return path ? <a href={`#${path}`}>{children}</a> : null;
}
