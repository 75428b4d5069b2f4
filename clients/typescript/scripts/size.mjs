// The browser bundle's size: src/index.ts bundled for browsers by esbuild (minified, its dependencies
// in), then gzipped. Prints the figure and exits 1 when it is over the budget.
import { gzipSync } from "node:zlib";

import { build } from "esbuild";

export const BUDGET_BYTES = 20 * 1024;

const result = await build({
  entryPoints: [new URL("../src/index.ts", import.meta.url).pathname], bundle: true, minify: true, write: false,
  format: "esm", platform: "browser", target: "es2022", metafile: true,
});
const code = result.outputFiles[0].contents;
const gzipped = gzipSync(code, { level: 9 }).length;
const line = { minifiedBytes: code.length, gzippedBytes: gzipped, budgetBytes: BUDGET_BYTES,
               within: gzipped <= BUDGET_BYTES };
console.log(JSON.stringify(line));
if (!line.within) process.exit(1);
