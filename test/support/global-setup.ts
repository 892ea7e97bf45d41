import { execFileSync } from "node:child_process";
import pg from "pg";
import { buildDashboardIfNeeded } from "./web-server";

/**
 * Prepares the test database once per run: created when missing, migrated to the checked-in
 * migrations. Tests read TEST_DATABASE_URL (set here) and namespace their data by repository.
 * Builds the dashboard once when its build is stale, before the files that start it run side
 * by side (ATELIER_TEST_SKIP_BUILD=1 skips it, for a run of files that start none).
 */
export default async function setup(): Promise<void> {
  const url = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_test";
  process.env.TEST_DATABASE_URL = url;
  process.env.DATABASE_URL = url;
  const target = new URL(url);
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const name = target.pathname.slice(1);
    const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (!rowCount) await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
  if (process.env.ATELIER_TEST_SKIP_MIGRATE !== "1") {
    execFileSync("npx", ["prisma", "migrate", "deploy"], {
      stdio: "pipe",
      env: { ...process.env, DATABASE_URL: url, CHECKPOINT_DISABLE: "1" },
    });
  }
  // ATELIER_TEST_SKIP_BUILD=1 for a run of files that start no dashboard
  if (process.env.ATELIER_TEST_SKIP_BUILD !== "1") buildDashboardIfNeeded();
}
