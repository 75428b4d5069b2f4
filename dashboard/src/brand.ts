/**
 * The operator's brand (config.json's `brand`: template.yaml's Brand* parameters): product name, logo,
 * favicon and accent. Every value is checked before use (a value that fails falls back to the default,
 * so config.json cannot carry CSS or HTML into the page), and the accent is made readable: 4.5:1
 * against the page, with black or white text on it. The same rule as the API's pages
 * (svc_core/contracts/brand.py); test/brand-cases.json holds both to the same answers.
 */

export interface Brand {
  name: string;
  /** An https URL or the path of a file shipped with the dashboard (public/). */
  logo: string;
  favicon: string;
  /** #rrggbb, as configured. */
  color: string;
}

export const DEFAULT_BRAND: Brand = { name: "svc", logo: "brand/logo.svg", favicon: "brand/favicon.svg", color: "#0b5cad" };
export const BACKGROUND = "#ffffff";
export const AA = 4.5;
const NAME_MAX = 60;

const COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const FILE = /^(?:[A-Za-z0-9_-][A-Za-z0-9._-]*\/)*[A-Za-z0-9_-][A-Za-z0-9._-]*\.(?:svg|png|webp|jpe?g|gif|ico)$/;
const URL_PATTERN = /^https:\/\/[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:\/[A-Za-z0-9._~%+-]+)+(?:\?[A-Za-z0-9._~%+=&-]*)?$/;
// Control characters (Unicode's C categories) and angle brackets.
const NOT_IN_A_NAME = /[\p{C}<>]/u;

/** #rgb or #rrggbb as #rrggbb in lower case; null for anything else. */
export function hexColor(value: unknown): string | null {
  if (typeof value !== "string" || !COLOR.test(value)) return null;
  const digits = value.slice(1).toLowerCase();
  return "#" + (digits.length === 3 ? [...digits].map((c) => c + c).join("") : digits);
}

/** An https URL (when urls) or a shipped file's path, as given; null for anything else. */
export function imageRef(value: unknown, urls = true): string | null {
  if (typeof value !== "string") return null;
  return (urls && URL_PATTERN.test(value)) || FILE.test(value) ? value : null;
}

export function productName(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const text = value.trim();
  return text.length > 0 && [...text].length <= NAME_MAX && !NOT_IN_A_NAME.test(text) ? text : null;
}

/** config.json's brand, each value checked; the default for a missing or refused one. */
export function brandOf(config: unknown): Brand {
  const given = (typeof config === "object" && config !== null ? config : {}) as Record<string, unknown>;
  return {
    name: productName(given["name"]) ?? DEFAULT_BRAND.name,
    logo: imageRef(given["logo"]) ?? DEFAULT_BRAND.logo,
    favicon: imageRef(given["favicon"], false) ?? DEFAULT_BRAND.favicon,
    color: hexColor(given["color"]) ?? DEFAULT_BRAND.color,
  };
}

// ---- contrast (WCAG 2) ------------------------------------------------------------------------

type Rgb = [number, number, number];

function channels(hex: string): Rgb {
  return [parseInt(hex.slice(1, 3), 16), parseInt(hex.slice(3, 5), 16), parseInt(hex.slice(5, 7), 16)];
}

function toHex(rgb: Rgb): string {
  return "#" + rgb.map((c) => c.toString(16).padStart(2, "0")).join("");
}

export function luminance(hex: string): number {
  const linear = (c: number) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  const [r, g, b] = channels(hex);
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}

export function contrast(a: string, b: string): number {
  const [high, low] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (high + 0.05) / (low + 0.05);
}

/** Black or white, whichever reads better on the accent. */
export function onAccent(accent: string): "#000000" | "#ffffff" {
  return contrast(accent, "#000000") > contrast(accent, "#ffffff") ? "#000000" : "#ffffff";
}

/** The accent, darkened (on a light background) or lightened (on a dark one) a twentieth of the way
 * at a time until it stands 4.5:1 against the background; integer steps, as brand.py takes them. */
export function readableAccent(accent: string, background: string = BACKGROUND): string {
  const towardBlack = contrast(background, "#000000") >= contrast(background, "#ffffff");
  let rgb = channels(accent);
  while (contrast(toHex(rgb), background) < AA) {
    rgb = rgb.map((c) => towardBlack ? Math.floor(c * 19 / 20) : 255 - Math.floor((255 - c) * 19 / 20)) as Rgb;
  }
  return toHex(rgb);
}

/** The brand on the document: the accent's custom properties (set through the CSSOM, which the
 * style-src policy allows), the favicon, and the title's suffix. */
export function applyBrand(brand: Brand, doc: Document = document): void {
  const accent = readableAccent(brand.color);
  doc.documentElement.style.setProperty("--accent", accent);
  doc.documentElement.style.setProperty("--accent-ink", onAccent(accent));
  let icon = doc.querySelector<HTMLLinkElement>('link[rel="icon"]');
  if (!icon) {
    icon = doc.createElement("link");
    icon.rel = "icon";
    doc.head.appendChild(icon);
  }
  if (icon.href !== new URL(brand.favicon, doc.baseURI).href) {   // index.html names the default already
    icon.removeAttribute("type");   // the configured file may be a PNG or an ICO
    icon.setAttribute("href", brand.favicon);
  }
}

/** The document's title: the page's, the tenant's, the product's. */
export function titleOf(brand: Brand, ...parts: string[]): string {
  return [...parts, brand.name].join(" · ");
}
