/**
 * Creating an account, as pure functions: the password rule the API holds (shown before it is
 * broken), the API's field errors placed next to their fields, and what a registration followed by
 * a sign-in comes to.
 *
 * The API answers a registration for an address that already has an account with the same 201 as a
 * new one and makes nothing. So the sign-in that follows is the first answer that can differ: it
 * works for a new account and for an existing one whose password was typed, and fails for an
 * existing one with another password. That failure is told without saying which is the case: "if
 * you already have an account, sign in, or reset the password".
 */
import { ApiError, InvalidCredentials } from "@svc/client";

/** The registration's password rule (RegisterBody.password: NIST SP 800-63B, a length, no
 * composition rules). */
export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 256;
/** The rule in words, under every new password's field (sign-up, reset, change). */
export const PASSWORD_RULE = `At least ${PASSWORD_MIN} characters (at most ${PASSWORD_MAX}), any characters, spaces too: ` +
  "a few words you will remember make a good one.";

export type SignUpField = "name" | "email" | "password";
export const SIGN_UP_FIELDS: readonly SignUpField[] = ["name", "email", "password"];

/** Where the password stands against the rule, said before the form is sent. */
export function passwordProgress(password: string): { met: boolean; text: string } {
  const length = [...password].length;
  if (length > PASSWORD_MAX) return { met: false, text: `At most ${PASSWORD_MAX} characters: ${length - PASSWORD_MAX} too many.` };
  if (length >= PASSWORD_MIN) return { met: true, text: `${length} characters: long enough.` };
  const more = PASSWORD_MIN - length;
  return { met: false, text: `${more} more ${more === 1 ? "character" : "characters"} to go.` };
}

const PATTERN_MESSAGES: Record<SignUpField, string> = {
  name: "Needs a visible character, and no control characters.",
  email: "Is not a valid e-mail address.",
  password: "Has a character a password cannot hold.",
};

/** One field's problem as the page says it, next to the field: the API's reason without the
 * validator's word for the value ("String should have at least 1 character": "Should have at least 1
 * character"), and a pattern's failure in words rather than its regular expression. */
export function fieldMessage(field: SignUpField, reason: string): string {
  if (/should match pattern/i.test(reason)) return PATTERN_MESSAGES[field];
  return reason.replace(/^(?:String|Value|Input) should\b/, "Should");
}

/** A refusal split into the problems of the form's fields (shown next to each) and what is left to
 * show as an error with its request id (another field's problem, any other error), or null. */
export function splitFieldErrors(error: unknown): { fields: Partial<Record<SignUpField, string>>; rest: unknown } {
  if (!(error instanceof ApiError) || error.code !== "VALIDATION_ERROR" || !Array.isArray(error.details["fields"])) {
    return { fields: {}, rest: error };
  }
  const fields: Partial<Record<SignUpField, string>> = {};
  const others: unknown[] = [];
  for (const problem of error.details["fields"] as { field?: string; reason?: string; message?: string }[]) {
    const field = SIGN_UP_FIELDS.find((f) => f === problem.field);
    const reason = problem.message ?? problem.reason ?? "is not valid";
    if (field) fields[field] = fields[field] ? `${fields[field]}; ${fieldMessage(field, reason)}` : fieldMessage(field, reason);
    else others.push(problem);
  }
  const rest = others.length === 0 ? null
    : new ApiError(error.status, { code: error.code, message: error.message, details: { ...error.details, fields: others } },
                   error.requestId);
  return { fields, rest };
}

/** What a registration and the sign-in after it came to. */
export type SignUpOutcome =
  | { kind: "signed-in" }
  | { kind: "may-have-account" }   // registered (201), but the password does not sign in to the address
  | { kind: "failed"; error: unknown };

/** Register, then sign in with the same address and password. */
export async function signUp(register: () => Promise<unknown>, signIn: () => Promise<void>): Promise<SignUpOutcome> {
  try {
    await register();
  } catch (error) {
    return { kind: "failed", error };
  }
  try {
    await signIn();
    return { kind: "signed-in" };
  } catch (error) {
    return error instanceof InvalidCredentials ? { kind: "may-have-account" } : { kind: "failed", error };
  }
}
