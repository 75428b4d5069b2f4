import { InvalidCredentials, RateLimited, ValidationError } from "@svc/client";
import { cleanup, fireEvent, render, waitFor } from "@testing-library/preact";
import { useState } from "preact/hooks";
import { afterEach, describe, expect, it } from "vitest";

import { DEFAULT_BRAND } from "../src/brand";
import { type Registration, SignUp } from "../src/pages/sign-up";

afterEach(() => cleanup());

function Page({ register, signIn, forgotPasswordPath }: {
  register: (body: Registration) => Promise<unknown>; signIn: () => Promise<void>; forgotPasswordPath?: string | null }) {
  const [email, setEmail] = useState("");
  return <SignUp brand={DEFAULT_BRAND} email={email} setEmail={setEmail} register={register} signIn={signIn}
                 forgotPasswordPath={forgotPasswordPath} />;
}

function submit(container: Element, name = "Ada", email = "ada@example.com", password = "correct horse battery") {
  const field = (id: string) => container.querySelector<HTMLInputElement>(`#sign-up-${id}`)!;
  fireEvent.input(field("name"), { target: { value: name } });
  fireEvent.input(field("email"), { target: { value: email } });
  fireEvent.input(field("password"), { target: { value: password } });
  fireEvent.submit(container.querySelector("form")!);
}

const wrongPassword = () => Promise.reject(new InvalidCredentials(401, { code: "UNAUTHORIZED", message: "Invalid." }, "req-1"));

describe("the sign-up page", () => {
  it("labels every field and describes the password by the rule and by how far it is from it", () => {
    const { container, getByLabelText } = render(<Page register={async () => ({})} signIn={async () => {}} />);
    for (const label of ["Name", "E-mail", "Password"]) expect(getByLabelText(label)).toBeTruthy();
    const password = getByLabelText("Password");
    const described = (password.getAttribute("aria-describedby") ?? "").split(" ")
      .map((id) => container.querySelector(`#${id}`)!.textContent).join(" ");
    expect(described).toContain("At least 12 characters (at most 256)");
    expect(described).toContain("12 more characters to go.");
  });

  it("sends the registration with what was typed, then signs in", async () => {
    const sent: Registration[] = [];
    let signedIn = 0;
    const { container } = render(<Page register={async (body) => { sent.push(body); }} signIn={async () => { signedIn++; }} />);
    submit(container);
    await waitFor(() => expect(signedIn).toBe(1));
    expect(sent).toEqual([{ name: "Ada", email: "ada@example.com", password: "correct horse battery" }]);
  });

  it("tells an address whose password does not sign in what to do, naming no reason", async () => {
    const { container, findByTestId } = render(<Page register={async () => ({})} signIn={wrongPassword}
                                                     forgotPasswordPath={null} />);
    submit(container);
    const told = await findByTestId("may-have-account");
    expect(told.getAttribute("role")).toBe("alert");
    expect(told.textContent).toContain("If you already have an account with ada@example.com, sign in with its password.");
    expect(told.querySelector("a")!.getAttribute("href")).toBe("#/");
    expect(told.textContent).not.toContain("reset");   // no reset page: nothing offered
  });

  it("offers the password reset there, at places.ts's page by default", async () => {
    const { container, findByTestId } = render(<Page register={async () => ({})} signIn={wrongPassword} />);
    submit(container);
    const told = await findByTestId("may-have-account");
    const reset = [...told.querySelectorAll("a")].find((a) => a.textContent === "reset the password")!;
    expect(reset.getAttribute("href")).toBe("#/forgot-password");
  });

  it("puts the API's field errors by their fields, and nothing in an alert", async () => {
    const refused = new ValidationError(400, { code: "VALIDATION_ERROR", message: "The request is not valid.",
      details: { fields: [{ field: "name", in: "body", reason: "String should have at least 1 character" }] } }, "req-2");
    const { container, getByLabelText } = render(<Page register={() => Promise.reject(refused)} signIn={async () => {}} />);
    submit(container);
    const name = getByLabelText("Name");
    await waitFor(() => expect(name.getAttribute("aria-invalid")).toBe("true"));
    expect(container.querySelector(`#${name.getAttribute("aria-describedby")}`)!.textContent)
      .toBe("Should have at least 1 character");
    expect(getByLabelText("E-mail").getAttribute("aria-invalid")).toBeNull();
    expect(container.querySelector("[role=alert]")).toBeNull();
  });

  it("shows another refusal with its request id", async () => {
    const limited = new RateLimited(429, { code: "RATE_LIMIT_EXCEEDED", message: "Too many requests." }, "req-3");
    const { container, findByRole } = render(<Page register={() => Promise.reject(limited)} signIn={async () => {}} />);
    submit(container);
    const alert = await findByRole("alert");
    expect(alert.textContent).toContain("RATE_LIMIT_EXCEEDED");
    expect(alert.textContent).toContain("Request id: req-3");
  });
});
