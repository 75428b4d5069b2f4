/// <reference types="node" />
/**
 * Imports in dashboard/src point one way: no module imports itself through others (a cycle makes
 * the order modules start in matter, and a page that imports the routes imports every page).
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../src");

/** The relative specifiers a module's source imports or re-exports (types included), dynamic ones too. */
export function specifiers(source: string): string[] {
  const found: string[] = [];
  const patterns = [
    /^\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s+)?["']([^"']+)["']/gm,
    /\bimport\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const pattern of patterns) {
    for (const match of source.matchAll(pattern)) {
      const specifier = match[1];
      if (specifier?.startsWith(".")) found.push(specifier);
    }
  }
  return found;
}

/** Every .ts and .tsx file under a directory. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sources(path) : /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** The graph of the modules under `dir`: each (path relative to it) → the modules it imports. */
function graphOf(dir: string): Map<string, string[]> {
  const files = sources(dir);
  const known = new Set(files);
  const resolveSpecifier = (from: string, specifier: string): string => {
    const base = resolve(dirname(from), specifier);
    const candidates = [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts"), join(base, "index.tsx")];
    const found = candidates.find((c) => known.has(c));
    if (!found) throw new Error(`${relative(dir, from)} imports ${specifier}, which is no module of ${dir}`);
    return found;
  };
  // Assets (styles, JSON) import nothing back: only modules make cycles.
  const isAsset = (specifier: string) => /\.(?!tsx?$)[a-z]+$/i.test(specifier);
  return new Map(files.map((file) => [relative(dir, file),
    specifiers(readFileSync(file, "utf8")).filter((s) => !isAsset(s)).map((s) => relative(dir, resolveSpecifier(file, s)))]));
}

/** The cycles of a graph, each as the path that closes it ("a → b → a"); none: []. */
export function cycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const found: string[] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (node: string): void => {
    state.set(node, "open");
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === "open") found.push([...path.slice(path.indexOf(next)), next].join(" → "));
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(node, "done");
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return found;
}

describe("the module graph", () => {
  it("reads static, type-only, re-exported, side-effect and dynamic imports, and only relative ones", () => {
    expect(specifiers([
      'import { a } from "./a";',
      "import type { B } from '../b';",
      'import {\n  c,\n  d,\n} from "./cd";',
      'export { e } from "./e";',
      'export * from "./f";',
      'import "./styles.css";',
      'const g = await import("./g");',
      'import { h } from "preact/hooks";',
      'const text = "import nothing from here";',
    ].join("\n"))).toEqual(["./a", "../b", "./cd", "./e", "./f", "./styles.css", "./g"]);
  });

  it("finds a cycle of two, a longer one and a module importing itself; a tree has none", () => {
    expect(cycles(new Map([["routes.ts", ["pages/home.tsx"]], ["pages/home.tsx", ["routes.ts"]]])))
      .toEqual(["pages/home.tsx → routes.ts → pages/home.tsx"]);
    expect(cycles(new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["d"]]])))
      .toEqual(["a → b → c → a", "d → d"]);
    expect(cycles(new Map([["a", ["b", "c"]], ["b", ["c"]], ["c", []]]))).toEqual([]);
  });

  it("has no cycle in dashboard/src", () => {
    const graph = graphOf(SRC);
    expect(graph.size).toBeGreaterThan(30);
    expect(graph.get("routes.ts")).toContain(join("pages", "home.tsx"));
    expect(cycles(graph)).toEqual([]);
  });

  it("has the routes import the pages, and no page import the routes or the app", () => {
    const graph = graphOf(SRC);
    const importersOf = (module: string) => [...graph].filter(([, imports]) => imports.includes(module)).map(([file]) => file);
    expect(importersOf("routes.ts")).toEqual(["app.tsx"]);
    expect(importersOf("app.tsx")).toEqual(["main.tsx"]);
    expect(importersOf("places.ts")).toEqual(expect.arrayContaining(["routes.ts", join("pages", "home.tsx")]));
  });
});
