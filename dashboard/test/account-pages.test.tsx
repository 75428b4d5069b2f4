import { Conflict, NotFound, ValidationError } from "@svc/client";
import { cleanup, fireEvent, render, waitFor } from "@testing-library/preact";
import { useState } from "preact/hooks";
import { afterEach, describe, expect, it } from "vitest";

import { DEFAULT_BRAND } from "../src/brand";
import { ForgotPassword } from "../src/pages/forgot-password";
import { ResetPassword } from "../src/pages/reset-password";

afterEach(() => cleanup());

function Forgot({ forgot }: { forgot: (email: string) => Promise<unknown> }) {
  const [email, setEmail] = useState("");
  return <ForgotPassword brand={DEFAULT_BRAND} email={email} setEmail={setEmail} forgot={forgot} />;
}

const type = (field: Element, value: string) => fireEvent.input(field, { target: { value } });

describe("the forgotten password page", () => {
  it("sends the address and says the same thing whatever the answer, with the way back to sign in", async () => {
    const asked: string[] = [];
    const { container, getByLabelText, findByTestId, getByRole } = render(
      <Forgot forgot={async (email) => { asked.push(email); }} />);
    type(getByLabelText("E-mail"), "ada@example.com");
    fireEvent.submit(container.querySelector("form")!);
    const said = await findByTestId("reset-link-sent");
    expect(asked).toEqual(["ada@example.com"]);
    expect(said.textContent).toContain("If an account has the address ada@example.com, we sent it a link");
    expect(said.textContent).toContain("it works for 30 minutes");
    expect(getByRole("link", { name: "Back to sign in" }).getAttribute("href")).toBe("#/");
  });

  it("puts a refused address by its field", async () => {
    const refused = new ValidationError(400, { code: "VALIDATION_ERROR", message: "Not valid.",
      details: { fields: [{ field: "email", reason: "String should have at most 254 characters" }] } }, "req-3");
    const { container, getByLabelText } = render(<Forgot forgot={() => Promise.reject(refused)} />);
    type(getByLabelText("E-mail"), "ada@example.com");
    fireEvent.submit(container.querySelector("form")!);
    const email = getByLabelText("E-mail");
    await waitFor(() => expect(email.getAttribute("aria-invalid")).toBe("true"));
    expect(container.querySelector("#forgot-email-error")!.textContent).toBe("Should have at most 254 characters");
  });
});

function reset(token: string | null, answer: () => Promise<{ email: string }>, signedIn: string[][] = []) {
  const sent: string[][] = [];
  const view = render(<ResetPassword brand={DEFAULT_BRAND} token={token}
                                     reset={(t, p) => { sent.push([t, p]); return answer(); }}
                                     signIn={async (e, p) => { signedIn.push([e, p]); }} />);
  const fill = (password: string, again = password) => {
    type(view.getByLabelText("New password"), password);
    type(view.getByLabelText("New password again"), again);
  };
  return { ...view, sent, fill };
}

describe("the reset page", () => {
  it("asks the new password twice under the rule, resets, then signs in with the address answered", async () => {
    const signedIn: string[][] = [];
    const page = reset("prt_1.x", async () => ({ email: "ada@example.com" }), signedIn);
    const field = page.getByLabelText("New password");
    const described = (field.getAttribute("aria-describedby") ?? "").split(" ")
      .map((id) => page.container.querySelector(`#${id}`)!.textContent).join(" ");
    expect(described).toContain("At least 12 characters (at most 256)");
    page.fill("correct horse battery", "correct horse");
    expect(page.container.querySelector("#reset-password-again-error")!.textContent).toBe("The two passwords are not the same.");
    expect(page.getByRole("button", { name: "Set the password" }).hasAttribute("disabled")).toBe(true);
    page.fill("correct horse battery");
    fireEvent.submit(page.container.querySelector("form")!);
    await waitFor(() => expect(signedIn).toEqual([["ada@example.com", "correct horse battery"]]));
    expect(page.sent).toEqual([["prt_1.x", "correct horse battery"]]);
  });

  it("explains a used, an expired and a dead link, offering a new one", async () => {
    for (const [error, words] of [
      [new Conflict(409, { code: "CONFLICT", message: "Used.", details: { reason: "used" } }), "already used"],
      [new Conflict(409, { code: "CONFLICT", message: "Expired.", details: { reason: "expired" } }), "has expired"],
      [new NotFound(404, { code: "RESOURCE_NOT_FOUND", message: "No." }), "no longer works"],
    ] as const) {
      const signedIn: string[][] = [];
      const page = reset("prt_1.x", () => Promise.reject(error), signedIn);
      page.fill("correct horse battery");
      fireEvent.submit(page.container.querySelector("form")!);
      const told = await page.findByTestId("reset-link-problem");
      expect(told.textContent).toContain(words);
      expect(page.getByRole("link", { name: "Ask for a new link" }).getAttribute("href")).toBe("#/forgot-password");
      expect(signedIn).toEqual([]);
      cleanup();
    }
  });

  it("says an address without a token is no link, offering one", () => {
    const page = reset(null, async () => ({ email: "" }));
    expect(page.getByTestId("reset-link-problem").textContent).toContain("carries no reset link");
    expect(page.queryByLabelText("New password")).toBeNull();
  });
});
