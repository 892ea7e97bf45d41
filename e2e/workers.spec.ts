import { expect, signIn, stack, test } from "./support";

/**
 * The Workers page in Chromium: the stack's own worker (started by e2e/global-setup.ts) alive
 * with its slots; a worker that stopped heartbeating long ago shown as not heard from; to a
 * writer who is no instance admin, no host, pid, version or worker id; and, with a worker alive,
 * no "no worker is running" banner on any page.
 */

const GONE = "e2e-gone-worker";

test.beforeAll(async () => {
  const pg = await import("pg");
  const pool = new pg.default.Pool({ connectionString: stack.databaseUrl, max: 1 });
  await pool.query(
    `INSERT INTO workers (id, host, pid, version, slots, running, started_at, heartbeat_at)
     VALUES ($1, 'old-host', 4242, '0.0.9', 3, 2, now() - interval '2 hours', now() - interval '1 hour')
     ON CONFLICT (id) DO UPDATE SET heartbeat_at = now() - interval '1 hour', stopped_at = NULL`,
    [GONE],
  );
  await pool.end();
});

test("lists each worker, alive or not, and no banner shows while one is alive; where they run is for admins only", async ({ page }) => {
  test.skip(!stack.worker, "the stack runs no worker");
  await signIn(page, "octo-writer");
  await expect(page.getByTestId("no-worker-banner")).toHaveCount(0);
  await page.getByRole("link", { name: "Workers" }).click();
  await page.waitForURL(/\/workers/);
  const alive = page.locator('[data-testid="worker-row"][data-alive="true"]');
  await expect(alive.first()).toBeVisible({ timeout: 30_000 });
  await expect(alive.first()).toContainText("alive");
  await expect(alive.first().getByTestId("worker-load")).toContainText("/");
  const gone = page.locator('[data-testid="worker-row"][data-alive="false"]').filter({ hasText: "not heard from" });
  await expect(gone.first()).toBeVisible();
  // a dead worker's running count is not counted as running
  await expect(gone.getByTestId("worker-load").filter({ hasText: "0 / 3" })).toHaveCount(1);
  // a writer is no admin: no host, pid, version or worker id (attack 33)
  const table = page.getByTestId("workers");
  await expect(table).toContainText("shown to admins");
  for (const detail of ["old-host", "4242", "0.0.9", GONE]) await expect(table).not.toContainText(detail);
  await expect(page.getByTestId("no-worker-banner")).toHaveCount(0);
});
