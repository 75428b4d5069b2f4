import { Conflict, ValidationError } from "@svc/client";
import { cleanup, render } from "@testing-library/preact";
import { afterEach, describe, expect, it } from "vitest";

import { describeError, Loading, Skeleton } from "../src/components/status";

describe("how an error reads", () => {
  it("says the service's code, message, each field's message or reason, and the request id", () => {
    const invalid = new ValidationError(400, { code: "VALIDATION_ERROR", message: "The request is not valid.",
      details: { fields: [{ field: "name", message: "must not be blank" }] } }, "req-1");
    expect(describeError(invalid)).toEqual({ message: "The request is not valid. (name: must not be blank)",
                                             code: "VALIDATION_ERROR", requestId: "req-1" });
    const conflict = new Conflict(409, { code: "CONFLICT", message: "The preferences conflict.",
      details: { fields: [{ field: "primaryRegion", reason: "outside the residency region" }] } }, "req-2");
    expect(describeError(conflict).message).toBe("The preferences conflict. (primaryRegion: outside the residency region)");
  });

  it("reads a network failure or anything else without a request id", () => {
    expect(describeError(new TypeError("Failed to fetch"))).toEqual({ message: "Failed to fetch" });
    expect(describeError("odd")).toEqual({ message: "odd" });
  });
});

describe("a part still loading", () => {
  afterEach(() => cleanup());

  it("is busy with grey lines hidden from assistive technology, and says what loads to a screen reader only", () => {
    const { container } = render(<Loading what="the keys" />);
    const busy = container.querySelector("[aria-busy=true]")!;
    expect(busy).not.toBeNull();
    const lines = busy.querySelector(".skeleton")!;
    expect(lines.getAttribute("aria-hidden")).toBe("true");
    expect(lines.children).toHaveLength(3);
    const said = busy.querySelector("[role=status]")!;
    expect(said.textContent).toBe("Loading the keys…");
    expect(said.classList.contains("visually-hidden")).toBe(true);
  });

  it("draws as many lines as asked", () => {
    const { container } = render(<Skeleton what="the usage" lines={2} />);
    expect(container.querySelector(".skeleton")!.children).toHaveLength(2);
  });
});
