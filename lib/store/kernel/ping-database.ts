import type { Db } from "./db";
import { query, sql } from "./sql";

/** Whether Postgres answers on the process's pool (readiness asks; a failure throws). */
export async function pingDatabase(db: Db): Promise<void> {
  await query(db.pool, sql`SELECT 1`);
}
