import { describe, expect, it } from "vitest";

import { allows, parseAddress, parseCidr, parseList } from "../src/cidr";

describe("CIDRs as the service reads them", () => {
  it("matches IPv4 ranges and bare addresses", () => {
    const list = parseList("10.0.0.0/8\n198.51.100.7");
    expect(list.invalid).toEqual([]);
    expect(allows(list.cidrs, "10.200.3.4")).toBe(true);
    expect(allows(list.cidrs, "11.0.0.1")).toBe(false);
    expect(allows(list.cidrs, "198.51.100.7")).toBe(true);
    expect(allows(list.cidrs, "198.51.100.8")).toBe(false);
  });

  it("clears host bits as the server does (10.1.2.3/8 is 10.0.0.0/8)", () => {
    const cidr = parseCidr("10.1.2.3/8");
    expect(cidr?.network).toBe(parseAddress("10.0.0.0")?.value);
    expect(allows(cidr ? [cidr] : [], "10.9.9.9")).toBe(true);
  });

  it("matches IPv6, compressed or not, and reads ::ffff:a.b.c.d as IPv4", () => {
    const list = parseList("2001:db8::/32, 127.0.0.1");
    expect(allows(list.cidrs, "2001:0db8:0000:0000:0000:0000:0000:0001")).toBe(true);
    expect(allows(list.cidrs, "2001:db9::1")).toBe(false);
    expect(allows(list.cidrs, "::ffff:127.0.0.1")).toBe(true);
    expect(allows(list.cidrs, "::1")).toBe(false);
  });

  it("an empty list lets every address in; an unreadable address is let in by no list", () => {
    expect(allows([], "203.0.113.9")).toBe(true);
    expect(allows(parseList("0.0.0.0/0").cidrs, "not an address")).toBe(false);
    expect(allows(parseList("0.0.0.0/0").cidrs, "203.0.113.9")).toBe(true);
  });

  it("names the lines that are not CIDRs", () => {
    expect(parseList("10.0.0.0/33\n010.0.0.1\n1.2.3\n::1/129\n::1/64\nfe80::1/10/2").invalid)
      .toEqual(["10.0.0.0/33", "010.0.0.1", "1.2.3", "::1/129", "fe80::1/10/2"]);
  });
});
