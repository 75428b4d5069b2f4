import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // test/stack.test.ts waits on a local stack that a loaded machine makes slow: bounded by its steps, not 5 s
    testTimeout: 60_000,
  },
});
