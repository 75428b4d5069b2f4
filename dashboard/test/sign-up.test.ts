import { ApiError, InvalidCredentials, RateLimited, ValidationError } from "@svc/client";
import { describe, expect, it } from "vitest";

import { fieldMessage, passwordProgress, signUp, splitFieldErrors } from "../src/sign-up";

describe("the password rule, said before it is broken", () => {
  it("counts what is left to 12 characters, then says it is long enough", () => {
    expect(passwordProgress("")).toEqual({ met: false, text: "12 more characters to go." });
    expect(passwordProgress("correct hors")).toEqual({ met: true, text: "12 characters: long enough." });
    expect(passwordProgress("correct ho")).toEqual({ met: false, text: "2 more characters to go." });
    expect(passwordProgress("correct hor").text).toBe("1 more character to go.");
  });

  it("counts characters, not UTF-16 units (as the API does), and says when it is over 256", () => {
    expect(passwordProgress("🔑".repeat(11)).met).toBe(false);
    expect(passwordProgress("🔑".repeat(12)).met).toBe(true);
    expect(passwordProgress("x".repeat(258))).toEqual({ met: false, text: "At most 256 characters: 2 too many." });
  });
});

describe("the API's field errors, next to their fields", () => {
  const invalid = (fields: object[]) => new ValidationError(400, { code: "VALIDATION_ERROR", message: "The request is not valid.",
                                                                  details: { fields } }, "req-1");

  it("puts each field's reason by its field, and nothing else to show when every problem has a field", () => {
    const split = splitFieldErrors(invalid([
      { field: "password", in: "body", reason: "String should have at least 12 characters" },
      { field: "name", in: "body", reason: "String should match pattern '^[\\t-\\r ]*...$'" },
    ]));
    expect(split.fields).toEqual({ password: "Should have at least 12 characters",
                                   name: "Needs a visible character, and no control characters." });
    expect(split.rest).toBeNull();
  });

  it("keeps a problem of another field (and its request id) to show as an error", () => {
    const split = splitFieldErrors(invalid([{ field: "email", reason: "String should match pattern 'x'" },
                                            { field: "region", reason: "The region is not available." }]));
    expect(split.fields).toEqual({ email: "Is not a valid e-mail address." });
    expect(split.rest).toBeInstanceOf(ApiError);
    expect((split.rest as ApiError).details["fields"]).toEqual([{ field: "region", reason: "The region is not available." }]);
    expect((split.rest as ApiError).requestId).toBe("req-1");
  });

  it("shows any other error whole (a 429, a network failure)", () => {
    const limited = new RateLimited(429, { code: "RATE_LIMIT_EXCEEDED", message: "Too many requests." }, "req-2");
    expect(splitFieldErrors(limited)).toEqual({ fields: {}, rest: limited });
    const offline = new TypeError("Failed to fetch");
    expect(splitFieldErrors(offline)).toEqual({ fields: {}, rest: offline });
  });

  it("says a pattern's failure in words, and any other reason as the API wrote it, without the validator's word", () => {
    expect(fieldMessage("email", "String should match pattern '^[a-z]+$'")).toBe("Is not a valid e-mail address.");
    expect(fieldMessage("name", "String should have at most 200 characters")).toBe("Should have at most 200 characters");
    expect(fieldMessage("name", "The name is taken by a rule.")).toBe("The name is taken by a rule.");
  });
});

describe("a registration and the sign-in after it", () => {
  const wrong = new InvalidCredentials(401, { code: "UNAUTHORIZED", message: "Invalid e-mail or password." }, "req-3");

  it("signs in after the registration", async () => {
    const order: string[] = [];
    const outcome = await signUp(async () => { order.push("register"); }, async () => { order.push("sign in"); });
    expect(outcome).toEqual({ kind: "signed-in" });
    expect(order).toEqual(["register", "sign in"]);
  });

  it("comes to 'may have an account' when the registration's 201 is followed by a wrong password", async () => {
    expect(await signUp(async () => ({}), async () => { throw wrong; })).toEqual({ kind: "may-have-account" });
  });

  it("fails with the registration's error, and signs in only after a registration that worked", async () => {
    const refused = new ValidationError(400, { code: "VALIDATION_ERROR", message: "The request is not valid." }, "req-4");
    let signedIn = false;
    expect(await signUp(async () => { throw refused; }, async () => { signedIn = true; }))
      .toEqual({ kind: "failed", error: refused });
    expect(signedIn).toBe(false);
  });

  it("fails with a sign-in error that is not a wrong password (a disabled account, a 429)", async () => {
    const limited = new RateLimited(429, { code: "RATE_LIMIT_EXCEEDED", message: "Too many." }, "req-5");
    expect(await signUp(async () => ({}), async () => { throw limited; })).toEqual({ kind: "failed", error: limited });
  });
});
