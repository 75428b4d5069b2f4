import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// The TypeScript client is used from its sources (one build, one type check), with its own
// node_modules for its two dependencies.
const client = fileURLToPath(new URL("../clients/typescript/src/index.ts", import.meta.url));

export default defineConfig({
  resolve: { alias: { "@svc/client": client } },
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: { target: "es2022", outDir: "dist", emptyOutDir: true, sourcemap: false, modulePreload: { polyfill: false } },
  server: { host: "localhost", port: 5173, strictPort: true },  // an origin the local stack allows
  test: { environment: "happy-dom", include: ["test/**/*.test.ts", "test/**/*.test.tsx"], setupFiles: ["test/setup.ts"],
          testTimeout: 20_000 },   // above test/setup.ts's 10 s waits
});
