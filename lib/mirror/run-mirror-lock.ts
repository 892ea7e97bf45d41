import { advisoryKey } from "../store/locks";
import type { Db } from "../store/db";

/**
 * Runs `fn` holding the Run's mirror lock (a session advisory lock on a connection of its
 * own): two syncs of one Run never interleave, so neither creates what the other is creating.
 * A worker that dies drops its connection, and the lock with it.
 */
export async function withRunMirrorLock<T>(db: Db, runId: string, fn: () => Promise<T>): Promise<T> {
  const key = advisoryKey("run-mirror", runId).toString();
  const client = await db.pool.connect();
  // a connection whose lock state is unknown is closed rather than reused
  let clean = false;
  try {
    await client.query(`SELECT pg_advisory_lock(${key})`);
    try {
      return await fn();
    } finally {
      await client.query(`SELECT pg_advisory_unlock(${key})`);
      clean = true;
    }
  } finally {
    client.release(!clean);
  }
}
