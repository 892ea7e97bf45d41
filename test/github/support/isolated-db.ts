import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import pg from "pg";
import { createDb, type Db } from "../../../lib/store/kernel/db";

const ROOT = resolve(__dirname, "../../..");
const BASE_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/atelier_test";

/**
 * A Db on a schema of its own in the test database, with every checked-in migration applied.
 * GitHub ids (installations, repositories) are the simulator's, which every simulator numbers
 * from the same start: one schema per test file keeps files that run at once apart.
 */
export async function isolatedDb(max = 10): Promise<Db & { schema: string }> {
  const schema = `gh_${randomBytes(5).toString("hex")}`;
  const admin = new pg.Client({ connectionString: BASE_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA "${schema}"`);
    await admin.query(`SET search_path TO "${schema}"`);
    const dir = join(ROOT, "prisma/migrations");
    for (const name of readdirSync(dir).filter((n) => /^\d/.test(n)).sort()) {
      await admin.query(readFileSync(join(dir, name, "migration.sql"), "utf8"));
    }
  } finally {
    await admin.end();
  }
  const url = new URL(BASE_URL);
  url.searchParams.set("options", `-c search_path=${schema}`);
  const db = createDb(url.toString(), max);
  return {
    ...db,
    schema,
    async close() {
      await db.close();
      const c = new pg.Client({ connectionString: BASE_URL });
      await c.connect();
      await c.query(`DROP SCHEMA "${schema}" CASCADE`).catch(() => undefined);
      await c.end();
    },
  };
}
