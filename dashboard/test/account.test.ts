import { ApiError, Conflict, Forbidden, NotFound, RateLimited } from "@svc/client";
import { describe, expect, it } from "vitest";

import {
  newPasswordState, passwordChangeProblem, resetProblem, resetToken, sessionsEnded, sessionsInOrder,
} from "../src/account";

const refusal = <T extends ApiError>(Kind: new (...a: ConstructorParameters<typeof ApiError>) => T, status: number,
                                      details: Record<string, unknown> = {}, retryAfter?: number) =>
  new Kind(status, { code: "X", message: "Refused.", details }, "req-1", retryAfter);

describe("a reset link's refusal", () => {
  it("tells a dead, a used, an expired link and a disabled account apart", () => {
    expect(resetProblem(refusal(NotFound, 404))).toBe("dead");
    expect(resetProblem(refusal(Conflict, 409, { reason: "used" }))).toBe("used");
    expect(resetProblem(refusal(Conflict, 409, { reason: "expired" }))).toBe("expired");
    expect(resetProblem(refusal(Forbidden, 403, { reason: "account_disabled" }))).toBe("disabled");
  });

  it("leaves any other refusal to be shown with its request id", () => {
    expect(resetProblem(refusal(RateLimited, 429))).toBeNull();
    expect(resetProblem(new Error("offline"))).toBeNull();
  });

  it("reads the token from the page's address", () => {
    expect(resetToken(new URLSearchParams("token=prt_a.b"))).toBe("prt_a.b");
    expect(resetToken(new URLSearchParams("token="))).toBeNull();
    expect(resetToken(new URLSearchParams(""))).toBeNull();
  });
});

describe("a password change's refusal", () => {
  it("says a wrong current password, the wait after too many and the account's other region", () => {
    expect(passwordChangeProblem(refusal(Forbidden, 403, { reason: "current_password_wrong" })))
      .toMatch(/^The current password is not right\./);
    expect(passwordChangeProblem(refusal(RateLimited, 429, { counter: "account_address" }, 600)))
      .toBe("Too many wrong passwords: try again in 10 minutes.");
    expect(passwordChangeProblem(refusal(RateLimited, 429))).toBe("Too many wrong passwords: try again later.");
    expect(passwordChangeProblem(refusal(Conflict, 409, { reason: "account_in_another_region", region: "eu-west-1" })))
      .toMatch(/^Your account lives in another region \(eu-west-1\): sign in to a workspace there/);
  });

  it("leaves another refusal (an API key's, a validation error) to be shown with its request id", () => {
    expect(passwordChangeProblem(refusal(Forbidden, 403, { reason: "user_required" }))).toBeNull();
    expect(passwordChangeProblem(refusal(Conflict, 409, { reason: "changed" }))).toBeNull();
  });
});

describe("a new password typed twice", () => {
  it("is ready only when it follows the rule and both are the same", () => {
    expect(newPasswordState("correct horse battery", "correct horse battery")).toEqual({ ready: true, mismatch: "" });
    expect(newPasswordState("correct horse battery", "")).toEqual({ ready: false, mismatch: "" });
    expect(newPasswordState("correct horse battery", "correct horse")).toEqual(
      { ready: false, mismatch: "The two passwords are not the same." });
    expect(newPasswordState("short", "short").ready).toBe(false);
  });
});

describe("the sessions", () => {
  it("put this one first, the others in the API's order", () => {
    const at = "2026-12-01T00:00:00Z";
    const s = (id: string, current = false) => ({ id, current, created_at: at, last_refreshed_at: at });
    expect(sessionsInOrder([s("a"), s("b", true), s("c")]).map((x) => x.id)).toEqual(["b", "a", "c"]);
  });

  it("say how many others were signed out", () => {
    expect(sessionsEnded(0)).toBe("No other session was open.");
    expect(sessionsEnded(1)).toBe("One other session was signed out.");
    expect(sessionsEnded(3)).toBe("3 other sessions were signed out.");
  });
});
