// Creates the database named by DATABASE_URL when it is missing, then applies the migrations.
import { execFileSync } from "node:child_process";
import pg from "pg";
import { databaseUrl } from "../lib/store/kernel/database-url";

const url = new URL(databaseUrl());
const name = url.pathname.slice(1);
const admin = new URL(url);
admin.pathname = "/postgres";
const client = new pg.Client({ connectionString: admin.toString() });
try {
  await client.connect();
  const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
  if (!rowCount) {
    await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    console.error(`atelier: created database ${name}`);
  }
} catch (err) {
  console.error(`atelier: cannot prepare database ${name} at ${url.host}: ${(err as Error).message}`);
  process.exit(1);
} finally {
  await client.end().catch(() => undefined);
}
execFileSync("npx", ["prisma", "migrate", "deploy"], { stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, CHECKPOINT_DISABLE: "1" } });
