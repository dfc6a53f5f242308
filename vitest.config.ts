import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Integration tests start real servers and a real Redis; give them room on a shared 2-core machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
