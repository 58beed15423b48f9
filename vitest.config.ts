import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Worker pools and child processes make some suites slow on a 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
