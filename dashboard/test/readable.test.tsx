import type { Client, Me } from "@svc/client";
import { cleanup, fireEvent, render, waitFor } from "@testing-library/preact";
import { act } from "preact/test-utils";
import { afterEach, describe, expect, it, vi } from "vitest";

import { type Signed, SignedContext } from "../src/api";
import { Credits, Money, Person, ShortId, TICK_MS, Time } from "../src/components/readable";
import { forgetNames, namesOf } from "../src/people";

afterEach(() => { cleanup(); forgetNames(); });

/** A client whose members list is the one given (counting its reads), or fails. */
function clientWith(members: { userId: string; name: string | null; email: string | null }[] | Error) {
  const reads = { count: 0 };
  const client = { members: { iterate: async function* () {
    reads.count += 1;
    if (members instanceof Error) throw members;
    yield* members.map((m) => ({ ...m, role: "member", joined_at: "2026-01-01T00:00:00Z" }));
  } } } as unknown as Client;
  return { client, reads };
}

function signedIn(client: Client, tenantId = "ten_1"): Signed {
  return { client, me: { tenant: { id: tenantId } } as unknown as Me,
           reload: async () => {}, switchTenant: async () => {}, signOut: async () => {} };
}

describe("readable values", () => {
  it("shows credits rounded, with the exact amount on hover", () => {
    const { getByTestId, container } = render(<>
      <Credits micro={3_575_999_972} testId="balance" />
      <Credits micro={1_000_000_000} bare signed />
    </>);
    expect(getByTestId("balance").textContent).toBe("3,576 credits");
    expect(getByTestId("balance").title).toBe("3,575.999972 credits");
    const signed = container.querySelectorAll(".amount")[1] as HTMLElement;
    expect([signed.textContent, signed.title]).toEqual(["+1,000", "+1,000 credits"]);
  });

  it("shows money with its currency", () => {
    const { container } = render(<Money cents={100_000} currency="usd" />);
    expect(container.textContent).toBe("$1,000.00");
  });

  it("puts a time in a <time> with its ISO value and the exact UTC time on hover", () => {
    const iso = new Date(Date.now() - 3 * 60_000).toISOString();
    const { container } = render(<Time iso={iso} />);
    const time = container.querySelector("time") as HTMLElement;
    expect(time.textContent).toBe("3 minutes ago");
    expect(time.getAttribute("datetime")).toBe(iso);
    expect(time.title).toBe(`${iso.slice(0, 19).replace("T", " ")} UTC`);
    cleanup();
    expect(render(<Time iso={null} never="not yet" />).container.textContent).toBe("not yet");
  });

  it("reads the clock again while shown", () => {
    vi.useFakeTimers({ now: Date.parse("2026-11-29T12:00:00Z") });
    try {
      const { container } = render(<Time iso="2026-11-29T11:59:30Z" />);
      expect(container.textContent).toBe("30 seconds ago");
      act(() => { vi.advanceTimersByTime(TICK_MS); });
      expect(container.textContent).toBe("1 minute ago");
      act(() => { vi.advanceTimersByTime(4 * TICK_MS); });
      expect(container.textContent).toBe("3 minutes ago");
    } finally {
      cleanup();
      vi.useRealTimers();
    }
  });

  it("shortens an id, keeps it whole on hover, and copies all of it", async () => {
    const copied: string[] = [];
    Object.defineProperty(navigator, "clipboard", { configurable: true,
      value: { writeText: async (text: string) => { copied.push(text); } } });
    const id = "key_01HXABCDEFGHJKMNPQRSTV9Z2";
    const { container, getByRole } = render(<ShortId id={id} label="the key id" />);
    const code = container.querySelector("code") as HTMLElement;
    expect([code.textContent, code.title]).toEqual(["key_01HX…9Z2", id]);
    fireEvent.click(getByRole("button", { name: "Copy the key id" }));
    await waitFor(() => expect(getByRole("button", { name: "Copied the key id" }).textContent).toBe("Copied"));
    expect(copied).toEqual([id]);
  });
});

describe("people by name", () => {
  const ada = "usr_01JD2Q7ZB6V8S3K4X9W2M5N7PA";
  const grace = "usr_01JD2Q7ZB6V8S3K4X9W2M5N7PB";

  it("names a member (the name, else the e-mail) with the id on hover; anyone else by the shortened id", async () => {
    const { client } = clientWith([{ userId: ada, name: "Ada", email: "ada@example.com" },
                                   { userId: grace, name: null, email: "grace@example.com" }]);
    const { container, findByText } = render(
      <SignedContext.Provider value={signedIn(client)}>
        <Person id={ada} /> <Person id={grace} /> <Person id="usr_01JD2Q7ZB6V8S3K4X9W2M5N7PC" /> <Person id="service" />
      </SignedContext.Provider>);
    expect((await findByText("Ada")).title).toBe(ada);
    expect((await findByText("grace@example.com")).title).toBe(grace);
    expect(container.querySelector("code")?.textContent).toBe("usr_01JD…7PC");
    expect(container.textContent).toContain("service");
  });

  it("reads the members once per tenant until told they changed; a refused list names no one", async () => {
    const { client, reads } = clientWith([{ userId: ada, name: "Ada", email: null }]);
    expect((await namesOf(client, "ten_1")).get(ada)).toBe("Ada");
    await namesOf(client, "ten_1");
    expect(reads.count).toBe(1);
    await namesOf(client, "ten_2");
    expect(reads.count).toBe(2);
    forgetNames();
    await namesOf(client, "ten_1");
    expect(reads.count).toBe(3);
    expect((await namesOf(clientWith(new Error("403")).client, "ten_3")).size).toBe(0);
  });
});
