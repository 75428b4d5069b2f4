import { describe, expect, it } from "vitest";

import {
  AA, applyBrand, brandOf, contrast, DEFAULT_BRAND, hexColor, imageRef, onAccent, productName, readableAccent,
} from "../src/brand";

import cases from "./brand-cases.json";

// The answers svc_core/contracts/brand.py gives (tests/unit/test_brand_rules.py checks them there too).
const shared = cases as unknown as {
  hostile: { colors: string[]; logos: string[]; names: string[] };
  accepted: { colors: [string, string][]; logos: string[]; names: [string, string][] };
  onDark: { color: string; background: string; accent: string }[];
  cases: { color: string; accent: string; onAccent: string }[];
};

describe("the accent stays readable", () => {
  it("gives the same accent and text colour as the server's rule, for every shared case", () => {
    expect(shared.cases.length).toBeGreaterThan(200);
    for (const c of shared.cases) {
      const accent = readableAccent(c.color);
      expect({ color: c.color, accent, onAccent: onAccent(accent) }).toEqual(c);
    }
    for (const c of shared.onDark) expect(readableAccent(c.color, c.background)).toBe(c.accent);
  });

  it("keeps 4.5:1 for the accent on white and for the text on the accent, over every colour of a grid", () => {
    for (let r = 0; r < 256; r += 17) for (let g = 0; g < 256; g += 17) for (let b = 0; b < 256; b += 17) {
      const color = "#" + [r, g, b].map((c) => c.toString(16).padStart(2, "0")).join("");
      const accent = readableAccent(color);
      expect(contrast(accent, "#ffffff"), color).toBeGreaterThanOrEqual(AA);
      expect(contrast(accent, onAccent(accent)), color).toBeGreaterThanOrEqual(AA);
    }
  });

  it("darkens the pathological ones just enough, and leaves a readable one as it is", () => {
    for (const color of ["#ffffff", "#ffff00", "#777777", "#fafafa"]) {
      const accent = readableAccent(color);
      expect(accent).not.toBe(color);
      expect(contrast(accent, "#ffffff")).toBeGreaterThanOrEqual(AA);
      expect(contrast(accent, "#ffffff")).toBeLessThan(5.5);   // a step at a time: not black
    }
    expect(readableAccent("#000000")).toBe("#000000");
    expect(onAccent("#000000")).toBe("#ffffff");
    expect(readableAccent("#0b5cad")).toBe("#0b5cad");
    expect(onAccent("#ffff00")).toBe("#000000");
  });

  it("lightens an accent too dark for a dark background", () => {
    const accent = readableAccent("#000000", "#111111");
    expect(contrast(accent, "#111111")).toBeGreaterThanOrEqual(AA);
    expect(contrast(accent, "#111111")).toBeLessThan(5.5);
  });
});

describe("config.json's brand is checked", () => {
  it("refuses every hostile value, as the server does", () => {
    for (const value of shared.hostile.colors) expect(hexColor(value), value).toBeNull();
    for (const value of shared.hostile.logos) expect(imageRef(value), value).toBeNull();
    for (const value of shared.hostile.names) expect(productName(value), value).toBeNull();
  });

  it("accepts hex colours, https URLs and shipped files, and plain names", () => {
    for (const [value, normal] of shared.accepted.colors) expect(hexColor(value)).toBe(normal);
    for (const value of shared.accepted.logos) expect(imageRef(value)).toBe(value);
    for (const [value, normal] of shared.accepted.names) expect(productName(value)).toBe(normal);
    expect(imageRef("https://cdn.example.com/icon.png", false)).toBeNull();   // the favicon is shipped
  });

  it("falls back to the default for each missing or refused value, keeping the others", () => {
    expect(brandOf(undefined)).toEqual(DEFAULT_BRAND);
    expect(brandOf("not an object")).toEqual(DEFAULT_BRAND);
    expect(brandOf({ name: "Acme", logo: "javascript:alert(1)", favicon: 7, color: "#fff;}*{display:none" }))
      .toEqual({ ...DEFAULT_BRAND, name: "Acme" });
    expect(brandOf({ name: "Acme", logo: "https://cdn.example.com/a.svg", favicon: "brand/a.png", color: "#C0FFEE" }))
      .toEqual({ name: "Acme", logo: "https://cdn.example.com/a.svg", favicon: "brand/a.png", color: "#c0ffee" });
  });
});

describe("the brand on the document", () => {
  it("sets the readable accent, the text on it and the favicon", () => {
    document.head.innerHTML = '<link rel="icon" type="image/svg+xml" href="/brand/favicon.svg">';
    applyBrand({ ...DEFAULT_BRAND, color: "#ffff00", favicon: "brand/acme.png" });
    const root = document.documentElement.style;
    expect(root.getPropertyValue("--accent")).toBe("#777700");
    expect(root.getPropertyValue("--accent-ink")).toBe("#ffffff");
    const icons = document.querySelectorAll<HTMLLinkElement>('link[rel="icon"]');
    expect(icons).toHaveLength(1);
    expect(icons[0]?.getAttribute("href")).toBe("brand/acme.png");
    expect(icons[0]?.hasAttribute("type")).toBe(false);
  });
});
