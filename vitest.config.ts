import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration files share one PostgreSQL and one Redis; each file owns its data by prefix.
    // Most of a file's time is waiting on the processes it started (a worker, the dashboard, an
    // agent CLI, git): four files at a time use a 2-core machine's time without crowding it.
    maxWorkers: 4,
    fileParallelism: true,
    // expect.poll waits for what another process or connection does: on a busy machine that can
    // take seconds, not vitest's default one
    expect: { poll: { timeout: 15_000 } },
  },
});
