// The first load's JavaScript: every script and module preload dist/index.html names (the build's
// output: run `npm run build` first), gzipped. Prints the figures and exits 1 over the budget.
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";

export const BUDGET_BYTES = 200 * 1024;

const dist = new URL("../dist/", import.meta.url);
const html = readFileSync(new URL("index.html", dist), "utf8");
const named = [...html.matchAll(/<(?:script[^>]*\ssrc|link[^>]*rel="modulepreload"[^>]*\shref)="\/?([^"]+\.js)"/g)]
  .map((m) => m[1]);
const files = [...new Set(named)].map((path) => {
  const code = readFileSync(new URL(path, dist));
  return { path, bytes: code.length, gzippedBytes: gzipSync(code, { level: 9 }).length };
});
const gzipped = files.reduce((sum, f) => sum + f.gzippedBytes, 0);
const line = { files, gzippedBytes: gzipped, budgetBytes: BUDGET_BYTES, within: files.length > 0 && gzipped <= BUDGET_BYTES };
console.log(JSON.stringify(line));
if (!line.within) process.exit(1);
