import { execFileSync } from "node:child_process";
import pg from "pg";

/** Drops and creates the database of `url`, then applies the migrations to it. */
export async function prepareDatabase(url: string): Promise<void> {
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  const name = new URL(url).pathname.slice(1);
  await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await client.query(`CREATE DATABASE "${name}"`);
  await client.end();
  execFileSync("npx", ["prisma", "migrate", "deploy"], { stdio: "pipe", env: { ...process.env, DATABASE_URL: url, CHECKPOINT_DISABLE: "1" } });
}

/** The URL of a sibling database of `url`, named with `suffix`. */
export function siblingDatabase(url: string, suffix: string): string {
  const u = new URL(url);
  u.pathname = `${u.pathname}_${suffix}`;
  return u.toString();
}
