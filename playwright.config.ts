import { defineConfig } from "@playwright/test";

/**
 * Browser tests of the dashboard, in Debian's Chromium, against the whole stack in the sandbox:
 * e2e/global-setup.ts starts the GitHub simulator, a fresh database, `next start` on a free
 * port and the worker (when it exists), and gives the specs their addresses in E2E_* variables.
 * The flows share that stack (demo-org's repositories), so they run one at a time; the
 * newcomer's walkthrough starts a stack of its own from a fresh clone, beside them.
 */
export default defineConfig({
  testDir: "e2e",
  globalSetup: "./e2e/global-setup.ts",
  outputDir: "test-results",
  timeout: 90_000,
  expect: { timeout: 15_000 },
  fullyParallel: false,
  workers: 2,
  projects: [
    { name: "flows", testIgnore: /newcomer\.spec\.ts$/, workers: 1 },
    { name: "newcomer", testMatch: /newcomer\.spec\.ts$/, workers: 1 },
  ],
  retries: 0,
  reporter: [["list"]],
  use: {
    browserName: "chromium",
    headless: true,
    launchOptions: {
      // Debian's headless shell (scripts/ensure-chromium.sh): no window system, no GPU process
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/lib/chromium/chromium-headless-shell",
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    },
    viewport: { width: 1366, height: 860 },
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
  },
});
