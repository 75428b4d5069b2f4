import { describe, expect, it } from "vitest";

import { credits, creditsText, exactCredits, money, personName, relative, shortId, utc } from "../src/format";

describe("credits", () => {
  it("rounds to at most two decimals, only where needed", () => {
    expect(credits(3_575_999_972)).toBe("3,576");
    expect(creditsText(3_575_999_972)).toBe("3,576 credits");
    expect(credits(12_500_000)).toBe("12.5");
    expect(credits(12_345_000)).toBe("12.35");   // half away from zero
    expect(credits(1_004_999)).toBe("1");
    expect(credits(1_005_000)).toBe("1.01");
  });

  it("reads zero as 0, and keeps an amount under 0.01 that is not zero", () => {
    expect(credits(0)).toBe("0");
    expect(creditsText(0)).toBe("0 credits");
    expect(credits(1_234)).toBe("0.0012");
    expect(credits(1)).toBe("0.000001");
    expect(credits(4_999)).toBe("0.005");
    expect(credits(5_000)).toBe("0.01");
  });

  it("signs negative amounts, and positive ones when asked", () => {
    expect(credits(-3_000_000)).toBe("-3");
    expect(credits(-1_234)).toBe("-0.0012");
    expect(credits(1_000_000_000, true)).toBe("+1,000");
    expect(credits(-2_500_000, true)).toBe("-2.5");
    expect(credits(0, true)).toBe("0");
    expect(creditsText(-1_000_000)).toBe("-1 credit");
    expect(creditsText(1_000_000, true)).toBe("+1 credit");
  });

  it("groups large amounts", () => {
    expect(credits(1e9)).toBe("1,000");
    expect(credits(1e15)).toBe("1,000,000,000");
    expect(creditsText(1e15)).toBe("1,000,000,000 credits");
  });

  it("gives the exact amount for the title", () => {
    expect(exactCredits(3_575_999_972)).toBe("3,575.999972");
    expect(exactCredits(-1_500_000)).toBe("-1.5");
    expect(exactCredits(0)).toBe("0");
    expect(exactCredits(1e15)).toBe("1,000,000,000");
  });
});

describe("money", () => {
  it("has two decimals, grouping and its currency", () => {
    expect(money(100_000)).toBe("$1,000.00");
    expect(money(100_000, "usd")).toBe("$1,000.00");
    expect(money(1_250, "EUR")).toBe("€12.50");
    expect(money(99, "gbp")).toBe("£0.99");
    expect(money(0)).toBe("$0.00");
    expect(money(1e11)).toBe("$1,000,000,000.00");
  });

  it("puts the sign first, and names a currency the browser does not know by its code", () => {
    expect(money(-500)).toBe("-$5.00");
    expect(money(1_250, "xx1")).toBe("12.50 XX1");
  });
});

describe("relative times", () => {
  const now = Date.parse("2026-11-29T12:00:00Z");
  const at = (seconds: number) => new Date(now + seconds * 1000).toISOString();

  it("counts a unit only once reached in full", () => {
    expect(relative(at(0), now)).toBe("now");
    expect(relative(at(-59), now)).toBe("59 seconds ago");
    expect(relative(at(-60), now)).toBe("1 minute ago");
    expect(relative(at(-180), now)).toBe("3 minutes ago");
    expect(relative(at(-3_599), now)).toBe("59 minutes ago");
    expect(relative(at(-3_600), now)).toBe("1 hour ago");
    expect(relative(at(-86_399), now)).toBe("23 hours ago");
    expect(relative(at(-86_400), now)).toBe("yesterday");
    expect(relative(at(-6 * 86_400), now)).toBe("6 days ago");
    expect(relative(at(-7 * 86_400), now)).toBe("last week");
    expect(relative(at(-29 * 86_400), now)).toBe("4 weeks ago");
    expect(relative(at(-30 * 86_400), now)).toBe("last month");
    expect(relative(at(-364 * 86_400), now)).toBe("12 months ago");
    expect(relative(at(-365 * 86_400), now)).toBe("last year");
    expect(relative(at(-3 * 365 * 86_400), now)).toBe("3 years ago");
  });

  it("reads the future too", () => {
    expect(relative(at(30), now)).toBe("in 30 seconds");
    expect(relative(at(60), now)).toBe("in 1 minute");
    expect(relative(at(86_400), now)).toBe("tomorrow");
    expect(relative(at(2 * 86_400), now)).toBe("in 2 days");
  });

  it("leaves an unreadable time as it is, and gives the exact UTC time", () => {
    expect(relative("not a time", now)).toBe("not a time");
    expect(utc("2026-11-29T04:16:08.123Z")).toBe("2026-11-29 04:16:08 UTC");
    expect(utc("2026-11-29T06:16:08+02:00")).toBe("2026-11-29 04:16:08 UTC");
    expect(utc("soon")).toBe("soon");
  });
});

describe("ids and people", () => {
  it("shortens an id to its prefix, the first four and the last three characters", () => {
    expect(shortId("key_01HXABCDEFGHJKMNPQRSTV9Z2")).toBe("key_01HX…9Z2");
    expect(shortId("usr_01JD2Q7ZB6V8S3K4X9W2M5N7PA")).toBe("usr_01JD…7PA");
    expect(shortId("0f8fad5b-d9cb-469f-a165-70867728950e")).toBe("0f8f…50e");
  });

  it("keeps a short id whole", () => {
    expect(shortId("rdl_9")).toBe("rdl_9");
    expect(shortId("usr_0123456789")).toBe("usr_0123456789");
    expect(shortId("usr_01234567890")).toBe("usr_0123…890");
    expect(shortId("service")).toBe("service");
  });

  it("names a member, and shortens the id of anyone else", () => {
    const names = new Map([["usr_01JD2Q7ZB6V8S3K4X9W2M5N7PA", "Ada Lovelace"]]);
    expect(personName("usr_01JD2Q7ZB6V8S3K4X9W2M5N7PA", names)).toBe("Ada Lovelace");
    expect(personName("usr_01JD2Q7ZB6V8S3K4X9W2M5N7PB", names)).toBe("usr_01JD…7PB");
  });
});
