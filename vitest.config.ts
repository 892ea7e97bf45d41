import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration files share one PostgreSQL and one Redis; each file owns its data by prefix,
    // and two files at a time keep a 2-core machine responsive.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
