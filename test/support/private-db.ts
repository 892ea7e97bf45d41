import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import pg from "pg";
import { createDb, type Db } from "../../lib/store/kernel/db";

/**
 * A database of its own, for the tests whose subject is global (the reconcile re-enqueues every
 * open Run, the sweep closes every orphaned Attempt): in the shared test database they would
 * act on the other files' Runs. Migrated by applying the checked-in migrations in order.
 */
export interface PrivateDb {
  url: string;
  db: Db;
  drop(): Promise<void>;
}

const MIGRATIONS = resolve(__dirname, "../../prisma/migrations");

export async function createPrivateDb(name: string): Promise<PrivateDb> {
  const base = new URL(process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_test");
  const dbName = `atelier_rt_${name}_${randomBytes(3).toString("hex")}`;
  const admin = new URL(base);
  admin.pathname = "/postgres";
  const adminClient = new pg.Client({ connectionString: admin.toString() });
  await adminClient.connect();
  await adminClient.query(`CREATE DATABASE "${dbName}"`);
  await adminClient.end();

  const url = new URL(base);
  url.pathname = `/${dbName}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  const dirs = readdirSync(MIGRATIONS)
    .filter((d) => statSync(join(MIGRATIONS, d)).isDirectory())
    .sort();
  for (const dir of dirs) await client.query(readFileSync(join(MIGRATIONS, dir, "migration.sql"), "utf8"));
  await client.end();

  const db = createDb(url.toString(), 10);
  return {
    url: url.toString(),
    db,
    async drop() {
      await db.close();
      const c = new pg.Client({ connectionString: admin.toString() });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
      await c.end();
    },
  };
}
